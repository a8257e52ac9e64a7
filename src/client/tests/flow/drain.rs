//! Closing: drain until the last ACK or the drain timeout, a link failure cutting it short,
//! destroy and drop.

use super::super::harness::*;
use super::control_id;
use crate::client::*;
use std::time::Duration;
use Population::*;

#[tokio::test(start_paused = true)]
async fn drain_returns_when_last_ack_arrives() {
    let mut rig = rig(vec![], ClientOptions::default());
    let mut peer = rig.peer().await;
    let hs = send_all(&rig.client, ["1", "2"]).await;
    peer.read_ids(2).await;
    let start = tokio::time::Instant::now();
    let client = &rig.client;
    let (report, ()) = tokio::join!(client.close(), async {
        tokio::time::sleep(Duration::from_millis(50)).await;
        peer.write_ack("AA", "1").await;
        peer.write_ack("AA", "2").await;
    });
    assert!(report.is_clean());
    assert!(start.elapsed() < Duration::from_secs(1));
    assert!(fates(hs).await.iter().all(|f| f.population() == Accepted));
    let events = rig.drain_events();
    assert_eq!(
        states(&events)[1..],
        [
            (State::Connected, State::Draining),
            (State::Draining, State::Closed)
        ]
    );
}

#[tokio::test(start_paused = true)]
async fn drain_reports_each_population_after_timeout() {
    // Pipelined, control ID: one committed (CA, no app ACK), one written and unanswered.
    let options = ClientOptions {
        drain_timeout: Duration::from_secs(2),
        ..control_id()
    };
    let mut rig1 = rig(vec![], options);
    let mut peer = rig1.peer().await;
    let mut committed = rig1.client.send(msg2("c", "AL", "AL")).await;
    let written = rig1.client.send(msg("w", "")).await;
    peer.read_ids(2).await;
    peer.write_ack("CA", "c").await;
    committed.committed().await.unwrap();
    let start = tokio::time::Instant::now();
    let report = rig1.client.close().await;
    assert_eq!(start.elapsed(), Duration::from_secs(2));
    assert!(report.timed_out);
    assert_eq!(report.committed_only.len(), 1);
    assert_eq!(report.unknown_fate.len(), 1);
    match &report.unknown_fate[0].fate {
        Fate::UnknownFate { bytes, elapsed, .. } => {
            assert_eq!(*bytes, msg("w", "").len() + 3);
            assert!(*elapsed >= Duration::from_secs(2));
        }
        other => panic!("{other}"),
    }
    let fates1 = fates(vec![committed, written]).await;
    assert_eq!(
        fates1.iter().map(|f| f.population()).collect::<Vec<_>>(),
        [CommittedOnly, UnknownFate]
    );
    assert_accounts(&rig1.client, &fates1);

    // One at a time: the second is still held inside the client when close() comes.
    let options = ClientOptions {
        drain_timeout: Duration::from_secs(2),
        pipeline: false,
        ..Default::default()
    };
    let mut rig2 = rig(vec![], options);
    let mut peer = rig2.peer().await;
    let written = rig2.client.send(msg("w", "")).await;
    let queued = rig2.client.send(msg("q", "")).await;
    peer.read().await;
    let report = rig2.client.close().await;
    assert_eq!(report.never_delivered.len(), 1);
    assert_eq!(report.unknown_fate.len(), 1);
    let fates2 = fates(vec![written, queued]).await;
    assert_eq!(
        fates2.iter().map(|f| f.population()).collect::<Vec<_>>(),
        [UnknownFate, NeverDelivered]
    );
    assert_accounts(&rig2.client, &fates2);
}

#[tokio::test(start_paused = true)]
async fn drain_cut_short_by_link_failure() {
    let mut rig = rig(vec![], ClientOptions::default());
    let mut peer = rig.peer().await;
    let h = rig.client.send(msg("1", "")).await;
    peer.read().await;
    let client = &rig.client;
    let (report, ()) = tokio::join!(client.close(), async {
        tokio::time::sleep(Duration::from_millis(10)).await;
        drop(peer);
    });
    assert!(report.link_failed);
    assert_eq!(report.unknown_fate.len(), 1);
    assert_eq!(h.await.population(), UnknownFate);
    let events = rig.drain_events();
    assert_eq!(
        states(&events)[1..],
        [
            (State::Connected, State::Draining),
            (State::Draining, State::Disconnected),
            (State::Disconnected, State::Closed)
        ]
    );
}

#[tokio::test(start_paused = true)]
async fn destroy_and_drop_settle_everything() {
    let options = ClientOptions {
        pipeline: false,
        ..Default::default()
    };
    let mut rig = rig(vec![], options);
    let mut peer = rig.peer().await;
    let hs = send_all(&rig.client, ["1", "2"]).await;
    peer.read().await;
    let report = rig.client.destroy().await;
    assert_eq!(report.unknown_fate.len() + report.never_delivered.len(), 2);
    let fates = fates(hs).await;
    assert!(fates.iter().all(|f| f.cause() == Some("destroyed")));
    assert_eq!(
        populations(&fates),
        [(UnknownFate, 1), (NeverDelivered, 1)]
            .into_iter()
            .collect()
    );
    assert_accounts(&rig.client, &fates);

    let mut rig = rig_dropped().await;
    let h = rig.0.send(msg("1", "")).await;
    drop(rig.0);
    let _ = rig.1.recv().await;
    assert_eq!(h.await.cause(), Some("client-dropped"));
}

async fn rig_dropped() -> (Client, tokio::sync::mpsc::UnboundedReceiver<Peer>) {
    let r = rig(vec![], ClientOptions::default());
    (r.client, r.peers)
}
