//! Every exit code from a real peer behaviour (TLS ones are in `tls`), their precedence, and
//! the records and summary each run leaves.

use super::{path, send, to, write};
use crate::support::mllp_bin;
use crate::support::no_payload::MARKER;
use crate::support::peer::{Behaviour, Peer, Script};
use crate::support::peer_wire::message;
use crate::support::ports::closed_port;
use crate::support::send_proc::{messages, Running};
use serde_json::Value;

#[tokio::test(flavor = "multi_thread")]
async fn a_nak_exits_1_and_json_records_carry_every_field() {
    let peer = Peer::start(Script::always(Behaviour::Ack("AE"))).await;
    let dir = tempfile::tempdir().unwrap();
    let file = write(dir.path(), "adt.hl7", &messages("N", 2));
    let run = send(&to(peer.port(), &["--json", "--print-ack", &path(&file)])).await;
    assert_eq!(run.code, 1, "{}", run.stderr);
    let records = run.messages();
    assert_eq!(records.len(), 2);
    let r = &records[0];
    assert_eq!(r["type"], "message");
    assert!(r["source"].as_str().unwrap().ends_with("adt.hl7#1"));
    assert_eq!(r["control_id"], "N1");
    assert_eq!(r["bytes"], message("N1", MARKER).len());
    assert_eq!(r["outcome"], "negative");
    assert_eq!(r["ack_code"], "AE");
    assert!(r["latency_ms"].as_f64().unwrap() >= 0.0);
    assert!(r.get("cause").is_some_and(Value::is_null));
    assert!(r["ack"].as_str().unwrap().contains("MSA|AE|N1"));
    let s = run.summary();
    for (field, want) in [
        ("messages", 2),
        ("accepted", 0),
        ("negative", 2),
        ("committed_only", 0),
        ("unknown_fate", 0),
        ("never_delivered", 0),
        ("refused", 0),
        ("exit_code", 1),
    ] {
        assert_eq!(s[field], want, "{field}");
    }
    assert_eq!(s["by_code"]["AE"], 2);
    assert!(s["elapsed_ms"].is_number() && s["messages_per_second"].is_number());
    assert!(s["reconnects"].is_number());
}

#[tokio::test(flavor = "multi_thread")]
async fn human_lines_show_code_and_the_summary_goes_to_stderr() {
    let peer = Peer::start(Script::always(Behaviour::Ack("AR"))).await;
    let dir = tempfile::tempdir().unwrap();
    let file = write(dir.path(), "adt.hl7", &message("H1", MARKER));
    let run = send(&to(peer.port(), &[&path(&file)])).await;
    assert_eq!(run.code, 1);
    let line = run.stdout.lines().next().unwrap();
    assert!(
        line.contains("adt.hl7#1") && line.contains("H1") && line.contains("AR"),
        "{line}"
    );
    assert!(run.stderr.contains("1 negative"), "{}", run.stderr);
    let quiet = send(&to(peer.port(), &["--quiet", &path(&file)])).await;
    assert!(quiet.stdout.is_empty());
    assert!(quiet.stderr.contains("sent 1 message in "));
}

#[tokio::test(flavor = "multi_thread")]
async fn a_silent_peer_with_a_short_ack_timeout_exits_3() {
    let peer = Peer::start(Script::always(Behaviour::Stall)).await;
    let dir = tempfile::tempdir().unwrap();
    let file = write(dir.path(), "adt.hl7", &message("S1", MARKER));
    let run = send(&to(
        peer.port(),
        &["--json", "--ack-timeout", "200ms", &path(&file)],
    ))
    .await;
    assert_eq!(run.code, 3, "{}", run.stderr);
    let r = &run.messages()[0];
    assert_eq!(r["outcome"], "unknown-fate");
    assert_eq!(r["cause"], "ack-timeout");
    assert!(r["ack_code"].is_null() && r["latency_ms"].is_null());
}

