//! `relay --mirror` against what an operator can get wrong or a sender can plant: a control ID
//! that would forge a log line, a shadow that holds the stop, a mirror that loops back to the
//! relay or to production, shadow TLS flags with no shadow.

use super::proc::RelayProc;
use crate::support::mllp_client::{adt, MllpClient};
use crate::support::peer::{Behaviour, Peer, Script};
use crate::support::peer_wire::control_id;
use crate::support::ports::closed_port;
use std::io::Read;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// A shadow that answers every message `AE`, so each one is a difference.
async fn refusing_shadow() -> std::net::SocketAddr {
    super::mirror::shadow(|message| {
        let id = control_id(message).unwrap_or_default();
        format!("MSH|^~\\&|PEER|TEST|MLLP|TEST|20991231235959||ACK|S|P|2.5\rMSA|AE|{id}\r")
            .into_bytes()
    })
    .await
}

/// A port nothing listens on (bound, then let go).
fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// Wait for `child` at most `limit`: its exit code, or None (then killed) and its stderr.
fn wait(mut child: Child, limit: Duration) -> (Option<i32>, String) {
    let started = Instant::now();
    let code = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status.code();
        }
        if started.elapsed() > limit {
            let _ = child.kill();
            let _ = child.wait();
            break None;
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let mut stderr = String::new();
    // None when the caller already reads it.
    if let Some(mut taken) = child.stderr.take() {
        taken.read_to_string(&mut stderr).unwrap();
    }
    (code, stderr)
}

/// The child's stderr, a line at a time, as it is written.
fn log_lines(child: &mut Child) -> std::sync::mpsc::Receiver<String> {
    let stderr = child.stderr.take().unwrap();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        use std::io::BufRead;
        for line in std::io::BufReader::new(stderr).lines() {
            let Ok(line) = line else { return };
            if tx.send(line).is_err() {
                return;
            }
        }
    });
    rx
}

