//! Correlation: FIFO and control-ID crediting, and the enhanced-mode CA then AA exchange.

use super::super::harness::*;
use super::{control_id, fifo};
use crate::ack::AckCode;
use crate::client::*;
use std::time::Duration;
use Population::*;

#[tokio::test(start_paused = true)]
async fn fifo_credits_in_order_and_warns_on_mismatch() {
    let mut rig = rig(vec![], fifo());
    let mut peer = rig.peer().await;
    let hs = send_all(&rig.client, ["1", "2", "3"]).await;
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
async fn fifo_settles_an_accept_only_header_on_its_one_reply() {
    // MSH-15 AL, MSH-16 empty: one reply, and the CA is final.
    let mut rig = rig(vec![], fifo());
    let mut peer = rig.peer().await;
    let h = rig.client.send(msg("1", "AL")).await;
    peer.read().await;
    peer.write_ack("CA", "1").await;
    let fate = h.await;
    assert_eq!(fate.population(), Accepted);
    assert_eq!(fate.ack_code(), Some(AckCode::CA));
    assert!(warnings(&rig.drain_events()).is_empty());
}

#[tokio::test(start_paused = true)]
async fn fifo_refuses_a_send_whose_msh16_asks_for_an_application_ack() {
    let mut rig = rig(vec![], fifo());
    let mut peer = rig.peer().await;
    for msh16 in ["AL", "ER", "SU"] {
        let fate = rig.client.send(msg2("2", "AL", msh16)).await.await;
        assert_eq!(fate.population(), NeverDelivered, "{msh16}");
        assert_eq!(fate.cause(), Some("two-phase-unavailable"));
        assert_eq!(fate.contract_cause(), Some("fifo-unsafe"));
    }
    let h = rig.client.send(msg2("3", "AL", "NE")).await;
    assert_eq!(peer.read_ids(1).await, ["3"], "nothing refused was written");
    peer.write_ack("CA", "3").await;
    assert_eq!(h.await.population(), Accepted);
    assert_eq!(
        warnings(&rig.drain_events()),
        ["MLLP_ACK_TWO_PHASE_UNAVAILABLE"; 3]
    );
}

#[tokio::test(start_paused = true)]
async fn fifo_reply_with_nothing_awaiting_closes_the_link_as_unsolicited() {
    let mut rig = rig(vec![], fifo());
    let mut peer = rig.peer().await;
    // A server that answers as soon as we connect, before reading anything.
    peer.write_ack("AA", "ZZZ").await;
    let events = rig.wait_state(State::Closed).await;
    let h = rig.client.send(msg("1", "")).await;
    assert_eq!(h.await.population(), NeverDelivered);
    assert!(events.iter().any(|e| matches!(
        e,
        ClientEvent::Error {
            cause: crate::cause::Cause::UnsolicitedAck,
            class: crate::cause::Class::Permanent
        }
    )));
}

#[tokio::test(start_paused = true)]
async fn control_id_out_of_order_unmatched_and_late() {
    // Adapting to the peer would take b's silence next to answered frames for a peer that
    // drops pipelined frames, and write it again: here the timeout itself is under test.
    let options = ClientOptions {
        ack_timeout: Duration::from_secs(5),
        adapt_to_peer: false,
        ..control_id()
    };
    let mut rig = rig(vec![], options);
    let mut peer = rig.peer().await;
    let hs = send_all(&rig.client, ["a", "b", "c"]).await;
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
async fn control_id_shared_id_waits_for_the_first_to_settle_in_order() {
    let mut rig = rig(vec![], control_id());
    let mut peer = rig.peer().await;
    let hs = send_all(&rig.client, ["same", "other", "same"]).await;
    // The second `same` holds back everything behind it: only the first goes now.
    assert_eq!(peer.read_ids(1).await, ["same"]);
    tokio::task::yield_now().await;
    peer.write_ack("AA", "same").await;
    assert_eq!(peer.read_ids(2).await, ["other", "same"]);
    peer.write_ack("AE", "same").await;
    peer.write_ack("AA", "other").await;
    let fates = fates(hs).await;
    assert_eq!(fates[0].ack_code(), Some(AckCode::AA));
    assert_eq!(fates[1].ack_code(), Some(AckCode::AA));
    assert_eq!(fates[2].ack_code(), Some(AckCode::AE));
    assert!(warnings(&rig.drain_events()).is_empty());
}

#[tokio::test(start_paused = true)]
async fn enhanced_ca_then_aa_and_commit_notification() {
    let mut rig = rig(vec![], control_id());
    let mut peer = rig.peer().await;
    let mut h = rig.client.send(msg2("e1", "AL", "AL")).await;
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
    let h = rig.client.send(msg2("e1", "AL", "AL")).await;
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
