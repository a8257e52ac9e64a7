//! The resend policy across link drops in each correlation mode, and `--failed-out` reruns.

use super::{ids, path, send, to, write};
use crate::support::peer::{Behaviour, Peer, Script};
use crate::support::send_proc::messages;

#[tokio::test(flavor = "multi_thread")]
async fn control_id_mode_survives_drops_every_100_messages() {
    let peer = Peer::start(Script::always(Behaviour::DropEvery(100))).await;
    let dir = tempfile::tempdir().unwrap();
    let file = write(dir.path(), "adt.hl7", &messages("C", 350));
    let run = send(&to(
        peer.port(),
        &["--json", "--correlate", "control-id", &path(&file)],
    ))
    .await;
    assert_eq!(run.code, 0, "{}", run.stderr);
    let records = run.messages();
    assert_eq!(records.len(), 350);
    let mut seen = std::collections::HashSet::new();
    for r in &records {
        assert_eq!(r["outcome"], "accepted", "{r}");
        assert!(seen.insert(r["control_id"].as_str().unwrap().to_string()));
    }
    let received: std::collections::HashSet<String> = ids(&peer.payloads()).into_iter().collect();
    assert_eq!(received, seen);
    let s = run.summary();
    assert_eq!(s["accepted"], 350);
    assert!(s["reconnects"].as_u64().unwrap() >= 3, "{s}");
    assert_eq!(s["accounting_ok"], true);
}

/// A link closed in the middle of an answer is a link lost, not a peer that does not speak
/// MLLP: the run reconnects and every message is accepted.
#[tokio::test(flavor = "multi_thread")]
async fn a_link_closed_in_the_middle_of_an_ack_is_transient() {
    let script = Script {
        first: vec![Behaviour::CutAckAfter(2)],
        rest: Behaviour::Ack("AA"),
    };
    let peer = Peer::start(script).await;
    let dir = tempfile::tempdir().unwrap();
    let file = write(dir.path(), "adt.hl7", &messages("T", 6));
    let run = send(&to(peer.port(), &["--json", "--no-pipeline", &path(&file)])).await;
    assert_eq!(run.code, 0, "{}\n{}", run.stdout, run.stderr);
    let s = run.summary();
    assert_eq!(s["accepted"], 6, "{s}");
    assert_eq!(s["reconnects"], 1, "{s}");
}

#[tokio::test(flavor = "multi_thread")]
async fn fifo_mode_reports_orphans_and_resends_the_never_written() {
    let peer = Peer::start(Script::always(Behaviour::DropEvery(100))).await;
    let dir = tempfile::tempdir().unwrap();
    let file = write(dir.path(), "adt.hl7", &messages("F", 350));
    // One in flight, the rest of the window queued: a drop leaves never-written messages.
    let run = send(&to(
        peer.port(),
        &["--json", "--no-pipeline", "--window", "16", &path(&file)],
    ))
    .await;
    let s = run.summary();
    assert_eq!(s["messages"], 350);
    assert_eq!(s["accounting_ok"], true);
    assert!(s["resent"].as_u64().unwrap() >= 1, "{s}");
    let total: u64 = ["accepted", "unknown_fate", "never_delivered", "negative"]
        .iter()
        .map(|f| s[f].as_u64().unwrap())
        .sum();
    assert_eq!(total, 350);
    let records = run.messages();
    assert_eq!(records.len(), 350);
    for r in &records {
        match r["outcome"].as_str().unwrap() {
            "accepted" => {}
            "unknown-fate" => assert_eq!(r["cause"], "in-flight-orphan", "{r}"),
            other => panic!("unexpected outcome {other}: {r}"),
        }
    }
    assert!(records.iter().any(|r| r["attempts"].as_u64().unwrap() > 1));
    assert_eq!(run.code, if s["unknown_fate"] == 0 { 0 } else { 3 });
}

