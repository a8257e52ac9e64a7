//! Integration tests: the words of send's human output: what a warning means, said next to its
//! code (JSON keeps the bare code); endpoints written as URLs.

use crate::support::peer::{Behaviour, Peer, Script};
use crate::support::send_proc::{finish, Run};
use serde_json::Value;

/// `mllp GLOBAL... send --host 127.0.0.1 --port PORT FLAGS... FILE` with one ADT `E1` in FILE.
async fn send_one(port: u16, global: &[&str], flags: &[&str]) -> Run {
    let port = port.to_string();
    send_to(&["--host", "127.0.0.1", "--port", &port], global, flags).await
}

/// `mllp GLOBAL... send TARGET... FLAGS... FILE` with one ADT `E1` in FILE.
async fn send_to(target: &[&str], global: &[&str], flags: &[&str]) -> Run {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("a.hl7");
    std::fs::write(
        &file,
        "MSH|^~\\&|A|B|C|D|20240101000000||ADT^A01|E1|P|2.5\rPID|1\r",
    )
    .unwrap();
    let mut cmd = tokio::process::Command::new(crate::support::mllp_bin());
    cmd.args(global)
        .arg("send")
        .args(target)
        .args(flags)
        .arg(&file);
    finish(cmd, None).await
}

#[tokio::test(flavor = "multi_thread")]
async fn a_warning_says_what_it_means_for_people_and_stays_a_code_in_json() {
    let peer = Peer::start(Script::always(Behaviour::WrongId("AA"))).await;
    let flags = ["--ack-timeout", "300ms", "--no-reconnect"];
    let human = send_one(peer.port(), &[], &flags).await;
    let line = human
        .stderr
        .lines()
        .find(|l| l.contains("MLLP_ACK_UNMATCHED_CONTROL_ID"))
        .unwrap_or_else(|| panic!("no warning in {}", human.stderr));
    assert!(
        line.starts_with("warning MLLP_ACK_UNMATCHED_CONTROL_ID at byte ")
            && line.ends_with(": an ACK named a control ID no message in flight has"),
        "{line}"
    );

    let json = send_one(peer.port(), &["--log-format", "json"], &flags).await;
    let warning: Value = json
        .stderr
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .find(|e| e["event"] == "warning")
        .unwrap_or_else(|| panic!("no warning event in {}", json.stderr));
    assert_eq!(
        warning["code"], "MLLP_ACK_UNMATCHED_CONTROL_ID",
        "{warning}"
    );
    let keys: Vec<&String> = warning.as_object().unwrap().keys().collect();
    assert_eq!(keys, ["byte_offset", "code", "event"], "{warning}");
}

#[tokio::test(flavor = "multi_thread")]
async fn an_mllp_url_is_its_endpoint_and_mllps_says_to_turn_tls_on() {
    let peer = Peer::start(Script::always(Behaviour::Ack("AA"))).await;
    let url = format!("mllp://127.0.0.1:{}", peer.port());
    let run = send_to(&["--host", &url], &[], &["--json"]).await;
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(run.messages()[0]["outcome"], "accepted", "{}", run.stdout);

    let tls = format!("mllps://127.0.0.1:{}", peer.port());
    let run = send_to(&["--host", &tls], &[], &[]).await;
    assert_eq!(run.code, 2, "{}", run.stderr);
    assert!(
        run.stderr.contains(
            "`mllps://` is not part of an address: give HOST[:PORT] and turn TLS on with --tls"
        ),
        "{}",
        run.stderr
    );
    let run = send_to(&["--host", "http://127.0.0.1:80"], &[], &[]).await;
    assert_eq!(run.code, 2, "{}", run.stderr);
    assert!(
        run.stderr.contains("`http://` is not an MLLP address"),
        "{}",
        run.stderr
    );
    assert_eq!(peer.connections(), 1);
}

#[tokio::test(flavor = "multi_thread")]
async fn verbose_ack_events_round_latency_like_the_records() {
    let peer = Peer::start(Script::always(Behaviour::Ack("AA"))).await;
    let run = send_one(peer.port(), &["-v", "--log-format", "json"], &[]).await;
    assert_eq!(run.code, 0, "{}", run.stderr);
    let ack: Value = run
        .stderr
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .find(|e| e["event"] == "ack")
        .unwrap_or_else(|| panic!("no ack event in {}", run.stderr));
    let ms = ack["latency_ms"].as_f64().unwrap();
    // Written as a JSON number with at most one decimal.
    let text = ack["latency_ms"].to_string();
    let decimals = text.split_once('.').map_or(0, |(_, d)| d.len());
    assert!(decimals <= 1, "{text} ({ms})");
}

#[tokio::test(flavor = "multi_thread")]
async fn giving_up_names_the_last_failure_too() {
    let closed = {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        listener.local_addr().unwrap().port()
    };
    let run = send_one(closed, &[], &["--json", "--no-reconnect"]).await;
    let summary = run.summary();
    assert_eq!(summary["gave_up"], "connection-refused", "{summary}");
    assert_eq!(summary["last_failure"], "connection-refused", "{summary}");
}
