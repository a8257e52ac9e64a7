//! ACK timeouts and link drops: which fate each send gets, and what reconnecting resends.

use super::super::harness::*;
use super::{control_id, fifo, with_reconnect};
use crate::client::*;
use std::time::Duration;
use Population::*;

#[tokio::test(start_paused = true)]
async fn fifo_ack_timeout_closes_and_fails_the_rest() {
    let options = ClientOptions {
        ack_timeout: Duration::from_secs(5),
        pipeline: true,
        ..with_reconnect(fifo())
    };
    let mut rig = rig(vec![], options);
    let mut peer = rig.peer().await;
    rig.wait_state(State::Connected).await;
    let hs = send_all(&rig.client, ["1", "2"]).await;
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
async fn peer_dropping_every_100_fifo_orphans_the_written_and_delivers_the_rest() {
    // One at a time, so the drop finds one written send and the rest still queued: those wait
    // for the next connection.
    let options = ClientOptions {
        window: Window {
            count: Some(1000),
            bytes: None,
        },
        pipeline: false,
        ..fifo()
    };
    let (fates, _, rig) = flaky_run(options, 250).await;
    let pops = populations(&fates);
    assert_eq!(pops[&Accepted], 248);
    assert_eq!(pops[&UnknownFate], 2);
    assert_eq!(fates[99].cause(), Some("in-flight-orphan"));
    assert_eq!(fates[199].cause(), Some("in-flight-orphan"));
    assert_eq!(pops.get(&NeverDelivered), None);
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
    let committed = rig.client.send(msg2("e", "AL", "AL")).await;
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

/// A peer that reads each frame and drops the link: the client writes the send again on each
/// new connection `max_resends` times, then ends it as written and unanswered, never accepted.
/// (Before the poison rule gives up on it: see `engines`.)
#[tokio::test(start_paused = true)]
async fn control_id_rewrites_stop_at_max_resends() {
    for max_resends in [0, 3, DEFAULT_MAX_RESENDS] {
        let options = ClientOptions {
            max_resends,
            max_poison_closes: u32::MAX,
            ..with_reconnect(control_id())
        };
        let mut rig = rig(vec![], options);
        let mut handle = rig.client.send(msg("m", "")).await;
        let peers = &mut rig.peers;
        let mut reads = 0;
        let serve = async {
            for _ in 0..2 * DEFAULT_MAX_RESENDS {
                let mut peer = peers.recv().await.expect("a connection");
                if peer.read().await.is_some() {
                    reads += 1;
                }
            }
            panic!("still writing the send after {reads} writes");
        };
        let fate = tokio::select! {
            fate = &mut handle => fate,
            () = serve => unreachable!(),
        };
        assert_eq!(fate.population(), UnknownFate, "{fate}");
        assert_eq!(fate.cause(), Some("peer-closed"));
        assert_eq!(handle.writes(), max_resends + 1);
        assert_eq!(reads, max_resends + 1);
        assert_accounts(&rig.client, &[fate]);
    }
}