#[tokio::test(flavor = "multi_thread")]
async fn a_reset_mid_stream_leaves_orphans_of_unknown_fate() {
    let peer = Peer::start(Script::always(Behaviour::ResetAfter(2))).await;
    let dir = tempfile::tempdir().unwrap();
    let file = write(dir.path(), "adt.hl7", &messages("R", 10));
    let run = send(&to(
        peer.port(),
        &["--json", "--correlate", "fifo", &path(&file)],
    ))
    .await;
    assert_eq!(run.code, 3, "{}", run.stderr);
    let s = run.summary();
    assert_eq!(s["messages"], 10);
    let accepted = s["accepted"].as_u64().unwrap();
    let unknown = s["unknown_fate"].as_u64().unwrap();
    assert!(accepted >= 2 && unknown >= 1);
    assert_eq!(
        accepted + unknown + s["never_delivered"].as_u64().unwrap(),
        10
    );
    for r in run.messages() {
        if r["outcome"] == "unknown-fate" {
            assert_eq!(r["cause"], "in-flight-orphan", "{r}");
        }
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_refused_port_exits_4_after_the_retries() {
    let port = closed_port();
    let dir = tempfile::tempdir().unwrap();
    let file = write(dir.path(), "adt.hl7", &messages("P", 3));
    let run = send(&to(port, &["--json", "--max-retries", "1", &path(&file)])).await;
    assert_eq!(run.code, 4, "{}", run.stderr);
    let records = run.messages();
    assert_eq!(records.len(), 3);
    for r in &records {
        assert_eq!(r["outcome"], "never-delivered");
        assert_eq!(r["cause"], "connection-refused");
    }
    assert_eq!(run.summary()["never_delivered"], 3);
}

#[tokio::test(flavor = "multi_thread")]
async fn an_http_peer_exits_5() {
    let peer = Peer::start(Script::always(Behaviour::Http)).await;
    let dir = tempfile::tempdir().unwrap();
    let file = write(dir.path(), "adt.hl7", &message("W1", MARKER));
    let run = send(&to(peer.port(), &["--json", &path(&file)])).await;
    assert_eq!(run.code, 5, "{}", run.stderr);
    assert_eq!(run.summary()["gave_up"], "framing-fatal", "{}", run.stdout);
}

#[tokio::test(flavor = "multi_thread")]
async fn precedence_unknown_fate_over_negative_and_permanent_over_all() {
    let dir = tempfile::tempdir().unwrap();
    let file = write(dir.path(), "adt.hl7", &messages("X", 4));
    // First connection: one AA, then a reset (orphans); later ones answer AR.
    let script = Script::then(vec![Behaviour::ResetAfter(1)], Behaviour::Ack("AR"));
    let peer = Peer::start(script).await;
    let fifo = ["--json", "--correlate", "fifo", "--no-pipeline"];
    let run = send(&to(peer.port(), &[&fifo[..], &[&path(&file)]].concat())).await;
    let s = run.summary();
    assert!(
        s["unknown_fate"].as_u64().unwrap() >= 1,
        "{s} {}",
        run.stderr
    );
    assert!(s["negative"].as_u64().unwrap() >= 1, "{s}");
    assert_eq!(run.code, 3);

    let script = Script::then(vec![Behaviour::ResetAfter(1)], Behaviour::Http);
    let peer = Peer::start(script).await;
    let fifo = ["--json", "--correlate", "fifo", "--no-pipeline"];
    let run = send(&to(peer.port(), &[&fifo[..], &[&path(&file)]].concat())).await;
    assert!(run.summary()["unknown_fate"].as_u64().unwrap() >= 1);
    assert_eq!(run.code, 5, "{}", run.stderr);
}

#[tokio::test(flavor = "multi_thread")]
async fn ctrl_c_drains_prints_the_summary_and_exits_130() {
    let peer = Peer::start(Script::always(Behaviour::Stall)).await;
    let dir = tempfile::tempdir().unwrap();
    let file = write(dir.path(), "adt.hl7", &messages("K", 3));
    let mut cmd = tokio::process::Command::new(mllp_bin());
    cmd.arg("send").args(to(
        peer.port(),
        &["--json", "--drain-timeout", "200ms", &path(&file)],
    ));
    let child = Running::start(cmd);
    peer.wait_for(|r| r.payloads.len() == 3).await;
    child.signal("INT");
    let run = child.finish().await;
    assert_eq!(run.code, 130);
    let s = run.summary();
    assert_eq!(s["messages"], 3);
    assert_eq!(s["unknown_fate"], 3);
    assert_eq!(s["exit_code"], 130);
    // The drain ran out: a stable cause, with the client's own reason beside it.
    for r in run.messages() {
        assert_eq!(r["outcome"], "unknown-fate", "{r}");
        assert_eq!(r["cause"], "ack-timeout", "{r}");
        assert_eq!(r["cause_detail"], "drain-timeout", "{r}");
    }
}
