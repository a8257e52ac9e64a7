//! The hostile crowd: many connections at once from 127.0.0.2 (slow drip, half frames, garbage,
//! idle, TLS handshakes that never finish) against a TLS `listen --max-buffered 64MiB`, while a
//! good sender from 127.0.0.1 gets every message accepted and the listener's memory stays
//! bounded. The CI variant is small; the full ones are opt-in:
//!
//! ```text
//! cargo test --release --test it crowd:: -- --ignored --nocapture --test-threads 1
//! ```

use crate::support::certs::Certs;
use crate::support::crowd::{Crowd, KINDS};
use crate::support::listen_proc::{is, ListenProc};
use crate::support::send_proc::{finish, messages};
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Duration;

/// Resident memory the listener may reach under the crowd.
const RSS_LIMIT_KIB: u64 = 160 * 1000;

struct Scenario {
    /// Hostile connections at once, spread over the kinds.
    connections: usize,
    /// Messages the good sender sends, unloaded and then under the crowd.
    messages: usize,
    /// Lower the listener's descriptor limit to this.
    fd_limit: Option<u64>,
    /// Flags added to `listen`.
    extra: &'static [&'static str],
}

struct Outcome {
    unloaded_per_second: f64,
    loaded_per_second: f64,
    peak_rss_kib: u64,
    crowd_connects: u64,
    accept_errors: u64,
    closes_by_cause: std::collections::BTreeMap<String, u64>,
}

/// Peak resident memory of process `pid`, in KiB.
fn peak_rss_kib(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .expect("VmHWM in /proc/PID/status")
}

/// Run the good sender over TLS; every message must be accepted. Returns messages per second.
async fn good_sender(certs: &Certs, port: u16, n: usize, tag: &str) -> f64 {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("good.hl7");
    std::fs::write(&file, messages(tag, n)).unwrap();
    let mut cmd = tokio::process::Command::new(crate::support::mllp_bin());
    cmd.args([
        "send",
        "--host",
        "127.0.0.1",
        "--port",
        &port.to_string(),
        "--ca",
        certs.ca.to_str().unwrap(),
        "--json",
        file.to_str().unwrap(),
    ]);
    let run = finish(cmd, None).await;
    assert!(
        !run.stdout.is_empty(),
        "good sender: {}\n{}",
        run.code,
        run.stderr
    );
    let summary = run.summary();
    assert_eq!(run.code, 0, "good sender: {summary}\n{}", run.stderr);
    assert_eq!(summary["accepted"], n as u64, "{summary}");
    summary["messages_per_second"].as_f64().unwrap()
}

async fn hostile_crowd(scenario: Scenario) -> Outcome {
    let certs = Certs::generate();
    let mut args = vec![
        "--tls-cert",
        certs.server.cert.to_str().unwrap(),
        "--tls-key",
        certs.server.key.to_str().unwrap(),
        "--max-buffered",
        "64MiB",
        "--format",
        "raw",
    ];
    args.extend(scenario.extra);
    let server = match scenario.fd_limit {
        Some(limit) => ListenProc::start_with_fd_limit(&args, limit),
        None => ListenProc::start(&args),
    };
    let port = server.addr.port();
    let unloaded = good_sender(&certs, port, scenario.messages, "U").await;

    let tls = Arc::new(certs.client_options().build("localhost").unwrap());
    let per_kind = scenario.connections / KINDS.len();
    let crowd = Crowd::start(
        server.addr,
        "127.0.0.2".parse().unwrap(),
        per_kind,
        Some(tls),
    );
    // Let the crowd arrive before the good sender does.
    let arrived = scenario.connections as u64;
    for _ in 0..200 {
        if crowd.tally.connects.load(Ordering::Relaxed) >= arrived {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let loaded = good_sender(&certs, port, scenario.messages, "L").await;
    let peak = peak_rss_kib(server.pid());
    let connects = crowd.tally.connects.load(Ordering::Relaxed);
    crowd.stop().await;

    server.signal("TERM");
    let (status, events, _) = tokio::task::block_in_place(|| server.wait());
    assert_eq!(status.code(), Some(0), "the listener stops cleanly");
    let stats = events
        .iter()
        .find(|e| is("stats")(e))
        .expect("a stats event")
        .clone();
    let closes_by_cause = stats["closed_by_cause"]
        .as_object()
        .unwrap()
        .iter()
        .map(|(k, v)| (k.clone(), v.as_u64().unwrap()))
        .collect();
    Outcome {
        unloaded_per_second: unloaded,
        loaded_per_second: loaded,
        peak_rss_kib: peak,
        crowd_connects: connects,
        accept_errors: stats["accept_errors"].as_u64().unwrap(),
        closes_by_cause,
    }
}

fn report(name: &str, o: &Outcome) {
    println!(
        "{name}: good sender {:.0} msg/s unloaded, {:.0} msg/s under the crowd ({:.0}%); \
         listener peak RSS {:.1} MB; crowd connects {}; accept errors {}; closes {:?}",
        o.unloaded_per_second,
        o.loaded_per_second,
        100.0 * o.loaded_per_second / o.unloaded_per_second,
        o.peak_rss_kib as f64 / 1000.0,
        o.crowd_connects,
        o.accept_errors,
        o.closes_by_cause,
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_hostile_crowd_does_not_stop_a_good_sender() {
    let outcome = hostile_crowd(Scenario {
        connections: 300,
        messages: 300,
        fd_limit: None,
        // A share well below the crowd's size, so turning the excess away does not depend on
        // how many of its connections happen to be open at once.
        extra: &["--max-connections-per-peer", "32"],
    })
    .await;
    report("crowd of 300", &outcome);
    assert!(outcome.peak_rss_kib < RSS_LIMIT_KIB);
    // More of 127.0.0.2's connections than its share arrived: the rest were turned away.
    assert!(
        outcome
            .closes_by_cause
            .get("per-peer-limit")
            .copied()
            .unwrap_or(0)
            > 0
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
#[ignore = "opt-in load test: 2,000 hostile connections"]
async fn a_crowd_of_2000_does_not_stop_a_good_sender() {
    let outcome = hostile_crowd(Scenario {
        connections: 2000,
        messages: 5000,
        fd_limit: None,
        extra: &[],
    })
    .await;
    report("crowd of 2000", &outcome);
    assert!(outcome.peak_rss_kib < RSS_LIMIT_KIB);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
#[ignore = "opt-in load test: 2,000 hostile connections at a descriptor limit of 1024"]
async fn a_crowd_of_2000_at_1024_descriptors_gets_accept_errors_and_nobody_hangs() {
    // One address may take every connection here, so the crowd reaches the descriptor limit.
    let outcome = hostile_crowd(Scenario {
        connections: 2000,
        messages: 2000,
        fd_limit: Some(1024),
        extra: &["--max-connections-per-peer", "1024"],
    })
    .await;
    report("crowd of 2000 at 1024 descriptors", &outcome);
    assert!(
        outcome.accept_errors > 0,
        "the descriptor limit was reached"
    );
    assert!(outcome.peak_rss_kib < RSS_LIMIT_KIB);
}
