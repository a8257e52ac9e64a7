//! The adaptive sender never bends a fate: a message written is never reported never-delivered,
//! FIFO writes a message once, one stray reply does not stop a run, a message that makes the
//! peer drop the connection costs only itself, and `--no-pipeline` adds no wait by control ID.

use super::{ids, path, send, to, write};
use crate::support::no_payload::MARKER;
use crate::support::peer::{Behaviour, Peer, Script, Step};
use crate::support::peer_wire::message;
use crate::support::send_proc::messages;
use serde_json::Value;

/// `n` messages `{prefix}1..` in one file; returns the file's path.
fn file_of(dir: &std::path::Path, prefix: &str, n: usize) -> String {
    path(&write(dir, "in.hl7", &messages(prefix, n)))
}

/// Every record that says never-delivered names a message the peer never read.
fn never_delivered_was_never_read(records: &[Value], peer: &Peer) {
    let read = ids(&peer.payloads());
    for r in records {
        if r["outcome"] == "never-delivered" {
            let id = r["control_id"].as_str().unwrap();
            assert!(
                !read.iter().any(|x| x == id),
                "read yet never-delivered: {r}"
            );
        }
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_message_the_peer_read_is_never_reported_never_delivered() {
    // AE for the first, silence for the second, a reset at the third; then an HTTP server.
    let steps = &[Step::Ack("AE"), Step::Silent, Step::Reset];
    let peer = Peer::start(Script::then(vec![Behaviour::Steps(steps)], Behaviour::Http)).await;
    let dir = tempfile::tempdir().unwrap();
    let file = file_of(dir.path(), "W", 6);
    let run = send(&to(peer.port(), &["--json", "--window", "2", &file])).await;
    let records = run.messages();
    assert_eq!(records.len(), 6, "{}", run.stdout);
    assert_eq!(records[0]["outcome"], "negative", "{}", records[0]);
    for r in &records[1..3] {
        assert_eq!(r["outcome"], "unknown-fate", "{r}");
    }
    never_delivered_was_never_read(&records, &peer);
    assert_eq!(run.summary()["accounting_ok"], true);
    assert_eq!(run.code, 5, "{}", run.stderr);
}

#[tokio::test(flavor = "multi_thread")]
async fn fifo_writes_a_message_once_without_at_least_once() {
    for third in [Step::Silent, Step::NotHl7] {
        let steps: &'static [Step] = match third {
            Step::Silent => &[Step::Ack("AA"), Step::Ack("AA"), Step::Silent],
            _ => &[Step::Ack("AA"), Step::Ack("AA"), Step::NotHl7],
        };
        let script = Script::then(vec![Behaviour::Steps(steps)], Behaviour::Ack("AA"));
        let peer = Peer::start(script.clone()).await;
        let dir = tempfile::tempdir().unwrap();
        let file = file_of(dir.path(), "F", 3);
        let flags = ["--json", "--correlate", "fifo", "--ack-timeout", "500ms"];
        let run = send(&to(peer.port(), &[&flags[..], &[file.as_str()]].concat())).await;
        let records = run.messages();
        assert_eq!(
            records[2]["outcome"], "unknown-fate",
            "{third:?}: {}",
            records[2]
        );
        assert_eq!(records[2]["attempts"], 1, "{third:?}: {}", records[2]);
        let read = ids(&peer.payloads());
        assert_eq!(read, ["F1", "F2", "F3"], "{third:?}: written twice");
        assert_eq!(run.code, 3, "{third:?}: {}", run.stderr);

        // Asked for: the risk becomes a duplicate instead.
        let peer = Peer::start(script).await;
        let flags = [&flags[..], &["--at-least-once", file.as_str()]].concat();
        let run = send(&to(peer.port(), &flags)).await;
        assert_eq!(run.messages()[2]["outcome"], "accepted", "{third:?}");
        assert_eq!(ids(&peer.payloads()), ["F1", "F2", "F3", "F3"]);
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn one_stray_reply_ahead_of_the_real_one_does_not_stop_the_run() {
    let peer = Peer::start(Script::always(Behaviour::Steps(&[Step::StrayFirst("AA")]))).await;
    let dir = tempfile::tempdir().unwrap();
    let file = file_of(dir.path(), "S", 1);
    let run = send(&to(peer.port(), &["--json", &file])).await;
    let r = &run.messages()[0];
    assert_eq!(r["outcome"], "accepted", "{r}\n{}", run.stderr);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(run.stderr.contains("MLLP_ACK_UNMATCHED_CONTROL_ID"));
}

#[tokio::test(flavor = "multi_thread")]
async fn fifo_never_credits_a_stale_reply_of_an_earlier_connection() {
    // Connection 1 answers F1 and F2 and closes on reading F3; connection 2 first repeats the
    // answer of a message settled on connection 1, then answers F4 `AE`.
    for (stale, pace) in [
        ("F2", "--no-pipeline"),
        ("F3", "--no-pipeline"),
        ("F2", "--window"),
    ] {
        let first = Behaviour::Steps(&[Step::Ack("AA"), Step::Ack("AA"), Step::Close]);
        let second = match stale {
            "F2" => Behaviour::Steps(&[Step::StaleFirst("F2", "AE")]),
            _ => Behaviour::Steps(&[Step::StaleFirst("F3", "AE")]),
        };
        let peer = Peer::start(Script::then(vec![first, second], Behaviour::Ack("AA"))).await;
        let dir = tempfile::tempdir().unwrap();
        let file = file_of(dir.path(), "F", 5);
        let mut flags = vec!["--json", "--correlate", "fifo", "--ack-timeout", "1s", pace];
        if pace == "--window" {
            flags.push("1");
        }
        flags.push(&file);
        let run = send(&to(peer.port(), &flags)).await;
        let records = run.messages();
        let case = format!("{stale} {pace}");
        assert_eq!(records.len(), 5, "{case}: {}", run.stdout);
        assert_eq!(
            records[2]["outcome"], "unknown-fate",
            "{case}: {}",
            records[2]
        );
        let r = &records[3];
        assert_eq!(r["outcome"], "negative", "{case}: {r}\n{}", run.stderr);
        assert_eq!(r["ack_code"], "AE", "{case}: {r}");
        assert_eq!(records[4]["outcome"], "accepted", "{case}: {}", records[4]);
        assert!(
            !run.stderr.contains("MLLP_ACK_CONTROL_ID_MISMATCH"),
            "{case}: {}",
            run.stderr
        );
        let repeats = run.stderr.matches("MLLP_ACK_UNMATCHED_CONTROL_ID").count();
        assert_eq!(repeats, 1, "{case}: warned once: {}", run.stderr);
        assert_eq!(run.summary()["accounting_ok"], true);
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_peer_that_never_echoes_msh10_is_still_told_at_once() {
    let peer = Peer::start(Script::always(Behaviour::WrongId("AA"))).await;
    let dir = tempfile::tempdir().unwrap();
    let file = file_of(dir.path(), "E", 3);
    let run = send(&to(peer.port(), &["--json", &file])).await;
    for r in run.messages() {
        assert_eq!(r["outcome"], "unknown-fate", "{r}");
        assert_eq!(r["cause"], "ack-control-id-mismatch", "{r}");
    }
    let summary = run.summary();
    let hint = summary["hint"].as_str().expect("a hint in the summary");
    assert!(hint.contains("--correlate fifo"), "{summary}");
    assert_eq!(run.code, 5, "{}", run.stderr);
}

/// The folder: `n` files of one message each, the `bad`-th holding text the peer chokes on.
fn folder(dir: &std::path::Path, n: usize, bad: usize) -> String {
    let folder = dir.join("adt");
    for i in 1..=n {
        let id = format!("P{i}");
        let body = match i == bad {
            true => message(&id, &format!("M\u{fc}ller{MARKER}")),
            false => message(&id, MARKER),
        };
        write(&folder, &format!("m{i:02}.hl7"), &body);
    }
    path(&folder)
}

#[tokio::test(flavor = "multi_thread")]
async fn a_poison_message_costs_only_itself() {
    let peer = Peer::start(Script::always(Behaviour::CloseOn("\u{fc}"))).await;
    let dir = tempfile::tempdir().unwrap();
    let folder = folder(dir.path(), 30, 12);
    let failed = dir.path().join("failed");
    // Default flags but for the output.
    let port = peer.port().to_string();
    let base = ["--host", "127.0.0.1", "--port", &port, "-r", &folder];
    let mut flags = base.map(String::from).to_vec();
    flags.extend(["--json".into(), "--failed-out".into(), path(&failed)]);
    let run = send(&flags).await;
    let records = run.messages();
    assert_eq!(records.len(), 30, "{}", run.stdout);
    for (i, r) in records.iter().enumerate() {
        if i + 1 == 12 {
            assert_eq!(r["outcome"], "unknown-fate", "{r}");
            assert_eq!(r["cause"], "peer-closed", "{r}");
            assert_eq!(r["cause_detail"], "poison", "{r}");
        } else {
            assert_eq!(r["outcome"], "accepted", "{r}\n{}", run.stderr);
        }
    }
    let attempts = records[11]["attempts"].as_u64().unwrap();
    let summary = run.summary();
    let poison = summary["poison"]
        .as_array()
        .expect("the poison messages named");
    assert_eq!(poison.len(), 1, "{summary}");
    assert_eq!(poison[0]["control_id"], "P12");
    assert!(poison[0]["source"].as_str().unwrap().ends_with("m12.hl7#1"));
    assert_eq!(poison[0]["attempts"], attempts);
    assert!(
        !run.stderr.contains("MLLP_PEER_NO_PIPELINING"),
        "{}",
        run.stderr
    );
    let kept: Vec<_> = std::fs::read_dir(&failed).unwrap().collect();
    assert_eq!(kept.len(), 1, "--failed-out holds the poison message");
    assert_eq!(run.code, 3, "{}", run.stderr);

    // People see it on its line and in the summary.
    let peer = Peer::start(Script::always(Behaviour::CloseOn("\u{fc}"))).await;
    let port = peer.port().to_string();
    let base = ["--host", "127.0.0.1", "--port", &port, "-r", &folder];
    let run = send(&base.map(String::from)).await;
    let line = run.stdout.lines().find(|l| l.contains(" P12 ")).unwrap();
    assert!(line.contains("poison"), "{line}");
    assert!(
        line.contains(&format!("written {attempts} times")),
        "{line}"
    );
    assert!(run.stderr.contains("poison"), "{}", run.stderr);
    assert!(run.stderr.contains("m12.hl7#1"), "{}", run.stderr);
}

#[tokio::test(flavor = "multi_thread")]
async fn connections_reset_while_the_engine_restarts_make_no_poison_message() {
    // The engine closes at the second message, then restarts behind a proxy that resets what
    // it cannot pass on: the message waited for it, it is no poison.
    let first = vec![
        Behaviour::Steps(&[Step::Ack("AA"), Step::Close]),
        Behaviour::ResetOnAccept,
        Behaviour::ResetOnAccept,
        Behaviour::ResetOnAccept,
    ];
    let peer = Peer::start(Script::then(first, Behaviour::Ack("AA"))).await;
    let dir = tempfile::tempdir().unwrap();
    let file = file_of(dir.path(), "R", 3);
    let run = send(&to(peer.port(), &["--json", &file])).await;
    for r in run.messages() {
        assert_eq!(r["outcome"], "accepted", "{r}\n{}", run.stderr);
    }
    assert_eq!(run.code, 0, "{}", run.stderr);
}

#[tokio::test(flavor = "multi_thread")]
async fn no_pipeline_by_control_id_adds_no_wait_after_an_answer() {
    // An engine that closes a connection idle for 150 ms after an answer: a wait after the
    // first answer would cost a connection each time.
    let peer = Peer::start(Script::always(Behaviour::IdleClose(150))).await;
    let dir = tempfile::tempdir().unwrap();
    let file = file_of(dir.path(), "N", 5);
    let run = send(&to(peer.port(), &["--json", "--no-pipeline", &file])).await;
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(peer.connections(), 1, "{}", run.stdout);
    assert_eq!(ids(&peer.payloads()), ["N1", "N2", "N3", "N4", "N5"]);
}

#[tokio::test(flavor = "multi_thread")]
async fn json_events_carry_their_time() {
    let peer = Peer::start(Script::always(Behaviour::WrongId("AA"))).await;
    let dir = tempfile::tempdir().unwrap();
    let file = file_of(dir.path(), "T", 1);
    let mut flags = vec!["--log-format".to_string(), "json".to_string()];
    flags.extend(to(peer.port(), &[&file]));
    let run = send(&flags).await;
    let events: Vec<Value> = run
        .stderr
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|_| panic!("not JSON: {l}")))
        .collect();
    assert!(events.len() >= 2, "{}", run.stderr);
    for e in &events {
        let time = e["time"].as_str().unwrap_or_else(|| panic!("no time: {e}"));
        assert!(humantime::parse_rfc3339(time).is_ok(), "{e}");
    }
    let summary = events.iter().find(|e| e["event"] == "summary").unwrap();
    assert!(summary["hint"]
        .as_str()
        .unwrap()
        .contains("--correlate fifo"));
}

/// The same folder against python-hl7's asyncio server, which drops the connection on a message
/// it cannot decode as ASCII.
#[tokio::test(flavor = "multi_thread")]
async fn a_poison_message_costs_only_itself_against_python_hl7() {
    use crate::support::interop_peer::InteropPeer;
    let test = "send::fates::a_poison_message_costs_only_itself_against_python_hl7";
    let Some(python) = crate::support::python_peer::PythonPeer::find(test) else {
        return;
    };
    let server = python.server("AA");
    let dir = tempfile::tempdir().unwrap();
    let folder = folder(dir.path(), 30, 12);
    let port = server.port.to_string();
    let base = [
        "--host",
        "127.0.0.1",
        "--port",
        &port,
        "--json",
        "-r",
        &folder,
    ];
    let run = send(&base.map(String::from)).await;
    let records = run.messages();
    assert_eq!(records[11]["cause_detail"], "poison", "{}", records[11]);
    let accepted = records.iter().filter(|r| r["outcome"] == "accepted");
    assert_eq!(accepted.count(), 29, "{}", run.stdout);
    assert_eq!(run.code, 3, "{}", run.stderr);
    let handled = server.stop();
    assert!(!handled.iter().any(|id| id == "P12"), "{handled:?}");
}
