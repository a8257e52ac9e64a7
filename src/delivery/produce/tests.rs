//! The producer looks for a stop at every wait, not once per chunk of input.

use crate::client::{Client, ClientOptions, Fate, FateCause, OnBackpressure, Population, Window};
use crate::delivery::{Input, Run, RunEvent, RunOptions};
use crate::input::{InputOptions, InputSet, InputSource};
use crate::server::{DiscardSink, Server, ServerConfig, Shutdown};
use crate::transport::TcpConnector;
use std::io::Write;
use std::sync::Arc;

/// A whole input in one chunk, a window of 4, a stop after 10 outcomes: the producer, which
/// waits for room every few messages, hands over none after it; the rest is reported
/// interrupted.
#[tokio::test(flavor = "current_thread")]
async fn a_stop_in_the_middle_of_a_chunk_hands_over_no_more() {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    let server = Server::builder(ServerConfig::default(), Arc::new(DiscardSink))
        .build()
        .unwrap();
    let shutdown = Shutdown::new();
    tokio::spawn({
        let shutdown = shutdown.clone();
        async move { server.run(listener, shutdown).await }
    });
    let mut file = tempfile::NamedTempFile::new().unwrap();
    for n in 1..=500 {
        write!(
            file,
            "MSH|^~\\&|A|B|C|D|20240101||ADT^A01|M{n}|P|2.5\rPID|1||{n}\r"
        )
        .unwrap();
    }
    let sources = vec![InputSource::File(file.path().to_path_buf())];
    let set = InputSet::prepare(sources, InputOptions::default()).unwrap();
    set.validate().unwrap();
    let options = ClientOptions {
        window: Window {
            count: Some(4),
            bytes: None,
        },
        on_backpressure: OnBackpressure::Wait,
        ..ClientOptions::default()
    };
    let connector = Arc::new(TcpConnector::new("127.0.0.1", port));
    let client = Client::new(connector, options).unwrap();
    let mut run = Run::start(client, Input::from_set(set, false), RunOptions::default());
    let (mut outcomes, mut handed_over_after_the_stop) = (0, 0);
    while let Some(event) = run.next().await {
        if let RunEvent::Outcome(outcome) = event {
            outcomes += 1;
            // The client's own word for a send it took in while the run was stopping.
            let cancelled = FateCause::Cancelled;
            if matches!(outcome.fate, Fate::NeverDelivered { cause } if cause == cancelled) {
                handed_over_after_the_stop += 1;
            }
            if outcomes == 10 {
                run.controls().stop();
            }
        }
    }
    let summary = run.finish().await;
    shutdown.graceful.cancel();
    assert_eq!(outcomes, 500);
    // One may have been waiting for room when the stop came; none was handed over after it.
    assert!(
        handed_over_after_the_stop <= 1,
        "{handed_over_after_the_stop}"
    );
    assert!(summary.totals.adds_up());
    let by = |p| summary.totals.count(p);
    // The ten, what was in the window, and what the order queue held when the stop came.
    assert!(by(Population::Accepted) < 40, "{:?}", summary.totals);
    assert_eq!(
        by(Population::Accepted) + by(Population::NeverDelivered),
        500
    );
}
