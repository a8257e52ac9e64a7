//! Stopping a run from outside: Ctrl-C and SIGTERM account for every message of the checked
//! input (the unread part ends never-delivered, cause `interrupted`, and lands in
//! `--failed-out`), each signal is named as what it was, and each has its exit code.

use super::{path, to, write};
use crate::support::mllp_bin;
use crate::support::peer::{Behaviour, Peer, Script};
use crate::support::send_proc::{messages, Run, Running};

/// `mllp send ARGS`, sent `signal` (`INT`, `TERM`) once its first record is on stdout.
async fn stopped_by(signal: &str, args: &[String]) -> Run {
    let mut cmd = tokio::process::Command::new(mllp_bin());
    cmd.arg("send").args(args);
    let mut run = Running::start(cmd);
    run.stdout_line().await;
    run.signal(signal);
    run.finish().await
}

/// Each of the `n` messages has its record and the summary counts them all; each one not
/// accepted ended never-delivered, cause `interrupted`. How many were accepted.
fn accounted_after_the_interrupt(run: &Run, n: u64) -> u64 {
    let (records, summary) = (run.messages(), run.summary());
    assert_eq!(records.len() as u64, n, "{}", run.stderr);
    assert_eq!(summary["messages"], n, "{summary}");
    let accepted = summary["accepted"].as_u64().unwrap();
    assert_eq!(summary["never_delivered"], n - accepted, "{summary}");
    for r in records.iter().filter(|r| r["outcome"] != "accepted") {
        assert_eq!(r["outcome"], "never-delivered", "{r}");
        assert_eq!(r["cause"], "interrupted", "{r}");
    }
    accepted
}

#[tokio::test(flavor = "multi_thread")]
async fn ctrl_c_accounts_for_the_whole_input_and_failed_out_holds_the_rest() {
    let peer = Peer::start(Script::always(Behaviour::Ack("AA"))).await;
    let dir = tempfile::tempdir().unwrap();
    let file = write(dir.path(), "bulk.hl7", &messages("C", 300));
    let retry = dir.path().join("retry1");
    let run = stopped_by(
        "INT",
        &to(
            peer.port(),
            &[
                "--json",
                "--rate",
                "50",
                "--failed-out",
                &path(&retry),
                &path(&file),
            ],
        ),
    )
    .await;
    assert_eq!(run.code, 130, "{}", run.stderr);
    let accepted = accounted_after_the_interrupt(&run, 300);
    assert!((1..300).contains(&accepted), "{}", run.stdout);
    // The rerun is complete: every message not accepted has its file.
    let kept = std::fs::read_dir(&retry).unwrap().count() as u64;
    assert_eq!(kept, 300 - accepted);
    assert_eq!(peer.payloads().len() as u64, accepted);
}

#[tokio::test(flavor = "multi_thread")]
async fn ctrl_c_in_human_output_counts_every_message() {
    let peer = Peer::start(Script::always(Behaviour::Ack("AA"))).await;
    let dir = tempfile::tempdir().unwrap();
    let file = write(dir.path(), "bulk.hl7", &messages("H", 200));
    let run = stopped_by("INT", &to(peer.port(), &["--rate", "50", &path(&file)])).await;
    assert_eq!(run.code, 130, "{}", run.stderr);
    assert_eq!(run.stdout.lines().count(), 200, "{}", run.stdout);
    assert!(run.stderr.contains("of 200 messages"), "{}", run.stderr);
    assert!(run.stderr.contains("interrupted"), "{}", run.stderr);
    assert!(run.stderr.contains("Ctrl-C"), "{}", run.stderr);
}

#[tokio::test(flavor = "multi_thread")]
async fn sigterm_is_named_as_such_and_exits_143() {
    let peer = Peer::start(Script::always(Behaviour::Ack("AA"))).await;
    let dir = tempfile::tempdir().unwrap();
    let file = write(dir.path(), "bulk.hl7", &messages("T", 200));
    let run = stopped_by(
        "TERM",
        &to(peer.port(), &["--json", "--rate", "50", &path(&file)]),
    )
    .await;
    assert_eq!(run.code, 143, "{}", run.stderr);
    assert!(run.stderr.contains("stopped by SIGTERM"), "{}", run.stderr);
    assert!(!run.stderr.contains("Ctrl-C"), "{}", run.stderr);
    let summary = run.summary();
    assert_eq!(summary["exit_code"], 143, "{summary}");
    assert_eq!(summary["messages"], 200, "{summary}");
}

#[tokio::test(flavor = "multi_thread")]
async fn ctrl_c_over_several_links_accounts_for_the_unread_input_too() {
    let peer = Peer::start(Script::always(Behaviour::Ack("AA"))).await;
    let dir = tempfile::tempdir().unwrap();
    // More than the router holds, so part of the input is still unread at the interrupt.
    let file = write(dir.path(), "bulk.hl7", &messages("P", 3000));
    let run = stopped_by(
        "INT",
        &to(
            peer.port(),
            &[
                "--json",
                "--rate",
                "50",
                "--connections",
                "2",
                "--order-key",
                "MSH-10",
                &path(&file),
            ],
        ),
    )
    .await;
    assert_eq!(run.code, 130, "{}", run.stderr);
    accounted_after_the_interrupt(&run, 3000);
}

#[tokio::test(flavor = "multi_thread")]
async fn sigterm_over_several_links_is_named_as_such_and_exits_143() {
    let peer = Peer::start(Script::always(Behaviour::Ack("AA"))).await;
    let dir = tempfile::tempdir().unwrap();
    let file = write(dir.path(), "bulk.hl7", &messages("Q", 200));
    let run = stopped_by(
        "TERM",
        &to(
            peer.port(),
            &[
                "--json",
                "--rate",
                "50",
                "--connections",
                "2",
                "--order-key",
                "MSH-10",
                &path(&file),
            ],
        ),
    )
    .await;
    assert_eq!(run.code, 143, "{}", run.stderr);
    assert!(run.stderr.contains("stopped by SIGTERM"), "{}", run.stderr);
    assert!(!run.stderr.contains("Ctrl-C"), "{}", run.stderr);
    assert_eq!(run.summary()["exit_code"], 143);
    accounted_after_the_interrupt(&run, 200);
}