#[tokio::test(flavor = "multi_thread")]
async fn failed_out_keeps_the_failures_and_a_rerun_sends_only_those() {
    let peer = Peer::start(Script::always(Behaviour::ResetAfter(3))).await;
    let dir = tempfile::tempdir().unwrap();
    let file = write(dir.path(), "adt.hl7", &messages("Q", 6));
    let out = dir.path().join("failed");
    let run = send(&to(
        peer.port(),
        &[
            "--json",
            "--no-reconnect",
            "--failed-out",
            &path(&out),
            &path(&file),
        ],
    ))
    .await;
    let failed: Vec<String> = run
        .messages()
        .iter()
        .filter(|r| r["outcome"] != "accepted")
        .map(|r| r["control_id"].as_str().unwrap().to_string())
        .collect();
    assert!(!failed.is_empty() && failed.len() < 6, "{}", run.stdout);
    assert_eq!(std::fs::read_dir(&out).unwrap().count(), failed.len());

    let good = Peer::start(Script::always(Behaviour::Ack("AA"))).await;
    let rerun = send(&to(good.port(), &["--recursive", &path(&out)])).await;
    assert_eq!(rerun.code, 0, "{}", rerun.stderr);
    let mut resent = ids(&good.payloads());
    resent.sort();
    let mut failed = failed;
    failed.sort();
    assert_eq!(resent, failed);
}

#[tokio::test(flavor = "multi_thread")]
async fn failed_out_refuses_a_directory_with_files_or_one_of_the_inputs() {
    let peer = Peer::start(Script::always(Behaviour::Ack("AA"))).await;
    let dir = tempfile::tempdir().unwrap();
    let file = write(dir.path(), "adt.hl7", &messages("F", 2));
    let used = dir.path().join("fo");
    write(&used, "000001-adt.hl7#1.hl7", &messages("F", 1));
    // A directory an earlier run left files in: runs would mix.
    let run = send(&to(
        peer.port(),
        &["--failed-out", &path(&used), &path(&file)],
    ))
    .await;
    assert_eq!(run.code, 2, "{}", run.stderr);
    assert!(run.stderr.contains("not empty (1 entry)"), "{}", run.stderr);
    assert!(run.stderr.contains("new directory"), "{}", run.stderr);
    // The directory being sent: its failures would land among its messages.
    let rerun = send(&to(
        peer.port(),
        &["-r", &path(&used), "--failed-out", &path(&used)],
    ))
    .await;
    assert_eq!(rerun.code, 2, "{}", rerun.stderr);
    assert!(rerun.stderr.contains("of the inputs"), "{}", rerun.stderr);
    assert_eq!(peer.connections(), 0);
    assert_eq!(std::fs::read_dir(&used).unwrap().count(), 1);
}

/// Under control-ID correlation the client writes a message again on each new connection, at
/// most --max-resends times: a peer that resets every link on the first frame gets it 1 + N
/// times, and the message ends unknown-fate, never accepted.
#[tokio::test(flavor = "multi_thread")]
async fn control_id_mode_writes_a_message_at_most_max_resends_times_again() {
    let peer = Peer::start(Script::always(Behaviour::ResetAfter(0))).await;
    let dir = tempfile::tempdir().unwrap();
    let file = write(dir.path(), "adt.hl7", &messages("R", 1));
    let run = send(&to(
        peer.port(),
        &["--json", "--max-resends", "2", &path(&file)],
    ))
    .await;
    let records = run.messages();
    assert_eq!(records.len(), 1, "{}", run.stdout);
    assert_eq!(records[0]["outcome"], "unknown-fate", "{}", records[0]);
    assert_eq!(records[0]["cause"], "connection-reset", "{}", records[0]);
    assert_eq!(records[0]["attempts"], 3, "{}", records[0]);
    assert_eq!(peer.payloads().len(), 3);
    assert_eq!(run.code, 3, "{}", run.stderr);
    assert_eq!(run.summary()["accounting_ok"], true);
}
