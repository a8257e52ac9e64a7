//! Integration tests: soak, driving the real binary against its embedded listener.

mod failover;

use crate::support::mllp;
use crate::support::no_payload::{assert_no_marker, MARKER};
use serde_json::Value;
use std::path::Path;

/// A template carrying the payload marker, so stderr can be checked for leaks.
fn marked_template(dir: &Path) -> std::path::PathBuf {
    let path = dir.join("adt.hl7");
    let text = format!(
        "MSH|^~\\&|APP|FAC|RCV|RFAC|20240101000000||ADT^A01|X|T|2.5\r\nPID|1||{MARKER}^^^H^MR||DOE^JANE\r\n"
    );
    std::fs::write(&path, text).unwrap();
    path
}

struct Run {
    code: i32,
    report: Value,
    stderr: String,
}

fn soak(args: &[&str]) -> Run {
    let out = mllp()
        .arg("soak")
        .args(args)
        .arg("--json")
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    let report = serde_json::from_str(stdout.trim())
        .unwrap_or_else(|e| panic!("stdout is not one report ({e}): {stdout}\nstderr: {stderr}"));
    Run {
        code: out.status.code().unwrap_or(-1),
        report,
        stderr,
    }
}

fn n(report: &Value, field: &str) -> u64 {
    report[field]
        .as_u64()
        .unwrap_or_else(|| panic!("{field} missing"))
}

fn assert_closes(run: &Run) {
    let r = &run.report;
    assert_eq!(r["accounting_ok"], true, "{r:#}\n{}", run.stderr);
    let sum: u64 = [
        "accepted",
        "negative",
        "committed_only",
        "unknown_fate",
        "never_delivered",
        "refused",
    ]
    .iter()
    .map(|f| n(r, f))
    .sum();
    assert_eq!(n(r, "generated"), sum);
    assert!(n(r, "generated") > 0);
}

