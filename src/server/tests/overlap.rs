//! A sink that lets a connection's commits overlap: the next batch is committed while the one
//! before waits, and the answers still go out in arrival order, each after its own commit.

use super::*;
use tokio::sync::oneshot;

/// Holds each batch until the test lets it go, with the result given then; says which batches
/// (by their first control ID) it was handed, in order.
#[derive(Default)]
struct Gated {
    handed: Mutex<Vec<String>>,
    gates: Mutex<Vec<(String, oneshot::Sender<bool>)>>,
    started: tokio::sync::Notify,
    overlapping: bool,
}

impl Sink for Gated {
    fn commit<'a>(&'a self, message: &'a Inbound) -> SinkFuture<'a, SinkResult> {
        Box::pin(async move {
            let mut results = self.commit_batch(std::slice::from_ref(message)).await;
            results.pop().unwrap()
        })
    }

    fn commit_batch<'a>(&'a self, messages: &'a [Inbound]) -> SinkFuture<'a, Vec<SinkResult>> {
        let id = messages[0].control_id_lossy().to_string();
        let (tx, rx) = oneshot::channel();
        Box::pin(async move {
            // Handed over at the first poll, as a sink that writes at once would be.
            self.handed.lock().unwrap().push(id.clone());
            self.gates.lock().unwrap().push((id, tx));
            self.started.notify_one();
            let result = match rx.await {
                Ok(true) => SinkResult::committed(),
                _ => SinkResult::failed("scripted failure"),
            };
            vec![result; messages.len()]
        })
    }

    fn overlapping(&self) -> bool {
        self.overlapping
    }
}

impl Gated {
    fn open(&self, id: &str, committed: bool) {
        let mut gates = self.gates.lock().unwrap();
        let at = gates
            .iter()
            .position(|(g, _)| g == id)
            .expect("a batch held");
        let _ = gates.remove(at).1.send(committed);
    }

    fn handed(&self) -> Vec<String> {
        self.handed.lock().unwrap().clone()
    }
}

fn gated(overlapping: bool) -> (Harness, Arc<Gated>) {
    let sink = Arc::new(Gated {
        overlapping,
        ..Gated::default()
    });
    let h = serving(ServerConfig::default(), sink.clone(), Arc::default());
    (h, sink)
}

/// Frame `a`, held by the sink; then frame `b`: handed to the sink while `a` waits?
async fn second_batch_handed(overlapping: bool) -> (Harness, Arc<Gated>, bool) {
    let (mut h, sink) = gated(overlapping);
    h.send(&frame(&msg("a", ""))).await;
    sink.started.notified().await;
    h.send(&frame(&msg("b", ""))).await;
    let handed = tokio::time::timeout(Duration::from_secs(5), sink.started.notified())
        .await
        .is_ok();
    (h, sink, handed)
}

#[tokio::test(start_paused = true)]
async fn the_next_batch_is_committed_while_the_one_before_waits() {
    let (mut h, sink, handed) = second_batch_handed(true).await;
    assert!(handed, "b handed to the sink while a waits");
    assert_eq!(sink.handed(), ["a", "b"]);
    // `b` committed first: its answer still waits for `a`'s.
    sink.open("b", true);
    let early = tokio::time::timeout(Duration::from_secs(5), h.ack()).await;
    assert!(early.is_err(), "nothing answered before a: {early:?}");
    sink.open("a", true);
    assert_eq!(h.ack().await, Some(("AA".into(), "a".into())));
    assert_eq!(h.ack().await, Some(("AA".into(), "b".into())));
}

#[tokio::test(start_paused = true)]
async fn a_sink_that_does_not_allow_it_commits_one_batch_at_a_time() {
    let (mut h, sink, handed) = second_batch_handed(false).await;
    assert!(!handed, "b waits for a's answer");
    sink.open("a", true);
    assert_eq!(h.ack().await, Some(("AA".into(), "a".into())));
    sink.started.notified().await;
    sink.open("b", true);
    assert_eq!(h.ack().await, Some(("AA".into(), "b".into())));
}

#[tokio::test(start_paused = true)]
async fn each_overlapping_batch_is_answered_with_its_own_result() {
    let (mut h, sink, handed) = second_batch_handed(true).await;
    assert!(handed);
    sink.open("b", true);
    sink.open("a", false);
    assert_eq!(h.ack().await, Some(("AE".into(), "a".into())));
    assert_eq!(h.ack().await, Some(("AA".into(), "b".into())));
}

#[tokio::test(start_paused = true)]
async fn a_message_refused_without_a_commit_is_answered_after_the_batches_before_it() {
    let (mut h, sink) = gated(true);
    h.send(&frame(&msg("a", ""))).await;
    sink.started.notified().await;
    // No MSH: refused without reaching the sink, answered in its place.
    h.send(&frame(b"PID|1||42\r")).await;
    let early = tokio::time::timeout(Duration::from_secs(5), h.ack()).await;
    assert!(early.is_err(), "nothing answered before a: {early:?}");
    sink.open("a", true);
    assert_eq!(h.ack().await.map(|(code, _)| code), Some("AA".into()));
    let refused = h.ack().await.map(|(code, _)| code);
    assert!(
        matches!(refused.as_deref(), Some("AR" | "AE")),
        "{refused:?}"
    );
    assert_eq!(sink.handed(), ["a"]);
}

#[tokio::test(start_paused = true)]
async fn batches_in_flight_are_answered_before_the_end_of_the_stream_closes() {
    let (mut h, sink, handed) = second_batch_handed(true).await;
    assert!(handed);
    h.client.shutdown().await.unwrap();
    sink.open("a", true);
    sink.open("b", true);
    assert_eq!(h.ack().await, Some(("AA".into(), "a".into())));
    assert_eq!(h.ack().await, Some(("AA".into(), "b".into())));
    assert_eq!(h.ack().await, None);
    let events = h.events_until_close().await;
    assert_eq!(closed_cause(&events), (Cause::PeerClosed, None));
}

/// A peer sending one message at a time, its commit waiting: what the connection holds of the
/// budget meanwhile is about that message, not a read-ahead buffer made for the next one (which
/// would be made and freed again for every message).
#[tokio::test(start_paused = true)]
async fn one_message_at_a_time_holds_no_read_ahead_buffer_while_it_waits() {
    let sink = Arc::new(Gated {
        overlapping: true,
        ..Gated::default()
    });
    let server = Arc::new(
        Server::builder(ServerConfig::default(), sink.clone())
            .build()
            .unwrap(),
    );
    let (mut client, server_side) = tokio::io::duplex(64 * 1024);
    let shutdown = Shutdown::new();
    let task = {
        let (server, stop) = (Arc::clone(&server), shutdown.clone());
        tokio::spawn(async move { server.serve(server_side, "test-peer", &stop).await })
    };
    for id in ["a", "b"] {
        let message = frame(&msg(id, ""));
        client.write_all(&message).await.unwrap();
        sink.started.notified().await;
        tokio::time::sleep(Duration::from_millis(10)).await;
        let held = server.shared.limits.buffered();
        assert!(
            held < 4096,
            "{held} bytes held for a frame of {} bytes",
            message.len()
        );
        sink.open(id, true);
        let mut ack = [0u8; 512];
        let n = client.read(&mut ack).await.unwrap();
        assert!(ack[..n].windows(6).any(|w| w == b"MSA|AA"), "answered");
    }
    drop(client);
    task.await.unwrap();
}
