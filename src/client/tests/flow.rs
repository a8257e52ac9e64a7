//! The flow: correlation, ACK timeouts, reconnect fates, backpressure, cancellation, drain.

use super::harness::*;
use crate::ack::AckCode;
use crate::client::*;
use std::sync::Arc;
use std::time::Duration;
use Population::*;

fn control_id() -> ClientOptions {
    ClientOptions {
        correlation: Correlation::ControlId,
        ..Default::default()
    }
}

fn with_reconnect(o: ClientOptions) -> ClientOptions {
    ClientOptions {
        reconnect: Reconnect {
            enabled: true,
            strategy: Arc::new(ExponentialBackoff::seeded(BackoffConfig::default(), 1)),
        },
        ..o
    }
}

async fn send_all(client: &Client, ids: impl IntoIterator<Item = String>) -> Vec<SendHandle> {
    let mut hs = vec![];
    for id in ids {
        hs.push(client.send(msg(&id, "")).await);
    }
    hs
}

#[tokio::test(start_paused = true)]
async fn fifo_credits_in_order_and_warns_on_mismatch() {
    let mut rig = rig(vec![], ClientOptions::default());
    let mut peer = rig.peer().await;
    let hs = send_all(&rig.client, ["1", "2", "3"].map(String::from)).await;
    assert_eq!(peer.read_ids(3).await, ["1", "2", "3"]);
    peer.write_ack("AA", "1").await;
    peer.write_ack("AE", "zzz").await;
    peer.write_ack("CA", "3").await;
    let fates = fates(hs).await;
    assert_eq!(fates[0].ack_code(), Some(AckCode::AA));
    assert_eq!(fates[1].population(), Negative);
    assert_eq!(fates[2].population(), Accepted);
    assert!(fates[0].ack().unwrap().bytes().starts_with(b"MSH"));
    assert_eq!(
        warnings(&rig.drain_events()),
        ["MLLP_ACK_CONTROL_ID_MISMATCH"]
    );
    assert_accounts(&rig.client, &fates);
    assert_eq!(rig.client.stats().acked_by_code.get("AA"), Some(&1));
}

#[tokio::test(start_paused = true)]
async fn fifo_enhanced_send_settles_on_first_reply_with_warning() {
    let mut rig = rig(vec![], ClientOptions::default());
    let mut peer = rig.peer().await;
    let h = rig.client.send(msg("1", "AL")).await;
    peer.read().await;
    peer.write_ack("CA", "1").await;
    let fate = h.await;
    assert_eq!(fate.population(), Accepted);
    assert_eq!(fate.ack_code(), Some(AckCode::CA));
    assert_eq!(
        warnings(&rig.drain_events()),
        ["MLLP_ACK_TWO_PHASE_UNAVAILABLE"]
    );
}

#[tokio::test(start_paused = true)]
async fn control_id_out_of_order_unmatched_and_late() {
    let options = ClientOptions {
        ack_timeout: Duration::from_secs(5),
        ..control_id()
    };
    let mut rig = rig(vec![], options);
    let mut peer = rig.peer().await;
    let hs = send_all(&rig.client, ["a", "b", "c"].map(String::from)).await;
    peer.read_ids(3).await;
    peer.write_ack("AA", "c").await;
    peer.write_ack("AR", "a").await;
    peer.write_ack("AA", "nobody").await;
    tokio::time::sleep(Duration::from_secs(6)).await;
    peer.write_ack("AA", "b").await;
    let fates = fates(hs).await;
    assert_eq!(fates[0].ack_code(), Some(AckCode::AR));
    assert_eq!(fates[1].population(), UnknownFate);
    assert_eq!(fates[1].cause(), Some("ack-timeout"));
    assert_eq!(fates[2].ack_code(), Some(AckCode::AA));
    tokio::task::yield_now().await;
    let _ = rig.client.close().await;
    assert_eq!(
        warnings(&rig.drain_events()),
        ["MLLP_ACK_UNMATCHED_CONTROL_ID", "MLLP_ACK_AFTER_TIMEOUT"]
    );
    assert_accounts(&rig.client, &fates);
}

