//! Only a final, positive answer naming a written message credits it: repeated `CA`s, early and
//! unclassifiable replies, shared control IDs and the MSH-16 table.

use super::harness::*;
use crate::ack::AckCode;
use crate::client::*;
use std::sync::Arc;
use std::time::Duration;
use Population::*;

fn options() -> ClientOptions {
    ClientOptions {
        ack_timeout: Duration::from_secs(5),
        app_ack_timeout: Duration::from_secs(10),
        ..Default::default()
    }
}

fn reconnecting(o: ClientOptions) -> ClientOptions {
    ClientOptions {
        reconnect: Reconnect {
            enabled: true,
            strategy: Arc::new(ExponentialBackoff::seeded(BackoffConfig::default(), 1)),
        },
        ..o
    }
}

#[tokio::test(start_paused = true)]
async fn a_repeated_ca_settles_nothing() {
    let mut rig = rig(vec![], options());
    let mut peer = rig.peer().await;
    let h = rig.client.send(msg2("1", "AL", "AL")).await;
    peer.read().await;
    peer.write_ack("CA", "1").await;
    peer.write_ack("CA", "1").await;
    let fate = h.await;
    assert_eq!(fate.population(), CommittedOnly, "{fate}");
    assert_eq!(fate.cause(), Some("app-ack-timeout"));
    assert_eq!(
        warnings(&rig.drain_events()),
        ["MLLP_ACK_COMMIT_ALREADY_REPORTED"]
    );
}

#[tokio::test(start_paused = true)]
async fn control_id_is_the_default_and_an_unmatched_aa_credits_nothing() {
    assert_eq!(ClientOptions::default().correlation, Correlation::ControlId);
    let mut rig = rig(vec![], options());
    let mut peer = rig.peer().await;
    // A server that answers before it reads anything, naming another message.
    peer.write_ack("AA", "ZZZ").await;
    let h = rig.client.send(msg("1", "")).await;
    peer.read().await;
    peer.write_ack("AA", "ZZZ").await;
    let fate = h.await;
    assert_eq!(fate.population(), UnknownFate, "{fate}");
    assert_eq!(
        warnings(&rig.drain_events()),
        ["MLLP_ACK_UNMATCHED_CONTROL_ID"; 2]
    );
}

#[tokio::test(start_paused = true)]
async fn a_reply_naming_a_message_not_yet_written_credits_nothing() {
    let mut rig = rig(
        vec![],
        ClientOptions {
            pipeline: false,
            ..options()
        },
    );
    let mut peer = rig.peer().await;
    let hs = send_all(&rig.client, ["1", "2"]).await;
    assert_eq!(peer.read_ids(1).await, ["1"]);
    peer.write_ack("AA", "2").await;
    peer.write_ack("AA", "1").await;
    assert_eq!(peer.read_ids(1).await, ["2"]);
    let fates = fates(hs).await;
    assert_eq!(fates[0].population(), Accepted);
    assert_eq!(fates[1].population(), UnknownFate, "{}", fates[1]);
    assert_eq!(warnings(&rig.drain_events()), ["MLLP_ACK_BEFORE_WRITE"]);
}

#[tokio::test(start_paused = true)]
async fn a_reply_to_a_frame_still_being_written_credits_nothing() {
    // The link takes 16 bytes at a time: the frame is still being written when the reply
    // naming it arrives, so the peer cannot have read it.
    let mut rig = rig(vec![Plan::AcceptSmall(16)], options());
    let mut peer = rig.peer().await;
    let h = rig.client.send(msg("1", "")).await;
    tokio::task::yield_now().await;
    peer.write_ack("AA", "1").await;
    tokio::task::yield_now().await;
    peer.read().await.expect("the frame");
    let fate = h.await;
    assert_eq!(fate.population(), UnknownFate, "{fate}");
    assert_eq!(warnings(&rig.drain_events()), ["MLLP_ACK_BEFORE_WRITE"]);
}

#[tokio::test(start_paused = true)]
async fn after_a_timeout_the_same_id_waits_for_a_new_connection() {
    let mut rig = rig(vec![], reconnecting(options()));
    let mut first = rig.peer().await;
    let timed_out = rig.client.send(msg("X", "")).await;
    assert_eq!(first.read_ids(1).await, ["X"]);
    let again = rig.client.send(msg("X", "")).await;
    assert_eq!(timed_out.await.population(), UnknownFate);
    // A late ACK of the first X on this link could not be told from one for the second: the
    // second is not written here, and the link is renewed for it.
    assert!(
        first.read().await.is_none(),
        "no second X on the first link"
    );
    let mut second = rig.peer().await;
    assert_eq!(second.read_ids(1).await, ["X"]);
    second.write_ack("AE", "X").await;
    let fate = again.await;
    assert_eq!(fate.ack_code(), Some(AckCode::AE));
}

