//! FIFO correlation against receivers that repeat ACKs: a repeat is never credited to a later send.

use super::harness::*;
use crate::ack::AckCode;
use crate::client::*;
use std::time::Duration;
use Population::*;

fn fifo() -> ClientOptions {
    ClientOptions {
        correlation: Correlation::Fifo,
        ..Default::default()
    }
}

fn msa(fate: &Fate) -> String {
    let ack = String::from_utf8_lossy(fate.ack().expect("an ACK").bytes()).into_owned();
    let seg = ack.split('\r').find(|s| s.starts_with("MSA|")).unwrap();
    seg.split('|').take(3).collect::<Vec<_>>().join("|")
}

#[tokio::test(start_paused = true)]
async fn fifo_skips_repeated_acks_and_credits_the_matching_one() {
    let mut rig = rig(vec![], fifo());
    let mut peer = rig.peer().await;
    let first = rig.client.send(msg("1", "")).await;
    peer.read().await;
    peer.write_ack("AA", "1").await;
    assert_eq!(first.await.ack_code(), Some(AckCode::AA));
    // A receiver that answers every earlier message of the connection again with each new one.
    let second = rig.client.send(msg("2", "")).await;
    peer.read().await;
    peer.write_ack("AA", "1").await;
    peer.write_ack("AE", "2").await;
    let fate = second.await;
    assert_eq!(fate.population(), Negative);
    assert_eq!(msa(&fate), "MSA|AE|2");
    assert_eq!(
        warnings(&rig.drain_events()),
        ["MLLP_ACK_UNMATCHED_CONTROL_ID"]
    );
}

#[tokio::test(start_paused = true)]
async fn fifo_repeat_without_the_real_ack_is_unknown_fate_not_accepted() {
    let options = ClientOptions {
        ack_timeout: Duration::from_secs(5),
        ..fifo()
    };
    let mut rig = rig(vec![], options);
    let mut peer = rig.peer().await;
    let hs = send_all(&rig.client, ["1", "2", "3"]).await;
    assert_eq!(peer.read_ids(3).await, ["1", "2", "3"]);
    peer.write_ack("AA", "1").await;
    peer.write_ack("AA", "1").await;
    peer.write_ack("AA", "zzz").await;
    peer.write_ack("AA", "1").await;
    let fates = fates(hs).await;
    assert_eq!(msa(&fates[0]), "MSA|AA|1");
    // An ACK naming no send of ours is still credited in order, with the mismatch warning.
    assert_eq!(fates[1].population(), Accepted);
    assert_eq!(msa(&fates[1]), "MSA|AA|zzz");
    assert_eq!(fates[2].population(), UnknownFate);
    assert_eq!(fates[2].cause(), Some("ack-timeout"));
    assert_eq!(
        warnings(&rig.drain_events()),
        [
            "MLLP_ACK_UNMATCHED_CONTROL_ID",
            "MLLP_ACK_CONTROL_ID_MISMATCH",
            "MLLP_ACK_UNMATCHED_CONTROL_ID"
        ]
    );
    assert_accounts(&rig.client, &fates);
}

#[tokio::test(start_paused = true)]
async fn fifo_same_control_id_twice_is_credited_to_each() {
    let mut rig = rig(vec![], fifo());
    let mut peer = rig.peer().await;
    let hs = send_all(&rig.client, ["same", "same"]).await;
    peer.read_ids(2).await;
    peer.write_ack("AA", "same").await;
    peer.write_ack("AE", "same").await;
    let fates = fates(hs).await;
    assert_eq!(fates[0].ack_code(), Some(AckCode::AA));
    assert_eq!(fates[1].ack_code(), Some(AckCode::AE));
    assert!(warnings(&rig.drain_events()).is_empty());
}