#[tokio::test(start_paused = true)]
async fn control_id_refuses_duplicate_in_flight_id_before_writing() {
    let mut rig = rig(vec![], control_id());
    let mut peer = rig.peer().await;
    let first = rig.client.send(msg("same", "")).await;
    let second = rig.client.send(msg("same", "")).await;
    let fate = second.await;
    assert_eq!(fate.population(), NeverDelivered);
    assert_eq!(fate.cause(), Some("duplicate-control-id"));
    peer.read().await;
    peer.write_ack("AA", "same").await;
    assert_eq!(first.await.population(), Accepted);
}

#[tokio::test(start_paused = true)]
async fn enhanced_ca_then_aa_and_commit_notification() {
    let mut rig = rig(vec![], control_id());
    let mut peer = rig.peer().await;
    let mut h = rig.client.send(msg("e1", "AL")).await;
    peer.read().await;
    peer.write_ack("CA", "e1").await;
    let commit = h.committed().await.expect("a commit");
    assert_eq!(commit.code, AckCode::CA);
    peer.write_ack("AA", "e1").await;
    let fate = h.await;
    assert_eq!(fate.population(), Accepted);
    assert_eq!(fate.ack_code(), Some(AckCode::AA));
}

#[tokio::test(start_paused = true)]
async fn enhanced_ca_then_app_ack_timeout_is_committed_only() {
    let options = ClientOptions {
        app_ack_timeout: Duration::from_secs(10),
        ack_timeout: Duration::from_secs(3),
        ..control_id()
    };
    let mut rig = rig(vec![], options);
    let mut peer = rig.peer().await;
    let h = rig.client.send(msg("e1", "AL")).await;
    peer.read().await;
    tokio::time::sleep(Duration::from_secs(2)).await;
    peer.write_ack("CA", "e1").await;
    let start = tokio::time::Instant::now();
    let fate = h.await;
    assert!(start.elapsed() >= Duration::from_secs(9));
    assert_eq!(fate.population(), CommittedOnly);
    assert_eq!(fate.cause(), Some("app-ack-timeout"));
}

#[tokio::test(start_paused = true)]
async fn enhanced_ce_and_cr_fail_at_once() {
    let mut rig = rig(vec![], control_id());
    let mut peer = rig.peer().await;
    let hs = vec![
        rig.client.send(msg("x", "AL")).await,
        rig.client.send(msg("y", "AL")).await,
    ];
    peer.read_ids(2).await;
    peer.write_ack("CE", "x").await;
    peer.write_ack("CR", "y").await;
    let fates = fates(hs).await;
    assert_eq!(fates[0].ack_code(), Some(AckCode::CE));
    assert_eq!(fates[1].ack_code(), Some(AckCode::CR));
    assert!(fates.iter().all(|f| f.population() == Negative));
}

#[tokio::test(start_paused = true)]
async fn fifo_ack_timeout_closes_and_fails_the_rest() {
    let options = ClientOptions {
        ack_timeout: Duration::from_secs(5),
        pipeline: true,
        ..with_reconnect(ClientOptions::default())
    };
    let mut rig = rig(vec![], options);
    let mut peer = rig.peer().await;
    rig.wait_state(State::Connected).await;
    let hs = send_all(&rig.client, ["1", "2"].map(String::from)).await;
    peer.read_ids(2).await;
    let fates = fates(hs).await;
    assert_eq!(fates[0].cause(), Some("ack-timeout"));
    assert_eq!(fates[0].population(), UnknownFate);
    assert_eq!(fates[1].cause(), Some("in-flight-orphan"));
    assert_eq!(fates[1].population(), UnknownFate);
    let events = rig.wait_state(State::Connected).await;
    assert!(events.iter().any(|e| matches!(
        e,
        ClientEvent::Error {
            cause: crate::cause::Cause::AckTimeout,
            ..
        }
    )));
    assert_eq!(rig.client.stats().timed_out, 1);
}

