//! `accepted` only for a final, positive answer naming that very message: repeated `CA`s,
//! replies naming other messages, FIFO's limits, shared control IDs, MSH-16, the drain, and
//! the attempts of a message written on two connections.

use super::{path, send, to, write};
use crate::support::peer::{Behaviour, Peer, Script, Step};

/// MSH-15 `AL`, MSH-16 as given.
fn two_phase(id: &str, msh16: &str) -> String {
    format!("MSH|^~\\&|A|B|C|D|20240101000000||ADT^A01|{id}|P|2.5|||AL|{msh16}\rPID|1||X||PAYLOADMARKER7Q3^P\r")
}

fn plain(id: &str) -> String {
    format!("MSH|^~\\&|A|B|C|D|20240101000000||ADT^A01|{id}|P|2.5\rPID|1||X||PAYLOADMARKER7Q3^P\r")
}

async fn send_file(peer: &Peer, content: &str, flags: &[&str]) -> crate::support::send_proc::Run {
    let dir = tempfile::tempdir().unwrap();
    let file = write(dir.path(), "in.hl7", content.as_bytes());
    let mut rest = vec!["--json"];
    rest.extend_from_slice(flags);
    let file = path(&file);
    rest.push(&file);
    send(&to(peer.port(), &rest)).await
}

