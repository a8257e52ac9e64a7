//! Integration tests: what `mllp listen` prints for people and for programs: `--json`, which
//! sinks `--format` applies to, message lines naming each message, and readable exit stats.

use crate::support::mllp;
use crate::support::mllp_client::{adt, MllpClient};
use serde_json::Value;
use std::io::{BufRead, BufReader, Read};
use std::net::SocketAddr;
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

const WAIT: Duration = Duration::from_secs(15);

/// `mllp listen --port 0 ARGS` with stderr read line by line and stdout collected.
struct Listen {
    child: Child,
    lines: mpsc::Receiver<String>,
    stdout: Option<std::thread::JoinHandle<String>>,
    addr: SocketAddr,
}

impl Listen {
    /// Starts it; `addr` reads the bound address from the first stderr line.
    fn start(args: &[&str], addr: impl Fn(&str) -> SocketAddr) -> Listen {
        let mut child = Command::new(crate::support::mllp_bin())
            .args(["listen", "--port", "0"])
            .args(args)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let stderr = child.stderr.take().unwrap();
        let (tx, lines) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stderr).lines().map_while(Result::ok) {
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        let mut out = child.stdout.take().unwrap();
        let stdout = std::thread::spawn(move || {
            let mut text = String::new();
            let _ = out.read_to_string(&mut text);
            text
        });
        let first = lines.recv_timeout(WAIT).expect("a first line");
        let addr = addr(&first);
        Listen {
            child,
            lines,
            stdout: Some(stdout),
            addr,
        }
    }

    /// Stops it with SIGTERM; its exit code, the stderr lines after the first, and stdout.
    fn stop(mut self) -> (i32, Vec<String>, String) {
        let pid = self.child.id().to_string();
        assert!(Command::new("kill")
            .args(["-TERM", &pid])
            .status()
            .unwrap()
            .success());
        let status = self.child.wait().unwrap();
        let lines: Vec<String> = self.lines.iter().collect();
        (
            status.code().unwrap_or(-1),
            lines,
            self.stdout.take().unwrap().join().unwrap(),
        )
    }
}

impl Drop for Listen {
    /// A failed test leaves no listener behind.
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The address of a human `listening on ADDR` line.
fn human_addr(first: &str) -> SocketAddr {
    let (_, addr) = first.split_once("listening on ").expect(first);
    addr.parse().expect(first)
}

async fn deliver(addr: SocketAddr, control_id: &[u8]) {
    let mut client = MllpClient::connect(addr).await;
    client.send(&adt(control_id, "")).await;
    let ack = client.ack().await.expect("an ACK");
    assert_eq!(ack.code, "AA");
}

#[tokio::test(flavor = "multi_thread")]
async fn json_means_json_events_and_json_messages() {
    let listen = Listen::start(&["--json"], |first| {
        let event: Value = serde_json::from_str(first).expect(first);
        assert_eq!(event["event"], "listening", "{first}");
        event["addr"].as_str().unwrap().parse().unwrap()
    });
    deliver(listen.addr, b"JSON7").await;
    let (code, lines, stdout) = listen.stop();
    assert_eq!(code, 0);
    let events: Vec<Value> = lines
        .iter()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|_| panic!("not JSON: {l}")))
        .collect();
    let message = events.iter().find(|e| e["event"] == "message").unwrap();
    assert_eq!(message["control_id"], "JSON7", "{message}");
    assert_eq!(message["message_type"], "ADT^A01", "{message}");
    assert!(events.iter().any(|e| e["event"] == "stats"));
    let record: Value = serde_json::from_str(stdout.trim()).expect(&stdout);
    assert!(record["payload"].as_str().unwrap().contains("JSON7"));
}