/// Peer ACKs every message but drops the link after each 100th frame it reads.
async fn flaky_run(options: ClientOptions, total: usize) -> (Vec<Fate>, usize, Rig) {
    let mut rig = rig(vec![], with_reconnect(options));
    let mut frames_seen = 0;
    let client = &rig.client;
    let mut handles = vec![];
    for i in 0..total {
        handles.push(client.send(msg(&format!("m{i}"), "")).await);
    }
    let mut connections = 0;
    let peers = &mut rig.peers;
    let serve = async {
        while let Some(mut peer) = peers.recv().await {
            connections += 1;
            let mut on_this = 0;
            while let Some(p) = peer.read().await {
                frames_seen += 1;
                on_this += 1;
                if on_this == 100 {
                    break;
                }
                let cid = crate::hl7::scan(&p)
                    .msh
                    .unwrap()
                    .control_id()
                    .unwrap()
                    .to_vec();
                peer.write_ack("AA", std::str::from_utf8(&cid).unwrap())
                    .await;
            }
        }
    };
    let fates = tokio::select! {
        f = fates(handles) => f,
        () = serve => unreachable!(),
    };
    let _ = frames_seen;
    (fates, connections, rig)
}

#[tokio::test(start_paused = true)]
async fn peer_dropping_every_100_fifo_orphans_and_never_written() {
    // One at a time, so the drop finds one written send and the rest still queued.
    let options = ClientOptions {
        window: Window {
            count: Some(1000),
            bytes: None,
        },
        pipeline: false,
        ..Default::default()
    };
    let (fates, _, rig) = flaky_run(options, 250).await;
    let pops = populations(&fates);
    assert_eq!(pops[&Accepted], 99);
    assert_eq!(pops[&UnknownFate], 1);
    assert_eq!(fates[99].cause(), Some("in-flight-orphan"));
    assert_eq!(pops[&NeverDelivered], 150);
    assert!(fates[100..]
        .iter()
        .all(|f| f.cause() == Some("fifo-unsafe")));
    assert_accounts(&rig.client, &fates);
}

#[tokio::test(start_paused = true)]
async fn peer_dropping_every_100_control_id_resends_everything() {
    let options = ClientOptions {
        window: Window {
            count: Some(1000),
            bytes: None,
        },
        ..control_id()
    };
    let (fates, connections, rig) = flaky_run(options, 250).await;
    assert!(connections >= 3);
    assert_eq!(populations(&fates).get(&Accepted), Some(&250));
    assert_accounts(&rig.client, &fates);
}

#[tokio::test(start_paused = true)]
async fn control_id_reconnect_fails_committed_enhanced_send_as_connection_lost() {
    let mut rig = rig(vec![], with_reconnect(control_id()));
    let mut peer = rig.peer().await;
    let committed = rig.client.send(msg("e", "AL")).await;
    let plain = rig.client.send(msg("p", "")).await;
    peer.read_ids(2).await;
    peer.write_ack("CA", "e").await;
    tokio::task::yield_now().await;
    drop(peer);
    let fate = committed.await;
    assert_eq!(fate.population(), CommittedOnly);
    assert_eq!(fate.cause(), Some("connection-lost"));
    let mut peer = rig.peer().await;
    assert_eq!(peer.read_ids(1).await, ["p"]);
    peer.write_ack("AA", "p").await;
    assert_eq!(plain.await.population(), Accepted);
}

