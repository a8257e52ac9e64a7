//! `--pace original` waits only as long as the run may: a recorded gap of a day (or to the year
//! 9999) ends at `--timeout`, Ctrl-C or SIGTERM with the summary printed and the rows not sent
//! never-delivered; `--max-gap` caps each wait.

use super::{hl7, receiver_store};
use crate::send::{path, send, to};
use crate::support::mllp_bin;
use crate::support::peer::{Behaviour, Peer, Script};
use crate::support::send_proc::{Run, Running};
use std::path::PathBuf;

/// R1, then R2 a long gap later (to `later`), then R3 a second after R2.
fn gapped(dir: &std::path::Path, later: &str) -> PathBuf {
    let after = later.replace(":00.000000Z", ":01.000000Z");
    receiver_store(
        dir,
        &[
            ("2024-01-31T08:00:00.000000Z", hl7("R1")),
            (later, hl7("R2")),
            (&after, hl7("R3")),
        ],
    )
}

/// R1 accepted; R2 and R3 never delivered with `cause`; all three counted in the summary.
fn first_sent_rest_unsent(run: &Run, cause: &str) {
    let records = run.messages();
    let summary = run.summary();
    assert_eq!(records.len(), 3, "{}", run.stdout);
    assert_eq!(records[0]["outcome"], "accepted", "{}", run.stdout);
    for r in &records[1..] {
        assert_eq!(r["outcome"], "never-delivered", "{r}");
        assert_eq!(r["cause"], cause, "{r}");
    }
    assert_eq!(summary["messages"], 3, "{summary}");
    assert_eq!(summary["never_delivered"], 2, "{summary}");
}

#[tokio::test]
async fn a_day_long_gap_ends_at_the_timeout_with_the_rest_run_timeout() {
    let dir = tempfile::tempdir().unwrap();
    let file = gapped(dir.path(), "2024-02-01T08:00:00.000000Z");
    let peer = Peer::start(Script::always(Behaviour::Ack("AA"))).await;
    let run = send(&to(
        peer.port(),
        &[
            "--json",
            "--from-db",
            &path(&file),
            "--pace",
            "original",
            "--timeout",
            "2s",
        ],
    ))
    .await;
    assert_eq!(run.code, 4, "{}", run.stderr);
    first_sent_rest_unsent(&run, "run-timeout");
    assert_eq!(peer.payloads().len(), 1);
}

/// The run sent `signal` once R1's record is out, while it waits for R2.
async fn stopped_in_a_gap(signal: &str, later: &str) -> (Run, usize) {
    let dir = tempfile::tempdir().unwrap();
    let file = gapped(dir.path(), later);
    let peer = Peer::start(Script::always(Behaviour::Ack("AA"))).await;
    let mut cmd = tokio::process::Command::new(mllp_bin());
    cmd.arg("send").args(to(
        peer.port(),
        &["--json", "--from-db", &path(&file), "--pace", "original"],
    ));
    let mut running = Running::start(cmd);
    running.stdout_line().await;
    running.signal(signal);
    let run = running.finish().await;
    (run, peer.payloads().len())
}

#[tokio::test(flavor = "multi_thread")]
async fn ctrl_c_in_a_recorded_gap_prints_the_summary_and_exits_130() {
    let (run, sent) = stopped_in_a_gap("INT", "2024-02-01T08:00:00.000000Z").await;
    assert_eq!(run.code, 130, "{}", run.stderr);
    first_sent_rest_unsent(&run, "interrupted");
    assert_eq!(sent, 1);
}

#[tokio::test(flavor = "multi_thread")]
async fn sigterm_in_a_gap_to_the_year_9999_exits_143() {
    let (run, sent) = stopped_in_a_gap("TERM", "9999-12-31T23:59:00.000000Z").await;
    assert_eq!(run.code, 143, "{}", run.stderr);
    first_sent_rest_unsent(&run, "interrupted");
    assert!(run.stderr.contains("SIGTERM"), "{}", run.stderr);
    assert_eq!(sent, 1);
}

#[tokio::test]
async fn max_gap_caps_each_recorded_wait() {
    let dir = tempfile::tempdir().unwrap();
    let file = gapped(dir.path(), "2024-02-01T08:00:00.000000Z");
    let peer = Peer::start(Script::always(Behaviour::Ack("AA"))).await;
    let run = send(&to(
        peer.port(),
        &[
            "--json",
            "--from-db",
            &path(&file),
            "--pace",
            "original",
            "--max-gap",
            "50ms",
        ],
    ))
    .await;
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(run.summary()["accepted"], 3, "{}", run.stdout);
}

#[tokio::test]
async fn max_gap_needs_the_original_pace() {
    let dir = tempfile::tempdir().unwrap();
    let file = gapped(dir.path(), "2024-02-01T08:00:00.000000Z");
    let run = send(&crate::send::args(&[
        "--dry-run",
        "--from-db",
        &path(&file),
        "--max-gap",
        "1s",
    ]))
    .await;
    assert_eq!(run.code, 2, "{}", run.stderr);
    assert!(run.stderr.contains("--pace"), "{}", run.stderr);
}
