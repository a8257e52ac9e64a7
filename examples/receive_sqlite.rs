//! A [`Server`] on 127.0.0.1 that stores every message in a SQLite file and acknowledges it
//! only once it is committed there; it stops after COUNT stored messages, or at Ctrl-C or
//! SIGTERM, letting the commits under way finish and be answered.
//!
//! `cargo run --example receive_sqlite -- STORE.db [COUNT] [PORT]`: prints `listening on
//! ADDRESS` once bound (port 0, the default, takes a free one), one line per stored message
//! (its size and answer, never its bytes), and the totals at the end.

use mllp::server::{Server, ServerConfig, ServerEvent, Shutdown, SqliteSink};
use std::path::PathBuf;
use std::sync::Arc;
use tokio::signal::unix::{signal, SignalKind};

#[tokio::main(flavor = "current_thread")]
async fn main() {
    if let Err(e) = run().await {
        eprintln!("receive_sqlite: {e}");
        std::process::exit(2);
    }
}

async fn run() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let store = PathBuf::from(
        args.next()
            .ok_or("usage: receive_sqlite STORE.db [COUNT] [PORT]")?,
    );
    let count: Option<u64> = args.next().map(|n| n.parse()).transpose()?;
    let port: u16 = args.next().map(|p| p.parse()).transpose()?.unwrap_or(0);

    // `false`: no de-duplication by sender and control ID; every message is a row.
    let sink = SqliteSink::open(&store, false)?;
    let (events, mut received) = tokio::sync::mpsc::channel(64);
    let server = Server::builder(ServerConfig::default(), Arc::new(sink))
        .events(events)
        .build()?;
    let listener = tokio::net::TcpListener::bind(("127.0.0.1", port)).await?;
    println!("listening on {}", listener.local_addr()?);

    let shutdown = Shutdown::new();
    let serving = tokio::spawn({
        let shutdown = shutdown.clone();
        async move { server.run(listener, shutdown).await }
    });
    let mut interrupt = signal(SignalKind::interrupt())?;
    let mut terminate = signal(SignalKind::terminate())?;
    let mut stored = 0u64;
    while count.is_none_or(|count| stored < count) {
        tokio::select! {
            _ = interrupt.recv() => break,
            _ = terminate.recv() => break,
            event = received.recv() => match event {
                // A message answered positively, and not a repeat of one stored before: a row.
                Some(ServerEvent::Message { ack_code: Some(code), duplicate: false, bytes, .. })
                    if code.is_positive() =>
                {
                    stored += 1;
                    println!("stored message {stored}: {bytes} bytes, answered {code}");
                }
                Some(_) => {}
                None => break,
            },
        }
    }
    // Stop accepting; the server finishes what it holds. Events keep coming until it ends.
    shutdown.graceful.cancel();
    let draining = tokio::spawn(async move { while received.recv().await.is_some() {} });
    let stats = serving.await?;
    draining.await?;
    println!(
        "stopped: {stored} stored, {} committed in all",
        stats.committed
    );
    Ok(())
}