#[tokio::test(start_paused = true)]
async fn backpressure_reject_by_count_and_bytes() {
    let by_count = ClientOptions {
        window: Window {
            count: Some(2),
            bytes: None,
        },
        ..Default::default()
    };
    let mut rig1 = rig(vec![], by_count);
    let _peer = rig1.peer().await;
    let hs = send_all(&rig1.client, ["1", "2", "3"].map(String::from)).await;
    let mut hs = hs.into_iter();
    let _a = hs.next();
    let _b = hs.next();
    let third = hs.next().unwrap().await;
    assert_eq!(
        third,
        Fate::Refused {
            reason: Refusal::WindowFull
        }
    );

    let len = msg("1", "").len();
    let by_bytes = ClientOptions {
        window: Window {
            count: Some(100),
            bytes: Some(len * 2 + 1),
        },
        ..Default::default()
    };
    let mut rig2 = rig(vec![], by_bytes);
    let _peer = rig2.peer().await;
    let hs = send_all(&rig2.client, ["1", "2", "3"].map(String::from)).await;
    let third = hs.into_iter().nth(2).unwrap().await;
    assert_eq!(third.population(), Refused);
}

#[tokio::test(start_paused = true)]
async fn backpressure_wait_gets_room_or_times_out() {
    let options = ClientOptions {
        window: Window {
            count: Some(1),
            bytes: None,
        },
        on_backpressure: OnBackpressure::Wait,
        ack_timeout: Duration::from_secs(5),
        ..Default::default()
    };
    let mut rig = rig(vec![], options);
    let mut peer = rig.peer().await;
    let first = rig.client.send(msg("1", "")).await;
    let client = &rig.client;
    let (second, ()) = tokio::join!(client.send(msg("2", "")), async {
        peer.read().await;
        peer.write_ack("AA", "1").await;
    });
    assert_eq!(first.await.population(), Accepted);
    peer.read().await;
    // The window is full again and nobody answers: the wait ends at the ACK timeout.
    let third = rig.client.send(msg("3", "")).await.await;
    assert_eq!(
        third,
        Fate::Refused {
            reason: Refusal::WaitTimedOut
        }
    );
    assert_eq!(second.await.population(), UnknownFate);
}

#[tokio::test(start_paused = true)]
async fn pipeline_off_keeps_exactly_one_in_flight() {
    let options = ClientOptions {
        pipeline: false,
        ..Default::default()
    };
    let mut rig = rig(vec![], options);
    let mut peer = rig.peer().await;
    let hs = send_all(&rig.client, ["1", "2", "3"].map(String::from)).await;
    for id in ["1", "2", "3"] {
        assert_eq!(peer.read_ids(1).await, [id]);
        tokio::time::sleep(Duration::from_millis(10)).await;
        assert_eq!(rig.client.stats().in_flight, 1);
        assert_eq!(
            rig.client.stats().queue_depth,
            3 - id.parse::<usize>().unwrap()
        );
        peer.write_ack("AA", id).await;
    }
    assert!(fates(hs).await.iter().all(|f| f.population() == Accepted));
}

#[tokio::test(start_paused = true)]
async fn cancellation_unwritten_and_written() {
    let options = ClientOptions {
        pipeline: false,
        ..Default::default()
    };
    let mut rig = rig(vec![], options);
    let mut peer = rig.peer().await;
    let written = rig.client.send(msg("1", "")).await;
    let queued = rig.client.send(msg("2", "")).await;
    peer.read().await;
    tokio::task::yield_now().await;
    queued.cancel();
    written.cancel();
    let fates = fates(vec![written, queued]).await;
    assert_eq!(fates[0].population(), UnknownFate);
    assert_eq!(fates[1].population(), NeverDelivered);
    assert!(fates.iter().all(|f| f.cause() == Some("cancelled")));
    // The cancelled send's ACK is consumed, not credited to the next send.
    let next = rig.client.send(msg("3", "")).await;
    peer.write_ack("AA", "1").await;
    peer.read().await;
    peer.write_ack("AE", "3").await;
    assert_eq!(next.await.ack_code(), Some(AckCode::AE));
}

#[tokio::test(start_paused = true)]
async fn drain_returns_when_last_ack_arrives() {
    let mut rig = rig(vec![], ClientOptions::default());
    let mut peer = rig.peer().await;
    let hs = send_all(&rig.client, ["1", "2"].map(String::from)).await;
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
    let mut committed = rig1.client.send(msg("c", "AL")).await;
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
    let hs = send_all(&rig.client, ["1", "2"].map(String::from)).await;
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
