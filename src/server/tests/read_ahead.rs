//! Input that arrives while a commit is under way: read ahead, then answered without waiting
//! for more.

use super::*;

/// Frame `a`, then (while `a` commits) frame `b` and optionally the end of the stream.
async fn read_ahead_case(end_stream: bool) -> Harness {
    let mut h = committing(Duration::from_secs(2), "a").await;
    h.send(&frame(&msg("b", ""))).await;
    if end_stream {
        h.client.shutdown().await.unwrap();
    }
    // Bounded so a lost frame fails the test instead of hanging it (the clock is paused).
    let acks = tokio::time::timeout(Duration::from_secs(60), async {
        (h.ack().await, h.ack().await)
    })
    .await
    .expect("both frames answered without further input");
    assert_eq!(
        acks,
        (
            Some(("AA".into(), "a".into())),
            Some(("AA".into(), "b".into()))
        )
    );
    h
}

#[tokio::test(start_paused = true)]
async fn a_frame_read_during_a_commit_is_answered_without_more_input() {
    read_ahead_case(false).await;
}

#[tokio::test(start_paused = true)]
async fn a_frame_and_end_of_stream_read_during_a_commit_are_both_honoured() {
    let mut h = read_ahead_case(true).await;
    assert_eq!(h.ack().await, None);
    let events = h.events_until_close().await;
    assert_eq!(closed_cause(&events), (Cause::PeerClosed, None));
    assert_eq!(h.sink.committed.lock().unwrap().len(), 2);
}