fn sigterm(child: &Child) {
    let pid = child.id().to_string();
    let sent = Command::new("kill").args(["-TERM", &pid]).status();
    assert!(sent.is_ok_and(|s| s.success()), "SIGTERM to the relay");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_control_id_in_a_mirror_diff_line_is_shown_as_the_message_line_shows_it() {
    let upstream = Peer::start(Script::always(Behaviour::Ack("AA"))).await;
    let shadow = refusing_shadow().await;
    let port = free_port();
    let mut child = Command::new(crate::support::mllp_bin())
        .args(["relay", "-vv", "--listen", &format!("127.0.0.1:{port}")])
        .args(["--to", &upstream.addr().to_string()])
        .args(["--mirror", &shadow.to_string()])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let addr: std::net::SocketAddr = format!("127.0.0.1:{port}").parse().unwrap();
    let mut client = loop {
        match tokio::net::TcpStream::connect(addr).await {
            Ok(_) => break MllpClient::connect(addr).await,
            Err(_) => tokio::time::sleep(Duration::from_millis(50)).await,
        }
    };
    // ESC and an escaped line feed in MSH-10: raw, they would colour the terminal and start a
    // second, forged log line.
    let message = adt(b"C1\x1b[31mRAW\\X0A\\Z", "");
    client.send(&message).await;
    client.ack().await.expect("the upstream's answer");
    // Stop once the difference is logged: the log is read as it is written.
    let lines = log_lines(&mut child);
    let mut seen = String::new();
    let deadline = Instant::now() + Duration::from_secs(15);
    while !seen.contains("answers differ") && Instant::now() < deadline {
        if let Ok(line) = lines.recv_timeout(Duration::from_millis(100)) {
            seen.push_str(&line);
            seen.push('\n');
        }
    }
    sigterm(&child);
    let (code, _) = wait(child, Duration::from_secs(15));
    let stderr = seen + &lines.iter().collect::<Vec<_>>().join("\n");
    assert!(code.is_some(), "the relay stops: {stderr}");
    assert!(!stderr.contains('\x1b'), "no raw ESC in the log:\n{stderr}");
    let shown = "C1?[31mRAW\\X0A\\Z";
    let diff = stderr
        .lines()
        .find(|l| l.contains("answers differ"))
        .unwrap_or_else(|| panic!("a mirror_diff line:\n{stderr}"));
    assert!(diff.contains(shown), "{diff}");
    let message_line = stderr.lines().find(|l| l.contains(": message ")).unwrap();
    assert!(message_line.contains(shown), "{message_line}");
    assert!(
        !stderr.lines().any(|l| l.starts_with('Z')),
        "no forged line:\n{stderr}"
    );
}

/// A relay with `--drain-timeout 60s` and a shadow at `shadow`, 3 messages answered upstream,
/// then stopped once its figures say `ready` of the mirror (read from its log, not waited for
/// a fixed time): it must exit well within the drain timeout; its summary.
async fn stopped_with_shadow(
    shadow: &str,
    ready: fn(&serde_json::Value) -> bool,
) -> serde_json::Value {
    let upstream = Peer::start(Script::always(Behaviour::Ack("AA"))).await;
    let mut relay = RelayProc::start(
        &upstream.addr().to_string(),
        &[
            "--mirror",
            shadow,
            "--drain-timeout",
            "60s",
            "--backoff-max",
            "200ms",
        ],
    );
    let mut client = MllpClient::connect(relay.addr).await;
    for id in ["S1", "S2", "S3"] {
        client.send(&adt(id.as_bytes(), "")).await;
        client.ack().await.expect("the upstream's answer");
    }
    let deadline = Instant::now() + Duration::from_secs(15);
    let mut events = Vec::new();
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        let Ok(event) = relay.events.recv_timeout(left) else {
            panic!("the mirror's figures never said it was ready; events: {events:?}");
        };
        let stats = event["event"] == "relay_stats";
        let done = stats && ready(&event["mirror"]);
        events.push(event);
        if done {
            break;
        }
    }
    let pid = relay.pid().to_string();
    let sent = Command::new("kill").args(["-TERM", &pid]).status();
    assert!(sent.is_ok_and(|s| s.success()));
    let deadline = Instant::now() + Duration::from_secs(15);
    let summary = loop {
        let left = deadline.saturating_duration_since(Instant::now());
        let Ok(event) = relay.events.recv_timeout(left) else {
            relay.kill();
            panic!("the relay did not stop while the shadow held it; events: {events:?}");
        };
        if event["event"] == "mirror_summary" {
            break event;
        }
        events.push(event);
    };
    summary
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_shadow_that_is_down_costs_nothing_at_the_stop() {
    let down = format!("127.0.0.1:{}", closed_port());
    // Every copy handed to the mirror, none of them written.
    let summary = stopped_with_shadow(&down, |m| m["queued"] == 3).await;
    assert_eq!(summary["shadow_skipped"], 3, "{summary}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_shadow_that_never_reads_does_not_hold_the_stop_past_the_upstream() {
    // Accepts the connection and never reads nor answers.
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap().to_string();
    // Connected with every copy handed over: a connected link writes each as it comes.
    let summary =
        stopped_with_shadow(&addr, |m| m["queued"] == 3 && m["state"] == "CONNECTED").await;
    assert_eq!(summary["shadow_unanswered"], 3, "{summary}");
    drop(listener);
}

/// `mllp relay ARGS` refused before it listens: its exit code and stderr.
fn refused(args: &[&str]) -> (Option<i32>, String) {
    let child = Command::new(crate::support::mllp_bin())
        .arg("relay")
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    wait(child, Duration::from_secs(5))
}

#[test]
fn a_mirror_that_is_the_relay_itself_or_its_upstream_is_refused() {
    let port = free_port().to_string();
    let listen = format!("127.0.0.1:{port}");
    for (listen, to, mirror) in [
        (listen.as_str(), "127.0.0.1:9", listen.as_str()),
        (port.as_str(), "127.0.0.1:9", listen.as_str()),
        (&format!("0.0.0.0:{port}"), "127.0.0.1:9", listen.as_str()),
        (
            &format!("[::]:{port}"),
            "127.0.0.1:9",
            &format!("localhost:{port}"),
        ),
        (listen.as_str(), "127.0.0.1:9", "127.0.0.1:9"),
        (listen.as_str(), "localhost:9", "127.0.0.1:9"),
    ] {
        let (code, stderr) = refused(&["--listen", listen, "--to", to, "--mirror", mirror]);
        assert_eq!(code, Some(2), "{listen} {to} {mirror}: {stderr}");
        assert!(stderr.contains("--mirror"), "{stderr}");
    }
}

#[test]
fn shadow_tls_flags_without_a_mirror_are_refused() {
    for args in [
        &["--mirror-tls"][..],
        &["--mirror-ca", "ca.pem"],
        &["--mirror-insecure"],
    ] {
        let mut all = vec!["--listen", "0", "--to", "127.0.0.1:9"];
        all.extend_from_slice(args);
        let (code, stderr) = refused(&all);
        assert_eq!(code, Some(2), "{args:?}: {stderr}");
        assert!(stderr.contains("--mirror"), "{args:?}: {stderr}");
    }
}
