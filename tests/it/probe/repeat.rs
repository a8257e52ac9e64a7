//! Repeated probes: one line each, then the statistics, also when Ctrl-C cuts the run short.

use super::{probe, Scratch};
use crate::support::mllp_bin;
use crate::support::peer::{Behaviour, Peer, Script};
use serde_json::Value;
use std::process::{Command, Stdio};

#[tokio::test(flavor = "multi_thread")]
async fn repeated_probes_report_each_then_statistics() {
    let s = Scratch::new();
    let peer = Peer::start(Script::then(
        vec![Behaviour::Ack("AA"), Behaviour::CloseAtOnce],
        Behaviour::Ack("AA"),
    ))
    .await;
    let target = format!("127.0.0.1:{}", peer.port());
    let args = [
        &target,
        "--send",
        "--count",
        "3",
        "--interval",
        "10ms",
        "--banner-wait",
        "0s",
    ];
    let human = probe(&args, &s.hosts()).await;
    assert_eq!(human.code, 4, "{}", human.stdout);
    assert!(human.stdout.contains("1: ok AA"), "{}", human.stdout);
    assert!(human.stdout.contains("2: transient"), "{}", human.stdout);
    assert!(
        human.stdout.contains("3 probes, 2 ok, 1 failed"),
        "{}",
        human.stdout
    );
    assert!(human.stdout.contains("median"), "{}", human.stdout);

    let peer = Peer::start(Script::always(Behaviour::Ack("AA"))).await;
    let target = format!("127.0.0.1:{}", peer.port());
    let args = [
        &target,
        "--send",
        "--count",
        "3",
        "--interval",
        "10ms",
        "--json",
    ];
    let run = probe(&args, &s.hosts()).await;
    assert_eq!(run.code, 0, "{}", run.stdout);
    let lines: Vec<Value> = run
        .stdout
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), 4);
    assert!(lines[..3]
        .iter()
        .all(|l| l["type"] == "probe" && l["verdict"]["class"] == "ok"));
    let summary = &lines[3];
    assert_eq!(
        (summary["type"].as_str(), summary["probes"].as_u64()),
        (Some("summary"), Some(3))
    );
    assert_eq!(summary["failed"], 0);
    assert_eq!(summary["phases"]["ack"]["count"], 3);
    assert!(
        summary["phases"]["ack"]["p99"].as_f64().unwrap()
            >= summary["phases"]["ack"]["min"].as_f64().unwrap()
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn ctrl_c_prints_the_statistics_so_far() {
    let s = Scratch::new();
    let peer = Peer::start(Script::always(Behaviour::Ack("AA"))).await;
    let target = format!("127.0.0.1:{}", peer.port());
    let child = Command::new(mllp_bin())
        .args([
            "probe",
            &target,
            "--send",
            "--count",
            "1000",
            "--interval",
            "50ms",
        ])
        .env("MLLP_HOSTS_FILE", s.hosts())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    peer.wait_for(|r| r.payloads.len() >= 2).await;
    let interrupted = Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(interrupted.success());
    let output = tokio::task::spawn_blocking(move || child.wait_with_output().unwrap())
        .await
        .unwrap();
    crate::support::no_payload::assert_output_clean("probe", &output);
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert_eq!(output.status.code(), Some(0), "{stdout}");
    assert!(stdout.contains("1: ok AA"), "{stdout}");
    assert!(stdout.contains("0 failed (0.0% loss)"), "{stdout}");
    assert!(!stdout.contains("1000 probes"), "{stdout}");
    assert!(stdout.contains("median"), "{stdout}");
}
