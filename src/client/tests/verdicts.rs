//! What the sender concludes about a peer, on the paused clock: the mismatch verdict waits its
//! grace, a poison message is given up on after its closes while the rest goes on, and none of
//! it makes a written message never-delivered.

use super::harness::*;
use crate::client::*;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::time::Instant;
use Population::*;

fn reconnecting() -> ClientOptions {
    ClientOptions {
        reconnect: Reconnect {
            enabled: true,
            strategy: Arc::new(ExponentialBackoff::default()),
        },
        ..Default::default()
    }
}

#[tokio::test(start_paused = true)]
async fn a_reply_naming_the_message_within_the_grace_cancels_the_verdict() {
    let mut rig = rig(vec![], ClientOptions::default());
    let mut peer = rig.peer().await;
    let handle = rig.client.send(msg("1", "")).await;
    peer.read_ids(1).await;
    // A late ACK of an earlier message, then the right one just inside the grace.
    peer.write_ack("AA", "0").await;
    tokio::time::sleep(Duration::from_millis(999)).await;
    peer.write_ack("AA", "1").await;
    assert_eq!(handle.await.population(), Accepted);
    assert_eq!(rig.client.state(), State::Connected);
}

#[tokio::test(start_paused = true)]
async fn the_verdict_comes_once_the_evidence_stood_for_the_grace() {
    let mut rig = rig(vec![], ClientOptions::default());
    let mut peer = rig.peer().await;
    let handle = rig.client.send(msg("1", "")).await;
    peer.read_ids(1).await;
    peer.write_ack("AA", "0").await;
    let replied = Instant::now();
    let fate = handle.await;
    assert_eq!(fate.population(), UnknownFate);
    assert_eq!(fate.cause(), Some("ack-control-id-mismatch"));
    assert_eq!(replied.elapsed(), Duration::from_secs(1));
}

#[tokio::test(start_paused = true)]
async fn the_grace_ends_no_later_than_the_ack_timeout() {
    let options = ClientOptions {
        ack_timeout: Duration::from_millis(300),
        ..Default::default()
    };
    let mut rig = rig(vec![], options);
    let mut peer = rig.peer().await;
    let handle = rig.client.send(msg("1", "")).await;
    peer.read_ids(1).await;
    let written = Instant::now();
    tokio::time::sleep(Duration::from_millis(100)).await;
    peer.write_ack("AA", "0").await;
    let fate = handle.await;
    assert_eq!(fate.cause(), Some("ack-control-id-mismatch"), "{fate}");
    assert_eq!(written.elapsed(), Duration::from_millis(300));
}

/// Frames read, by connection.
type Seen = Arc<Mutex<Vec<Vec<String>>>>;

/// A peer that answers every message but `bad`, on which it drops the connection with
/// whatever it read behind it; what it read, by connection.
fn serve_poison(rig: &mut Rig, bad: &'static str) -> Seen {
    let seen = Seen::default();
    let log = seen.clone();
    let mut peers = std::mem::replace(&mut rig.peers, tokio::sync::mpsc::unbounded_channel().1);
    tokio::spawn(async move {
        while let Some(mut peer) = peers.recv().await {
            let at = {
                let mut log = log.lock().unwrap();
                log.push(vec![]);
                log.len() - 1
            };
            'link: while let Some(chunk) = peer.read_chunk().await {
                for frame in chunk {
                    let cid = cid_of(&frame);
                    log.lock().unwrap()[at].push(cid.clone());
                    if cid == bad {
                        break 'link;
                    }
                    peer.write_ack("AA", &cid).await;
                }
            }
        }
    });
    seen
}

#[tokio::test(start_paused = true)]
async fn a_poison_message_goes_alone_then_is_given_up_on_and_the_rest_goes_on() {
    let mut rig = rig(vec![], reconnecting());
    let handles = rig
        .client
        .send_many(["1", "2", "3", "4"].map(|id| msg(id, "")))
        .await;
    let seen = serve_poison(&mut rig, "2");
    let mut fates = vec![];
    for mut h in handles {
        let fate = (&mut h).await;
        fates.push((fate, h.writes()));
    }
    let seen = seen.lock().unwrap().clone();
    // Pipelined first; then the suspect alone, twice; then the rest, pipelined again.
    assert_eq!(seen[0], ["1", "2"], "{seen:?}");
    assert_eq!(seen[1], ["2"]);
    assert_eq!(seen[2], ["2"]);
    assert_eq!(seen[3], ["3", "4"]);
    let (poison, writes) = &fates[1];
    assert_eq!(poison.population(), UnknownFate, "{poison}");
    assert_eq!(poison.contract_cause(), Some("peer-closed"));
    assert_eq!(poison.cause_detail(), Some("poison"));
    assert_eq!(*writes, 3);
    for i in [0, 2, 3] {
        assert_eq!(fates[i].0.population(), Accepted, "{}", fates[i].0);
    }
    assert!(!warnings(&rig.drain_events()).contains(&"MLLP_PEER_NO_PIPELINING"));
}

#[tokio::test(start_paused = true)]
async fn how_many_closes_make_a_poison_message_is_an_option() {
    let options = ClientOptions {
        max_poison_closes: 1,
        ..reconnecting()
    };
    let mut rig = rig(vec![], options);
    let handles = rig
        .client
        .send_many(["1", "2", "3"].map(|id| msg(id, "")))
        .await;
    let seen = serve_poison(&mut rig, "2");
    let fates = fates(handles).await;
    let seen = seen.lock().unwrap().clone();
    assert_eq!(seen, [vec!["1", "2"], vec!["2"], vec!["3"]]);
    assert_eq!(fates[1].cause(), Some("poison"));
    assert_eq!(fates[2].population(), Accepted);
}
