//! The relay with an upstream that takes connections and never reads from them, while 1,000
//! downstream connections each push 32 messages of 64 KiB: what waits for the upstream counts
//! in the budget, in pass-through and with a queue; and with a mirror whose shadow never reads.

use crate::load::{flood, Load};
use crate::proc::{Proc, ONE_AT_A_TIME};
use tokio::net::TcpListener;

/// An upstream that takes connections and never reads from them; they stay open.
async fn stalled() -> (std::net::SocketAddr, tokio::task::JoinHandle<()>) {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let task = tokio::spawn(async move {
        let mut held = Vec::new();
        while let Ok((stream, _)) = listener.accept().await {
            held.push(stream);
        }
    });
    (addr, task)
}

async fn crowd(relay: &Proc, case: &str, load: Load) {
    let flooded = flood(relay.addr, load).await;
    eprintln!(
        "{case}: {} MiB sent, {} answers",
        flooded.sent >> 20,
        flooded.answers
    );
    relay.assert_peak_within(case);
    drop(flooded);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pass_through_with_an_upstream_that_does_not_read() {
    let _alone = ONE_AT_A_TIME.lock().await;
    let (upstream, holder) = stalled().await;
    let relay = Proc::relay(upstream, &[]);
    // A minute of it: each connection is answered AE when its messages cannot be written
    // upstream in time, and sends more; what is held must not grow with the rounds.
    let load = Load {
        messages: 64,
        seconds: 60,
        ..Load::CROWD
    };
    crowd(&relay, "relay pass-through", load).await;
    holder.abort();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "long: run with --ignored"]
async fn a_queue_with_an_upstream_that_does_not_read() {
    let _alone = ONE_AT_A_TIME.lock().await;
    let dir = tempfile::tempdir().unwrap();
    let queue = dir.path().join("q.db");
    let (upstream, holder) = stalled().await;
    let relay = Proc::relay(upstream, &["--queue", queue.to_str().unwrap()]);
    crowd(&relay, "relay --queue", Load::CROWD).await;
    holder.abort();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "long: run with --ignored"]
async fn a_mirror_whose_shadow_does_not_read() {
    let _alone = ONE_AT_A_TIME.lock().await;
    let upstream = Proc::listen(&[]);
    let (shadow, holder) = stalled().await;
    let shadow = shadow.to_string();
    let relay = Proc::relay(upstream.addr, &["--mirror", &shadow]);
    // Every message answered by the upstream, every copy held for the shadow until the mirror's
    // queue or its share of the budget is full: the copies count in the budget.
    crowd(&relay, "relay --mirror, shadow not reading", Load::CROWD).await;
    holder.abort();
}
