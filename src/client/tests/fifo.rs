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

/// FIFO, each ACK awaited for `ack_timeout`.
fn fifo_within(ack_timeout: Duration) -> ClientOptions {
    ClientOptions {
        ack_timeout,
        ..fifo()
    }
}

fn msa(fate: &Fate) -> String {
    let ack = String::from_utf8_lossy(fate.ack().expect("an ACK").bytes()).into_owned();
    let seg = ack.split('\r').find(|s| s.starts_with("MSA|")).unwrap();
    seg.split('|').take(3).collect::<Vec<_>>().join("|")
}

/// The link stopped for good with `unsolicited-ack`.
fn stopped_as_unsolicited(events: &[ClientEvent]) -> bool {
    transitions(events).iter().any(|(_, to, reason)| {
        *to == State::Closed && *reason == Reason::GaveUp(crate::cause::Cause::UnsolicitedAck)
    })
}

/// A receiver that answers every message twice: the second answer names a message already
/// answered; it is warned about and credits nothing, so each message gets its own answer.
#[tokio::test(start_paused = true)]
async fn fifo_a_second_answer_is_skipped_never_credited_to_the_next() {
    let mut rig = rig(vec![], fifo());
    let mut peer = rig.peer().await;
    let hs = send_all(&rig.client, ["1", "2"]).await;
    peer.read_ids(2).await;
    for (code, id) in [("AA", "1"), ("AA", "1"), ("AE", "2"), ("AE", "2")] {
        peer.write_ack(code, id).await;
    }
    let fates = fates(hs).await;
    assert_eq!(msa(&fates[0]), "MSA|AA|1");
    assert_eq!(msa(&fates[1]), "MSA|AE|2");
    tokio::task::yield_now().await;
    assert_eq!(
        warnings(&rig.drain_events()),
        ["MLLP_ACK_UNMATCHED_CONTROL_ID"; 2]
    );
    assert_accounts(&rig.client, &fates);
}

/// A receiver whose MSA-2 names the previous message: the first reply names no message of
/// ours and is credited in order; the second names one already answered, which FIFO cannot
/// tell from a repeat: it credits nothing, and the message waiting ends unknown fate (after its
/// ACK timeout), never credited with another's answer.
#[tokio::test(start_paused = true)]
async fn fifo_msa2_naming_the_previous_message_never_credits_the_wrong_one() {
    let mut rig = rig(vec![], fifo_within(Duration::from_secs(5)));
    let mut peer = rig.peer().await;
    let hs = send_all(&rig.client, ["1", "2"]).await;
    assert_eq!(peer.read_ids(2).await, ["1", "2"]);
    peer.write_ack("AA", "0").await;
    peer.write_ack("AE", "1").await;
    let fates = fates(hs).await;
    assert_eq!(msa(&fates[0]), "MSA|AA|0");
    assert_eq!(fates[1].population(), UnknownFate);
    assert_accounts(&rig.client, &fates);
}

/// A reply naming a message written after the oldest one waiting: out of order, which FIFO
/// cannot pair. Nothing is credited to the wrong message.
#[tokio::test(start_paused = true)]
async fn fifo_a_reply_naming_a_later_message_is_never_credited_to_the_oldest() {
    let mut rig = rig(vec![], fifo_within(Duration::from_secs(5)));
    let mut peer = rig.peer().await;
    let hs = send_all(&rig.client, ["1", "2"]).await;
    peer.read_ids(2).await;
    peer.write_ack("AA", "2").await;
    let fates = fates(hs).await;
    assert!(
        fates.iter().all(|f| f.population() == UnknownFate),
        "{fates:?}"
    );
    assert!(stopped_as_unsolicited(&rig.drain_events()));
}

#[tokio::test(start_paused = true)]
async fn fifo_constant_or_empty_msa2_is_credited_in_order() {
    let mut rig = rig(vec![], fifo());
    let mut peer = rig.peer().await;
    let hs = send_all(&rig.client, ["1", "2", "3"]).await;
    assert_eq!(peer.read_ids(3).await, ["1", "2", "3"]);
    peer.write_ack("AA", "WRONG").await;
    peer.write_ack("AE", "WRONG").await;
    peer.write_ack("AA", "").await;
    let fates = fates(hs).await;
    let codes: Vec<_> = fates.iter().map(|f| f.ack_code()).collect();
    assert_eq!(
        codes,
        [Some(AckCode::AA), Some(AckCode::AE), Some(AckCode::AA)]
    );
    assert_eq!(
        warnings(&rig.drain_events()),
        ["MLLP_ACK_CONTROL_ID_MISMATCH"; 3]
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