#[tokio::test(flavor = "multi_thread")]
async fn a_repeated_ca_is_not_an_acceptance() {
    let peer = Peer::start(Script::always(Behaviour::Replies(&["CA", "CA"]))).await;
    let run = send_file(
        &peer,
        &two_phase("R1", "AL"),
        &["--app-ack-timeout", "300ms"],
    )
    .await;
    let r = &run.messages()[0];
    assert_eq!(r["outcome"], "committed-only", "{r}");
    assert_eq!(run.code, 3);
    assert!(
        run.stderr.contains("MLLP_ACK_COMMIT_ALREADY_REPORTED"),
        "{}",
        run.stderr
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn by_default_an_aa_naming_another_message_credits_nothing() {
    for behaviour in [Behaviour::WrongId("AA"), Behaviour::Unsolicited] {
        let peer = Peer::start(Script::always(behaviour)).await;
        let run = send_file(
            &peer,
            &plain("M1"),
            &["--ack-timeout", "300ms", "--no-reconnect"],
        )
        .await;
        let r = &run.messages()[0];
        assert_eq!(r["outcome"], "unknown-fate", "{behaviour:?}: {r}");
        assert!(run.stderr.contains("MLLP_ACK_UNMATCHED_CONTROL_ID"));
        // Every message written had a reply naming another: said at once, permanent. (The
        // stray reply of `Unsolicited` may come before the message is written: then the ACK
        // timeout decides.)
        match (behaviour, r["cause"].as_str()) {
            (_, Some("ack-control-id-mismatch")) => {
                assert_eq!(run.code, 5, "{behaviour:?}");
            }
            (Behaviour::Unsolicited, Some("ack-timeout")) => assert_eq!(run.code, 3),
            other => panic!("{other:?}: {r}"),
        }
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn fifo_ends_the_run_on_a_reply_nothing_awaited() {
    // The stray reply after the first message's ACK comes while the second waits for its
    // turn (one a second): nothing written awaits it.
    let peer = Peer::start(Script::always(Behaviour::AckThenStray("AA"))).await;
    let input = plain("M1") + &plain("M2");
    let run = send_file(&peer, &input, &["--correlate", "fifo", "--rate", "1/s"]).await;
    let records = run.messages();
    assert_eq!(records[0]["outcome"], "accepted", "{}", records[0]);
    assert_eq!(records[1]["outcome"], "never-delivered", "{}", records[1]);
    assert_eq!(
        run.summary()["gave_up"],
        "unsolicited-ack",
        "{}",
        run.stdout
    );
    assert_eq!(run.code, 5, "{}", run.stderr);
}

#[tokio::test(flavor = "multi_thread")]
async fn fifo_refuses_input_that_asks_for_an_application_ack_before_sending() {
    let peer = Peer::start(Script::always(Behaviour::Ack("CA"))).await;
    for msh16 in ["AL", "ER", "SU"] {
        let input = plain("P1") + &two_phase("P2", msh16);
        let run = send_file(&peer, &input, &["--correlate", "fifo"]).await;
        assert_eq!(run.code, 2, "{msh16}: {}", run.stderr);
        assert!(run.stderr.contains("in.hl7#2"), "{}", run.stderr);
        assert!(
            run.stderr.contains("--correlate control-id"),
            "{}",
            run.stderr
        );
    }
    assert_eq!(peer.connections(), 0, "nothing was sent");
    // MSH-16 NE asks for none: FIFO takes it.
    let run = send_file(&peer, &two_phase("P3", "NE"), &["--correlate", "fifo"]).await;
    assert_eq!(run.code, 0, "{}", run.stderr);
}

#[tokio::test(flavor = "multi_thread")]
async fn messages_sharing_a_control_id_all_go_in_order() {
    let peer = Peer::start(Script::always(Behaviour::Ack("AA"))).await;
    let input = plain("SAME") + &plain("OTHER") + &plain("SAME");
    let run = send_file(&peer, &input, &["--correlate", "control-id"]).await;
    assert_eq!(run.code, 0, "{}{}", run.stdout, run.stderr);
    assert!(run.messages().iter().all(|r| r["outcome"] == "accepted"));
    let ids = super::ids(&peer.payloads());
    assert_eq!(ids, ["SAME", "OTHER", "SAME"]);
}

#[tokio::test(flavor = "multi_thread")]
async fn msh16_ne_or_er_needs_no_application_ack() {
    let peer = Peer::start(Script::always(Behaviour::Ack("CA"))).await;
    // NE: the CA is final (no wait, so the long app-ACK timeout never matters). ER: silence
    // through the window is success.
    for (msh16, app_ack_timeout) in [("NE", "60s"), ("ER", "300ms")] {
        let flags = [
            "--correlate",
            "control-id",
            "--app-ack-timeout",
            app_ack_timeout,
        ];
        let run = send_file(&peer, &two_phase("N1", msh16), &flags).await;
        let r = &run.messages()[0];
        assert_eq!(r["outcome"], "accepted", "{msh16}: {r}");
        assert_eq!(r["ack_code"], "CA");
        assert_eq!(run.code, 0);
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn the_drain_timeout_bounds_the_application_ack_wait() {
    let peer = Peer::start(Script::always(Behaviour::Ack("CA"))).await;
    let run = send_file(
        &peer,
        &two_phase("D1", "AL"),
        &["--drain-timeout", "500ms", "--app-ack-timeout", "60s"],
    )
    .await;
    let r = &run.messages()[0];
    assert_eq!(r["outcome"], "committed-only", "{r}");
    assert_eq!(r["cause_detail"], "drain-timeout", "{r}");
    assert_eq!(run.code, 3);
}

#[tokio::test(flavor = "multi_thread")]
async fn a_message_written_on_two_connections_counts_two_attempts() {
    let script = Script::then(vec![Behaviour::CloseAfterFirstRead], Behaviour::Ack("AA"));
    let peer = Peer::start(script).await;
    let run = send_file(&peer, &plain("W1"), &[]).await;
    assert_eq!(run.code, 0, "{}", run.stderr);
    let r = &run.messages()[0];
    assert_eq!(r["outcome"], "accepted", "{r}");
    assert_eq!(r["attempts"], 2, "{r}");
    assert_eq!(run.summary()["resent"], 1);
}

#[tokio::test(flavor = "multi_thread")]
async fn an_empty_msa1_is_named_as_such_and_credits_nothing() {
    let peer = Peer::start(Script::always(Behaviour::Replies(&["", "ZZ", "AA"]))).await;
    let run = send_file(&peer, &plain("E1"), &[]).await;
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(
        run.stderr.contains("MLLP_ACK_MSA1_ABSENT"),
        "{}",
        run.stderr
    );
    assert!(run.stderr.contains("MLLP_ACK_MSA1_UNCLASSIFIABLE"));
    assert!(!run.stderr.contains("MLLP_ACK_UNMATCHED_CONTROL_ID"));
}

#[tokio::test(flavor = "multi_thread")]
async fn a_reply_without_msa_is_named_as_no_ack_and_credits_nothing() {
    let peer = Peer::start(Script::always(Behaviour::Steps(&[Step::NoMsaFirst("AA")]))).await;
    let run = send_file(&peer, &plain("N1"), &[]).await;
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(
        run.stderr.contains("MLLP_REPLY_NOT_AN_ACK"),
        "{}",
        run.stderr
    );
    assert!(!run.stderr.contains("MLLP_ACK_UNMATCHED_CONTROL_ID"));
}
