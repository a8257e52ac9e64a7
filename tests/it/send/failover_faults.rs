//! `send --host A --host B` against primaries that fail in ways a refused connect does not show:
//! a proxy that takes the connection and closes it at once, a run without reconnects, and several
//! links moving together.

use super::{path, send, write};
use crate::support::peer::{Behaviour, Peer, Script};
use crate::support::peer_wire::message;
use crate::support::ports::closed_port;

fn input(dir: &std::path::Path, n: usize) -> String {
    let bytes: Vec<u8> = (1..=n)
        .flat_map(|i| message(&format!("H{i}"), "PAYLOADMARKER7Q3"))
        .collect();
    path(&write(dir, "in.hl7", &bytes))
}

fn args(a: u16, b: u16, rest: &[&str]) -> Vec<String> {
    let mut v: Vec<String> = [
        "--json",
        "--backoff-initial",
        "10ms",
        "--backoff-max",
        "50ms",
        "--host",
        &format!("127.0.0.1:{a}"),
        "--host",
        &format!("127.0.0.1:{b}"),
    ]
    .map(String::from)
    .to_vec();
    v.extend(rest.iter().map(|s| s.to_string()));
    v
}

fn all_accepted(run: &super::Run, n: usize) {
    assert_eq!(run.code, 0, "{}{}", run.stdout, run.stderr);
    let records = run.messages();
    assert_eq!(records.len(), n, "{}", run.stdout);
    assert!(
        records.iter().all(|r| r["outcome"] == "accepted"),
        "{}",
        run.stdout
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_primary_that_closes_every_connection_unanswered_counts_as_failed_connects() {
    // A proxy whose engine is down: the TCP connect succeeds, then the connection closes.
    let proxy = Peer::start(Script::always(Behaviour::CloseAtOnce)).await;
    let backup = Peer::start(Script::always(Behaviour::Ack("AA"))).await;
    let dir = tempfile::tempdir().unwrap();
    let file = input(dir.path(), 4);
    let run = send(&args(
        proxy.port(),
        backup.port(),
        &["--failover-after", "2", "--give-up-after", "10s", &file],
    ))
    .await;
    all_accepted(&run, 4);
    assert_eq!(backup.payloads().len(), 4, "{}", run.stderr);
    assert!(proxy.connections() >= 2);
}

#[tokio::test(flavor = "multi_thread")]
async fn without_reconnects_each_host_is_tried_once_in_order() {
    let backup = Peer::start(Script::always(Behaviour::Ack("AA"))).await;
    let dir = tempfile::tempdir().unwrap();
    let file = input(dir.path(), 3);
    let run = send(&args(
        closed_port(),
        backup.port(),
        &["--no-reconnect", &file],
    ))
    .await;
    all_accepted(&run, 3);
    assert_eq!(backup.payloads().len(), 3);

    // Every host down: each tried once, then every message never delivered (exit 4).
    let run = send(&args(
        closed_port(),
        closed_port(),
        &["--no-reconnect", "--log-format", "json", "--events", &file],
    ))
    .await;
    assert_eq!(run.code, 4, "{}{}", run.stdout, run.stderr);
    assert!(run
        .messages()
        .iter()
        .all(|r| r["outcome"] == "never-delivered"));
    let failures = run
        .stderr
        .lines()
        .filter(|l| l.contains("\"link_error\""))
        .count();
    assert_eq!(failures, 2, "{}", run.stderr);

    // Counting failed connects per host means nothing when each host gets one.
    for flag in [["--failover-after", "1"], ["--failback-after", "1s"]] {
        let run = send(&args(1, 2, &["--no-reconnect", flag[0], flag[1], &file])).await;
        assert_eq!(run.code, 2, "{flag:?}: {}", run.stderr);
        assert!(run.stderr.contains(flag[0]), "{}", run.stderr);
        assert!(run.stderr.contains("--no-reconnect"), "{}", run.stderr);
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn every_link_that_moves_says_so() {
    let a = closed_port();
    let backup = Peer::start(Script::always(Behaviour::Ack("AA"))).await;
    let dir = tempfile::tempdir().unwrap();
    let file = input(dir.path(), 6);
    let run = send(&args(
        a,
        backup.port(),
        &[
            "--connections",
            "2",
            "--order-key",
            "none",
            "--failover-after",
            "1",
            "--events",
            &file,
        ],
    ))
    .await;
    all_accepted(&run, 6);
    let b = backup.port();
    for link in 0..2 {
        let moved = format!("link {link}: failover 127.0.0.1:{a} -> 127.0.0.1:{b}");
        assert_eq!(run.stderr.matches(&moved).count(), 1, "{}", run.stderr);
        let up = format!("link {link}: state CONNECTING -> CONNECTED (connected) on 127.0.0.1:{b}");
        assert!(run.stderr.contains(&up), "{}", run.stderr);
        let on_a =
            format!("link {link}: state CONNECTING -> CONNECTED (connected) on 127.0.0.1:{a}");
        assert!(!run.stderr.contains(&on_a), "{}", run.stderr);
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_failback_time_of_zero_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let file = input(dir.path(), 1);
    let run = send(&args(1, 2, &["--failback-after", "0s", &file])).await;
    assert_eq!(run.code, 2, "{}{}", run.stdout, run.stderr);
    assert!(run.stderr.contains("--failback-after"), "{}", run.stderr);
}
