//! Integration tests: small things a reader of the output relies on: seeds that survive a JSON
//! reader, durations rounded for people.

use crate::support::listen_proc::{is, ListenProc};
use crate::support::mllp;
use crate::support::ports::closed_port;
use serde_json::Value;

/// The largest seed: a JSON reader that holds numbers as doubles (jq) cannot keep it exactly.
const BIG_SEED: &str = "18446744073709551615";

#[test]
fn soak_reports_its_seed_as_a_string() {
    let out = mllp()
        .args(["soak", "--messages", "20", "--seed", BIG_SEED, "--json"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(report["config"]["seed"], BIG_SEED, "{}", report["config"]);
}

#[test]
fn listen_reports_its_seed_as_a_string() {
    let listen = ListenProc::start(&["--nack-rate", "0.5", "--seed", BIG_SEED]);
    listen.signal("TERM");
    let (_, events, _) = listen.wait();
    let stats = events
        .iter()
        .find(|e| is("stats")(e))
        .expect("a stats event");
    assert_eq!(stats["seed"], BIG_SEED, "{stats}");
}

/// Every duration in `line` (a number directly followed by `ms` or `s`) has at most one decimal.
fn assert_rounded(line: &str) {
    for word in line.split(|c: char| c.is_whitespace() || c == ',' || c == ')') {
        let number = word
            .strip_suffix("ms")
            .or_else(|| word.strip_suffix('s'))
            .filter(|n| !n.is_empty() && n.chars().all(|c| c.is_ascii_digit() || c == '.'));
        if let Some(number) = number {
            let decimals = number.split_once('.').map_or(0, |(_, d)| d.len());
            assert!(decimals <= 1, "unrounded duration {word:?} in {line:?}");
        }
    }
}

#[test]
fn send_events_show_rounded_durations() {
    let closed = closed_port();
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("a.hl7");
    std::fs::write(
        &file,
        "MSH|^~\\&|A|B|C|D|20240101000000||ADT^A01|E1|P|2.5\rPID|1\r",
    )
    .unwrap();
    let out = mllp()
        .args([
            "send",
            "--events",
            "--max-retries",
            "2",
            "--backoff-initial",
            "10ms",
        ])
        .args(["--host", "127.0.0.1", "--port", &closed.to_string()])
        .arg(&file)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    let reconnecting: Vec<&str> = stderr
        .lines()
        .filter(|l| l.contains("reconnecting: attempt"))
        .collect();
    assert!(!reconnecting.is_empty(), "{stderr}");
    for line in reconnecting {
        assert_rounded(line);
    }
}

mod words;