#[tokio::test(start_paused = true)]
async fn msh16_decides_what_follows_a_ca() {
    // (MSH-16, replies after the CA, expected population, expected code)
    let cases: &[(&str, &[&str], Population, Option<AckCode>)] = &[
        ("", &[], Accepted, Some(AckCode::CA)),
        ("\"\"", &[], Accepted, Some(AckCode::CA)),
        ("NE", &[], Accepted, Some(AckCode::CA)),
        ("AL", &["AA"], Accepted, Some(AckCode::AA)),
        ("AL", &["AE"], Negative, Some(AckCode::AE)),
        ("AL", &[], CommittedOnly, Some(AckCode::CA)),
        ("ER", &["AA"], Accepted, Some(AckCode::AA)),
        ("ER", &["AR"], Negative, Some(AckCode::AR)),
        ("ER", &[], Accepted, Some(AckCode::CA)),
        ("SU", &["AA"], Accepted, Some(AckCode::AA)),
        ("SU", &["AE"], Negative, Some(AckCode::AE)),
        ("SU", &[], CommittedOnly, Some(AckCode::CA)),
    ];
    for (msh16, after, population, code) in cases {
        let mut rig = rig(vec![], options());
        let mut peer = rig.peer().await;
        let h = rig.client.send(msg2("m", "AL", msh16)).await;
        peer.read().await;
        let start = tokio::time::Instant::now();
        peer.write_ack("CA", "m").await;
        for reply in *after {
            tokio::time::sleep(Duration::from_secs(3)).await;
            peer.write_ack(reply, "m").await;
        }
        let fate = h.await;
        let case = format!("MSH-16 {msh16:?} then {after:?}: {fate}");
        assert_eq!(fate.population(), *population, "{case}");
        assert_eq!(fate.ack_code(), *code, "{case}");
        if matches!(*msh16, "" | "\"\"" | "NE") {
            assert_eq!(start.elapsed(), Duration::ZERO, "no wait: {case}");
        }
    }
}

#[tokio::test(start_paused = true)]
async fn an_a_code_first_is_final_whatever_msh16_says() {
    let mut rig = rig(vec![], options());
    let mut peer = rig.peer().await;
    let hs = vec![
        rig.client.send(msg2("a", "AL", "AL")).await,
        rig.client.send(msg2("b", "AL", "SU")).await,
    ];
    peer.read_ids(2).await;
    peer.write_ack("AA", "a").await;
    peer.write_ack("AR", "b").await;
    let fates = fates(hs).await;
    assert_eq!(fates[0].ack_code(), Some(AckCode::AA));
    assert_eq!(fates[1].ack_code(), Some(AckCode::AR));
}

#[tokio::test(start_paused = true)]
async fn an_empty_or_unknown_msa1_has_its_own_warning_and_settles_nothing() {
    let mut rig = rig(vec![], options());
    let mut peer = rig.peer().await;
    let h = rig.client.send(msg("1", "")).await;
    peer.read().await;
    peer.write_ack("", "1").await;
    peer.write_ack("OK", "1").await;
    peer.write_ack("AA", "1").await;
    assert_eq!(h.await.ack_code(), Some(AckCode::AA));
    assert_eq!(
        warnings(&rig.drain_events()),
        ["MLLP_ACK_MSA1_ABSENT", "MLLP_ACK_MSA1_UNCLASSIFIABLE"]
    );
}

#[tokio::test(start_paused = true)]
async fn a_message_written_on_two_connections_counts_two_writes() {
    let mut rig = rig(vec![], reconnecting(options()));
    let mut first = rig.peer().await;
    let mut h = rig.client.send(msg("1", "")).await;
    first.read().await;
    drop(first);
    let mut second = rig.peer().await;
    second.read().await;
    second.write_ack("AA", "1").await;
    let fate = (&mut h).await;
    assert_eq!(fate.population(), Accepted);
    assert_eq!(h.writes(), 2);
}

#[tokio::test(start_paused = true)]
async fn the_drain_bounds_the_application_ack_wait() {
    let mut rig = rig(
        vec![],
        ClientOptions {
            drain_timeout: Duration::from_secs(3),
            app_ack_timeout: Duration::from_secs(30),
            ..options()
        },
    );
    let mut peer = rig.peer().await;
    let mut h = rig.client.send(msg2("1", "AL", "AL")).await;
    peer.read().await;
    peer.write_ack("CA", "1").await;
    h.committed().await.unwrap();
    let start = tokio::time::Instant::now();
    let report = rig.client.close().await;
    assert_eq!(start.elapsed(), Duration::from_secs(3));
    assert_eq!(report.committed_only.len(), 1);
    let fate = h.await;
    assert_eq!(fate.population(), CommittedOnly);
    assert_eq!(fate.cause(), Some("drain-timeout"));
}
