//! Integration tests: the words of send's human output: what a warning means, said next to its
//! code (JSON keeps the bare code).

use crate::support::peer::{Behaviour, Peer, Script};
use crate::support::send_proc::{finish, Run};
use serde_json::Value;

/// `mllp ARGS... --host 127.0.0.1 --port PORT FILE` with one ADT `E1` in FILE.
async fn send_one(port: u16, global: &[&str], flags: &[&str]) -> Run {
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
        .args(["--host", "127.0.0.1", "--port", &port.to_string()])
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