#[test]
fn embedded_default_closes_its_accounting_and_exits_0() {
    let run = soak(&["--duration", "2s"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_closes(&run);
    let r = &run.report;
    assert_eq!(n(r, "accepted"), n(r, "generated"));
    assert_eq!(r["by_code"]["AA"], r["accepted"]);
    let listener = &r["accounting"]["listener"];
    assert_eq!(listener["committed"], r["accepted"]);
    for field in ["p50", "p90", "p99", "p999", "max"] {
        assert!(r["latency_ms"][field].is_number(), "{field}");
    }
    assert!(!r["histogram"].as_str().unwrap().is_empty());
    assert!(r["per_second"].as_array().unwrap().len() >= 2);
    assert!(
        r["state_changes"]["CONNECTING->CONNECTED"]
            .as_u64()
            .unwrap()
            >= 1
    );
    // The live view is off under --json and when stderr is not a terminal.
    assert!(!run.stderr.contains('\x1b'), "{}", run.stderr);
    assert!(!run.stderr.contains("soak "), "{}", run.stderr);
}

#[test]
fn plain_progress_lines_without_a_terminal_and_no_payload_on_stderr() {
    let dir = tempfile::tempdir().unwrap();
    let template = marked_template(dir.path());
    let report = dir.path().join("report.json");
    let out = mllp()
        .args(["soak", "--messages", "3000", "--connections", "2"])
        .args(["--report-interval", "100ms", "--chaos", "reset=0.01"])
        .arg("--template")
        .arg(&template)
        .arg("--report")
        .arg(&report)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert!(stderr.contains("soak "), "plain lines expected: {stderr}");
    assert!(!stderr.contains('\x1b'), "no terminal codes: {stderr}");
    assert_no_marker("soak stderr", &stderr, MARKER);
    assert!(stdout.contains("accounting closes"), "{stdout}");
    let written: Value = serde_json::from_slice(&std::fs::read(&report).unwrap()).unwrap();
    assert_eq!(written["accounting_ok"], true);
    assert_eq!(written["generated"], 3000);
}

fn chaos(spec: &str) -> Run {
    let run = soak(&[
        "--messages",
        "3000",
        "--connections",
        "2",
        "--chaos",
        spec,
        "--seed",
        "7",
    ]);
    assert_closes(&run);
    assert_eq!(run.code, 0, "{spec}: {}", run.stderr);
    run
}

#[test]
fn accounting_closes_under_resets() {
    let run = chaos("reset=0.01");
    assert!(n(&run.report, "reconnects") > 0, "{:#}", run.report);
}

#[test]
fn accounting_closes_under_stalls_and_delays() {
    let run = chaos("stall=0.002:200ms,delay=0.05:5ms");
    assert_eq!(n(&run.report, "accepted"), 3000);
}

#[test]
fn unpaced_batches_stop_exactly_at_the_budget() {
    // Budgets of 334, 334 and 333 that no batch of a 7-message window divides.
    let run = soak(&["--messages", "1001", "--connections", "3", "--window", "7"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_closes(&run);
    assert_eq!(n(&run.report, "generated"), 1001);
    assert_eq!(n(&run.report, "accepted"), 1001);
    assert_eq!(run.report["accounting"]["listener"]["committed"], 1001);
}

#[test]
fn after_the_duration_what_was_generated_settles_before_the_close() {
    let run = soak(&[
        "--duration",
        "1s",
        "--connections",
        "2",
        "--chaos",
        "stall=0.002:200ms,delay=0.05:5ms",
        "--seed",
        "7",
    ]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_closes(&run);
    assert_eq!(n(&run.report, "accepted"), n(&run.report, "generated"));
}

#[test]
fn a_settle_wait_cut_by_the_drain_timeout_reports_the_rest_by_population() {
    // The first message stalls the link far beyond the drain timeout: the window fills, the
    // duration ends, and what is still pending is settled and counted, not lost.
    let run = soak(&[
        "--duration",
        "300ms",
        "--chaos",
        "stall=1:30s",
        "--drain-timeout",
        "200ms",
    ]);
    assert_closes(&run);
    let r = &run.report;
    let pending = n(r, "unknown_fate") + n(r, "never_delivered");
    assert!(pending > 0, "{r:#}");
    assert_eq!(n(r, "accepted") + pending, n(r, "generated"), "{r:#}");
}

#[test]
fn accounting_closes_under_link_drops() {
    let run = chaos("drop=0.002:300ms");
    assert!(n(&run.report, "reconnects") > 0, "{:#}", run.report);
    let refused = run.report["errors_by_cause"]["connection-refused"].as_u64();
    assert!(refused.unwrap_or(0) > 0, "{:#}", run.report);
}

#[test]
fn accounting_closes_under_nacks() {
    let run = chaos("nack=0.05");
    let negative = n(&run.report, "negative");
    assert!(negative > 0);
    assert_eq!(run.report["by_code"]["AE"], negative);
}

#[test]
fn missed_thresholds_exit_6_and_are_named() {
    let run = soak(&[
        "--messages",
        "300",
        "--max-p99",
        "1us",
        "--min-throughput",
        "1e12",
    ]);
    assert_eq!(run.code, 6);
    // Limits read as they were given, durations in human units, not as raw floats.
    let p99 = run.stderr.lines().find(|l| l.contains("max-p99")).unwrap();
    assert!(p99.contains("--max-p99 1us (observed "), "{p99}");
    assert!(
        ["ns)", "us)", "ms)", "s)"].iter().any(|u| p99.ends_with(u)),
        "{p99}"
    );
    assert!(
        run.stderr
            .contains("--min-throughput 1000000000000 (observed "),
        "{}",
        run.stderr
    );
    let missed: Vec<&str> = run.report["thresholds"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|v| v["ok"] == false)
        .map(|v| v["name"].as_str().unwrap())
        .collect();
    assert_eq!(missed, ["max-p99", "min-throughput"]);
    let met = soak(&[
        "--messages",
        "300",
        "--max-p99",
        "1m",
        "--max-error-rate",
        "0",
    ]);
    assert_eq!(met.code, 0, "{}", met.stderr);
}

#[test]
fn builtin_message_needs_allow_synthetic_against_a_real_host() {
    let out = mllp()
        .args([
            "soak",
            "--host",
            "127.0.0.1",
            "--port",
            "9",
            "--duration",
            "1s",
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--allow-synthetic"));
    let out = mllp()
        .args([
            "soak",
            "--host",
            "127.0.0.1",
            "--allow-synthetic",
            "--chaos",
            "nack=0.1",
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn merge_sums_reports_from_several_runs() {
    let dir = tempfile::tempdir().unwrap();
    let mut paths = Vec::new();
    for (i, count) in ["200", "300"].iter().enumerate() {
        let path = dir.path().join(format!("r{i}.json"));
        let out = mllp()
            .args(["soak", "--quiet", "--messages", count, "--report"])
            .arg(&path)
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(0));
        paths.push(path);
    }
    let out = mllp()
        .args(["soak", "--merge"])
        .args(&paths)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
    let merged: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(merged["generated"], 500);
    assert_eq!(merged["accepted"], 500);
    assert_eq!(merged["runs"], 2);
    assert_eq!(merged["accounting_ok"], true);
}

#[test]
fn an_unreachable_peer_ends_in_exit_4_with_the_accounting_closed() {
    // A port that was free a moment ago: connects are refused, a transient cause.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let port = port.to_string();
    let run = soak(&[
        "--host",
        "127.0.0.1",
        "--port",
        &port,
        "--allow-synthetic",
        "--give-up-after",
        "500ms",
        "--duration",
        "10s",
    ]);
    assert_eq!(run.code, 4, "{}", run.stderr);
    assert_closes(&run);
    assert_eq!(n(&run.report, "accepted"), 0);
    assert!(
        run.report["errors_by_cause"]["connection-refused"]
            .as_u64()
            .unwrap()
            > 0
    );
    // Messages the closed client turned away carry a public cause, not the client's own.
    for cause in run.report["outcomes_by_cause"].as_object().unwrap().keys() {
        assert!(
            ["connection-refused", "shutdown", "in-flight-orphan"].contains(&cause.as_str()),
            "not a known cause: {cause}"
        );
    }
}

#[test]
fn plain_lines_name_a_give_up_and_the_close() {
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
        .to_string();
    let dir = tempfile::tempdir().unwrap();
    let report = dir.path().join("report.json");
    let out = mllp()
        .args(["soak", "--host", "127.0.0.1", "--port", &port])
        .args(["--allow-synthetic", "--give-up-after", "300ms"])
        .args(["--duration", "10s", "--report"])
        .arg(&report)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(4), "{stderr}");
    assert!(
        stderr.contains("connection 1: RECONNECTING -> CLOSED"),
        "the give-up is named: {stderr}"
    );
}

#[test]
fn the_chaos_proxy_in_front_of_a_real_peer_resets_and_heals() {
    let peer = crate::support::listen_proc::ListenProc::start(&[]);
    let port = peer.addr.port().to_string();
    let run = soak(&[
        "--host",
        "127.0.0.1",
        "--port",
        &port,
        "--allow-synthetic",
        "--messages",
        "2000",
        "--chaos",
        "reset=0.01,delay=0.02:5ms",
        "--seed",
        "3",
    ]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_closes(&run);
    assert!(n(&run.report, "reconnects") > 0, "{:#}", run.report);
    assert!(run.report["accounting"]["listener"].is_null());
}