#[tokio::test(flavor = "multi_thread")]
async fn human_lines_name_each_message_and_the_stats_are_readable() {
    let listen = Listen::start(&["--format", "raw"], human_addr);
    deliver(listen.addr, b"CTRL0042").await;
    let (code, lines, _) = listen.stop();
    assert_eq!(code, 0);
    let message = lines
        .iter()
        .find(|l| l.contains("message"))
        .unwrap_or_else(|| panic!("no message line: {lines:?}"));
    assert!(message.contains("CTRL0042"), "{message}");
    assert!(message.contains("ADT^A01"), "{message}");
    let stats = lines
        .iter()
        .skip_while(|l| !l.contains("Z stopped") && !l.contains("Z stats"))
        .collect::<Vec<_>>();
    assert!(!stats.is_empty(), "no stats in {lines:?}");
    for line in &stats {
        assert!(!line.contains('{'), "stats as a JSON blob: {line}");
        assert!(line.len() <= 100, "stats line too long: {line}");
    }
    assert!(stats.iter().any(|l| l.contains("committed 1")), "{stats:?}");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_warning_line_says_what_the_code_means() {
    let listen = Listen::start(&["--format", "raw"], human_addr);
    let mut client = MllpClient::connect(listen.addr).await;
    // FS then LF, not CR: tolerated, and said.
    let mut frame = vec![0x0b];
    frame.extend_from_slice(&adt(b"LF1", ""));
    frame.extend_from_slice(&[0x1c, b'\n']);
    client.send_raw(&frame).await;
    assert_eq!(client.ack().await.expect("an ACK").code, "AA");
    let (_, lines, _) = listen.stop();
    let warning = lines
        .iter()
        .find(|l| l.contains("MLLP_LF_AFTER_FS"))
        .unwrap_or_else(|| panic!("no warning in {lines:?}"));
    assert!(
        warning.contains("MLLP_LF_AFTER_FS at byte ")
            && warning
                .ends_with(": a frame's FS end byte was followed by LF instead of CR (tolerated)"),
        "{warning}"
    );
}

/// The RFC 3339 UTC time (milliseconds, `Z`) a line starts with, or `None`.
fn leading_time(line: &str) -> Option<std::time::SystemTime> {
    let (time, _) = line.split_once(' ')?;
    if time.len() != "2026-12-02T01:02:03.456Z".len() || !time.ends_with('Z') {
        return None;
    }
    humantime::parse_rfc3339(time).ok()
}

/// Whole milliseconds: the precision the lines carry.
fn millis(t: std::time::SystemTime) -> u128 {
    t.duration_since(std::time::UNIX_EPOCH).unwrap().as_millis()
}

#[tokio::test(flavor = "multi_thread")]
async fn every_event_says_when_in_both_formats() {
    let before = millis(std::time::SystemTime::now());
    let within = |t: std::time::SystemTime, what: &str| {
        let after = millis(std::time::SystemTime::now());
        assert!((before..=after).contains(&millis(t)), "{what}: not now");
    };
    let listen = Listen::start(&["--format", "raw"], |first| {
        within(leading_time(first).expect(first), first);
        human_addr(first)
    });
    deliver(listen.addr, b"WHEN1").await;
    let (_, lines, _) = listen.stop();
    // Every event line, the stats' first line too; only the stats' indented lines go without.
    for line in lines.iter().filter(|l| !l.starts_with("  ")) {
        let time = leading_time(line).unwrap_or_else(|| panic!("no time on {line:?}"));
        within(time, line);
    }
    assert!(
        lines.iter().any(|l| l.contains("message WHEN1")),
        "{lines:?}"
    );

    let listen = Listen::start(&["--json"], |first| {
        let event: Value = serde_json::from_str(first).expect(first);
        event["addr"].as_str().unwrap().parse().unwrap()
    });
    deliver(listen.addr, b"WHEN2").await;
    let (_, lines, _) = listen.stop();
    for line in &lines {
        let event: Value = serde_json::from_str(line).expect(line);
        let time = event["time"]
            .as_str()
            .unwrap_or_else(|| panic!("no time in {line}"));
        assert!(time.ends_with('Z'), "{line}");
        within(humantime::parse_rfc3339(time).expect(line), line);
    }
    assert!(lines.iter().any(|l| l.contains("\"stats\"")), "{lines:?}");
}

/// docs/output.md, where the records' fields are documented.
fn output_doc() -> String {
    std::fs::read_to_string(crate::support::repo_root().join("docs/output.md")).unwrap()
}

/// The backticked names of the doc's first line starting with `start`, in order.
fn documented_names(doc: &str, start: &str) -> Vec<String> {
    let row: String = doc
        .split("\n\n")
        .find(|p| p.trim_start().starts_with(start))
        .unwrap_or_else(|| panic!("no {start:?} in docs/output.md"))
        .to_string();
    row.split('`')
        .skip(1)
        .step_by(2)
        .map(str::to_string)
        .collect()
}

#[tokio::test(flavor = "multi_thread")]
async fn the_json_record_and_stats_are_as_documented() {
    let doc = output_doc();
    let listen = Listen::start(&["--json"], |first| {
        let event: Value = serde_json::from_str(first).expect(first);
        event["addr"].as_str().unwrap().parse().unwrap()
    });
    deliver(listen.addr, b"KEYS1").await;
    let (_, lines, stdout) = listen.stop();

    // The record's keys come in the order the doc lists them, as the doc says they do.
    let listed = documented_names(&doc, "The stdout sink's `--format json` record");
    let record = stdout.trim();
    let positions: Vec<usize> = serde_json::from_str::<Value>(record)
        .unwrap()
        .as_object()
        .unwrap()
        .keys()
        .map(|key| {
            assert!(listed.contains(key), "{key} not documented: {listed:?}");
            record.find(&format!("\"{key}\":")).unwrap()
        })
        .collect();
    let mut in_doc_order: Vec<(usize, &String)> = listed
        .iter()
        .filter_map(|k| record.find(&format!("\"{k}\":")).map(|at| (at, k)))
        .collect();
    assert_eq!(in_doc_order.len(), positions.len(), "{record}");
    let doc_order: Vec<&String> = in_doc_order.iter().map(|(_, k)| *k).collect();
    in_doc_order.sort();
    let record_order: Vec<&String> = in_doc_order.iter().map(|(_, k)| *k).collect();
    assert_eq!(record_order, doc_order, "{record}");
    let intro = doc.split("\n\n").nth(1).unwrap();
    assert!(
        !intro.contains("alphabetical") || intro.contains("listen --format json"),
        "the doc calls every record alphabetical: {intro}"
    );

    // Every counter of the stats event is documented.
    let stats: Value = lines
        .iter()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .find(|e| e["event"] == "stats")
        .expect("a stats event");
    let row = doc
        .lines()
        .find(|l| l.starts_with("| `stats` |"))
        .expect("a stats row");
    for key in stats.as_object().unwrap().keys() {
        if !["event", "time"].contains(&key.as_str()) {
            assert!(
                row.contains(&format!("`{key}`")),
                "stats field {key} undocumented"
            );
        }
    }
}

/// One ADT with an empty MSH-10, framed: it can only be answered AE, and nothing keeps it.
fn no_control_id() -> Vec<u8> {
    let mut frame = vec![0x0b];
    frame.extend_from_slice(b"MSH|^~\\&|A|B|C|D|20240101000000||ADT^A01||P|2.5\rPID|1\r");
    frame.extend_from_slice(&[0x1c, 0x0d]);
    frame
}

#[tokio::test(flavor = "multi_thread")]
async fn an_empty_msh10_is_a_refusal_not_a_failed_commit() {
    let listen = Listen::start(&["--format", "raw"], human_addr);
    let mut client = MllpClient::connect(listen.addr).await;
    client.send_raw(&no_control_id()).await;
    assert_eq!(client.ack().await.expect("an ACK").code, "AE");
    drop(client);
    let (_, lines, _) = listen.stop();
    let message = lines
        .iter()
        .find(|l| l.contains("message (no MSH-10)"))
        .unwrap_or_else(|| panic!("no message line in {lines:?}"));
    assert!(!message.contains("commit "), "{message}");
    assert!(
        message.ends_with("answered AE, refused (nothing kept)"),
        "{message}"
    );
    let counts = lines.iter().find(|l| l.contains("messages:")).unwrap();
    assert!(
        counts.contains("refused 1") && !counts.contains("commit failed"),
        "{counts}"
    );

    let listen = Listen::start(&["--json"], |first| {
        let event: Value = serde_json::from_str(first).expect(first);
        event["addr"].as_str().unwrap().parse().unwrap()
    });
    let mut client = MllpClient::connect(listen.addr).await;
    client.send_raw(&no_control_id()).await;
    assert_eq!(client.ack().await.expect("an ACK").code, "AE");
    drop(client);
    let (_, lines, _) = listen.stop();
    let events: Vec<Value> = lines
        .iter()
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect();
    let message = events.iter().find(|e| e["event"] == "message").unwrap();
    assert_eq!(message["commit_ms"], Value::Null, "{message}");
    let stats = events.iter().find(|e| e["event"] == "stats").unwrap();
    assert_eq!(
        (stats["refused"].as_u64(), stats["commit_failed"].as_u64()),
        (Some(1), Some(0)),
        "{stats}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn bidi_controls_in_a_control_id_are_escaped_like_esc() {
    let listen = Listen::start(&["--format", "raw"], human_addr);
    let id = "A\u{202E}B\u{2066}C\u{200F}D\u{1b}E";
    deliver(listen.addr, id.as_bytes()).await;
    let (_, lines, _) = listen.stop();
    let message = lines
        .iter()
        .find(|l| l.contains(": message "))
        .unwrap_or_else(|| panic!("no message line in {lines:?}"));
    assert!(message.contains("message A?B?C?D?E "), "{message:?}");
}

#[test]
fn format_belongs_to_the_stdout_sink_only() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("rx.db").display().to_string();
    let out_dir = dir.path().display().to_string();
    for sink in [
        vec!["--exec", "cat"],
        vec!["--out-dir", &out_dir],
        vec!["--sqlite", &db],
    ] {
        let out = mllp()
            .args(["listen", "--port", "0", "--format", "json"])
            .args(&sink)
            .timeout(WAIT)
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{sink:?}: {stderr}");
        assert!(stderr.contains("--format"), "{stderr}");
    }
    // The help shows no example that would be refused.
    let help = mllp().args(["listen", "--help"]).output().unwrap();
    let help = String::from_utf8_lossy(&help.stdout);
    let examples = help.split("Examples:").nth(1).unwrap();
    for line in examples.lines() {
        let other_sink = ["--exec", "--out-dir", "--sqlite"]
            .iter()
            .any(|s| line.contains(s));
        assert!(
            !(line.contains("--format") && other_sink),
            "an example the command refuses: {line}"
        );
    }
}
