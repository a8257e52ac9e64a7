//! Integration tests: the listener's guards against hostile and greedy peers, through the real
//! binary: the per-address connection cap, the frame deadline, the budget for partly received
//! frames, failed accepts at a low descriptor limit, the metrics endpoint's limits and the
//! `--exec` process group.

use crate::support::listen_proc::{is, ListenProc};
use crate::support::mllp;
use crate::support::mllp_client::{adt, tcp_from, MllpClient};
use crate::support::peer_wire::frame;
use std::net::{IpAddr, SocketAddr};
use std::time::{Duration, Instant};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

const OTHER_HOST: &str = "127.0.0.2";

fn other_host() -> IpAddr {
    OTHER_HOST.parse().unwrap()
}

#[tokio::test(flavor = "multi_thread")]
async fn one_address_holding_its_share_does_not_lock_another_out() {
    // A quarter of 8 by default: 2 connections per address.
    let server = ListenProc::start(&["--max-connections", "8"]);
    let mut idle = Vec::new();
    for _ in 0..12 {
        idle.push(tcp_from(other_host(), server.addr).await.unwrap());
    }
    let refused = server.wait_event(|v| v["cause"] == "per-peer-limit");
    assert_eq!(refused["event"], "connection_closed");
    assert!(refused["peer"].as_str().unwrap().starts_with(OTHER_HOST));
    let mut good = MllpClient::connect(server.addr).await;
    good.send(&adt(b"good", "")).await;
    let ack = good.ack().await.expect("the other address is served");
    assert_eq!(
        (ack.code.as_str(), ack.control_id.as_slice()),
        ("AA", &b"good"[..])
    );
    drop(idle);
}

#[tokio::test(flavor = "multi_thread")]
async fn a_trickle_is_closed_at_the_frame_deadline() {
    let server = ListenProc::start(&["--frame-timeout", "1s", "--idle-timeout", "3s"]);
    let mut stream = TcpStream::connect(server.addr).await.unwrap();
    stream.write_all(b"\x0bMSH|").await.unwrap();
    let (mut reader, mut writer) = stream.into_split();
    // A byte every 200 ms never trips the idle timeout.
    let trickle = tokio::spawn(async move {
        for _ in 0..100 {
            if writer.write_all(b"x").await.is_err() {
                return;
            }
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
    });
    let closed = tokio::task::block_in_place(|| server.wait_event(is("connection_closed")));
    assert_eq!(closed["cause"], "frame-timeout", "{closed}");
    let mut rest = Vec::new();
    let read = tokio::time::timeout(Duration::from_secs(10), reader.read_to_end(&mut rest)).await;
    assert!(read.is_ok(), "the client sees the close");
    assert!(rest.is_empty(), "no ACK for an unfinished frame");
    trickle.abort();
}

#[tokio::test(flavor = "multi_thread")]
async fn a_frame_that_would_pass_the_buffer_budget_closes_its_connection() {
    let server = ListenProc::start(&[
        "--max-buffered",
        "64KiB",
        "--max-connections-per-peer",
        "1024",
    ]);
    let mut payload = adt(b"big", "");
    payload.extend(format!("NTE|1||{}\r", "x".repeat(40 * 1024)).as_bytes());
    let whole = frame(&payload);
    let (head, tail) = whole.split_at(whole.len() - 100);
    let mut a = MllpClient::connect(server.addr).await;
    let mut b = MllpClient::connect(server.addr).await;
    a.send_raw(head).await;
    b.send_raw(head).await;
    // 2 x 40 KiB passes the 64 KiB budget: whichever came second is closed.
    let closed = tokio::task::block_in_place(|| server.wait_event(is("connection_closed")));
    assert_eq!(closed["cause"], "buffer-budget", "{closed}");
    assert_eq!(closed["code"], "MLLP_FRAME_TOO_LARGE", "{closed}");
    let loser = closed["peer"].as_str().unwrap().to_string();
    let (mut winner, mut loser) = if loser == a.local_addr().to_string() {
        (b, a)
    } else {
        (a, b)
    };
    assert!(loser.ack().await.is_none(), "closed without an answer");
    winner.send_raw(tail).await;
    let ack = winner.ack().await.expect("the frame within the budget");
    assert_eq!(ack.code, "AA");
}

#[tokio::test(flavor = "multi_thread")]
async fn failed_accepts_are_reported_and_nobody_hangs_and_the_listener_recovers() {
    let server = ListenProc::start_with_fd_limit(&[], 40);
    let mut clients = Vec::new();
    for _ in 0..60 {
        clients.push(MllpClient::connect(server.addr).await);
    }
    let error = tokio::task::block_in_place(|| server.wait_event(is("accept_error")));
    assert!(error["count"].as_u64().unwrap() >= 1, "{error}");
    assert!(
        error["error"].as_str().unwrap().contains("open files"),
        "{error}"
    );
    // Every peer gets an answer or a close within the wait; none hangs in the backlog.
    let (mut served, mut closed) = (0, 0);
    for client in &mut clients {
        client.send_raw(&frame(&adt(b"crowd", ""))).await;
    }
    for client in &mut clients {
        match client.ack().await {
            Some(ack) => {
                assert_eq!(ack.code, "AA");
                served += 1;
            }
            None => closed += 1,
        }
    }
    assert!(served > 0 && closed > 0, "served {served}, closed {closed}");
    drop(clients);
    // Once descriptors are free again, a new peer is served.
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let mut client = MllpClient::connect(server.addr).await;
        client.send(&adt(b"after", "")).await;
        if client.ack().await.is_some_and(|a| a.code == "AA") {
            break;
        }
        assert!(Instant::now() < deadline, "the listener did not recover");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

#[test]
fn a_wildcard_metrics_address_needs_allow_wildcard() {
    let out = mllp()
        .args([
            "--log-format",
            "json",
            "listen",
            "--port",
            "0",
            "--metrics",
            "0.0.0.0:0",
        ])
        .timeout(Duration::from_secs(10))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("MLLP_BIND_ALL_INTERFACES"), "{stderr}");
    assert!(stderr.contains("--allow-wildcard"), "{stderr}");
}

#[test]
fn an_allowed_wildcard_metrics_address_is_a_security_warning() {
    let server = ListenProc::start(&["--allow-wildcard", "--metrics", "0.0.0.0:0"]);
    let announced = server.wait_event(is("metrics_listening"));
    assert!(announced["addr"].as_str().unwrap().starts_with("0.0.0.0:"));
    let warning = server.wait_event(is("security_warning"));
    assert_eq!(warning["code"], "MLLP_BIND_ALL_INTERFACES");
}

#[tokio::test(flavor = "multi_thread")]
async fn the_metrics_endpoint_serves_16_connections_at_most() {
    let server = ListenProc::start(&["--metrics", "127.0.0.1:0"]);
    let announced = tokio::task::block_in_place(|| server.wait_event(is("metrics_listening")));
    let metrics: SocketAddr = announced["addr"].as_str().unwrap().parse().unwrap();
    let mut idle = Vec::new();
    for _ in 0..16 {
        idle.push(TcpStream::connect(metrics).await.unwrap());
    }
    // Let the endpoint take all 16 before the next arrives.
    tokio::time::sleep(Duration::from_millis(300)).await;
    let mut extra = TcpStream::connect(metrics).await.unwrap();
    let _ = extra.write_all(b"GET /metrics HTTP/1.1\r\n\r\n").await;
    let mut out = Vec::new();
    let read = tokio::time::timeout(Duration::from_secs(5), extra.read_to_end(&mut out)).await;
    assert!(
        matches!(read, Ok(Ok(0) | Err(_))),
        "the 17th connection is closed at once, unanswered: {read:?} {}",
        String::from_utf8_lossy(&out)
    );
    drop(idle);
}

/// Whether process `pid` is gone (or a zombie nobody reaped yet).
fn is_dead(pid: u32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Err(_) => true,
        Ok(stat) => stat
            .rsplit(')')
            .next()
            .is_some_and(|rest| rest.trim_start().starts_with('Z')),
    }
}

/// The PID a command wrote to `file`, once it is there.
fn pid_in(file: &std::path::Path) -> u32 {
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        if let Some(pid) = std::fs::read_to_string(file)
            .ok()
            .and_then(|t| t.trim().parse().ok())
        {
            return pid;
        }
        assert!(
            Instant::now() < deadline,
            "the command never wrote its child's PID"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn assert_dies(pid: u32, what: &str) {
    let deadline = Instant::now() + Duration::from_secs(10);
    while !is_dead(pid) {
        assert!(
            Instant::now() < deadline,
            "{what}: process {pid} still runs"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// An --exec command that starts a long-running child and waits for it.
fn spawner(pid_file: &std::path::Path) -> String {
    format!(
        "cat >/dev/null; sleep 300 & echo $! > {}; wait",
        pid_file.display()
    )
}

#[tokio::test(flavor = "multi_thread")]
async fn an_exec_timeout_kills_the_commands_children_too() {
    let dir = tempfile::tempdir().unwrap();
    let pid_file = dir.path().join("child.pid");
    let command = spawner(&pid_file);
    let server = ListenProc::start(&["--exec", &command, "--exec-timeout", "500ms"]);
    let mut client = MllpClient::connect(server.addr).await;
    client.send(&adt(b"slow", "")).await;
    let ack = client.ack().await.expect("an answer after the timeout");
    assert_eq!(ack.code, "AE");
    assert_dies(pid_in(&pid_file), "after the exec timeout");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_stop_kills_the_commands_children_even_after_the_listener_exits() {
    let dir = tempfile::tempdir().unwrap();
    let pid_file = dir.path().join("child.pid");
    let command = spawner(&pid_file);
    let mut server = ListenProc::start(&["--exec", &command, "--drain-timeout", "200ms"]);
    let mut client = MllpClient::connect(server.addr).await;
    client.send(&adt(b"stuck", "")).await;
    let pid = tokio::task::block_in_place(|| pid_in(&pid_file));
    server.signal("TERM");
    // Only the exit: a surviving child would hold the listener's output open.
    let status = tokio::task::block_in_place(|| server.wait_exit());
    assert_eq!(status.code(), Some(0));
    assert_dies(pid, "after the listener stopped");
}

#[test]
fn an_oversize_frame_is_answered_ar_and_the_next_message_on_the_link_is_accepted() {
    let server = ListenProc::start(&["--max-frame-size", "1000K"]);
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("two.hl7");
    let mut big = adt(b"big", "");
    big.extend(format!("NTE|1||{}\r", "x".repeat(1024 * 1024)).as_bytes());
    let mut both = big;
    both.extend(adt(b"small", ""));
    std::fs::write(&input, &both).unwrap();
    let out = mllp()
        .args(["send", "--json", "--host", "127.0.0.1", "--port"])
        .arg(server.addr.port().to_string())
        .arg(&input)
        .output()
        .unwrap();
    let run = crate::support::run::Run::checked(&out, "send");
    let records = run.messages();
    assert_eq!(records.len(), 2, "{}", run.stdout);
    assert_eq!(records[0]["ack_code"], "AR", "{}", records[0]);
    assert_eq!(records[0]["outcome"], "negative", "{}", records[0]);
    assert_eq!(
        records[0]["attempts"], 1,
        "answered, not resent: {}",
        records[0]
    );
    let text = records[0]["ack_text"].as_str().unwrap_or_default();
    assert!(text.contains("too large"), "{}", records[0]);
    assert_eq!(records[1]["outcome"], "accepted", "{}", records[1]);
    // AR is final: one link for both, the big one never resent.
    let summary = run.summary();
    assert_eq!(summary["reconnects"], 0, "{summary}");
    assert_eq!(summary["resent"], 0, "{summary}");
    assert_eq!(summary["unknown_fate"], 0, "{summary}");
}

#[tokio::test(flavor = "multi_thread")]
async fn at_the_connection_cap_the_longest_idle_link_yields_to_a_new_peer() {
    let server = ListenProc::start(&[
        "--max-connections",
        "2",
        "--max-connections-per-peer",
        "2",
        "--evict-idle-after",
        "200ms",
    ]);
    let mut first = MllpClient::connect(server.addr).await;
    tokio::task::block_in_place(|| server.wait_event(is("connection_opened")));
    // An idle spell starts when the connection's task waits for input, which can come after
    // its `connection_opened` under load: a message answered on the first link puts its task
    // back at that wait before the second link is opened.
    first.send(&adt(b"old", "")).await;
    assert_eq!(first.ack().await.expect("the first is served").code, "AA");
    let _second = TcpStream::connect(server.addr).await.unwrap();
    tokio::task::block_in_place(|| server.wait_event(is("connection_opened")));
    // Both sit idle past the eviction age (a real, short duration: the property is an age).
    tokio::time::sleep(Duration::from_millis(400)).await;
    let mut newcomer = MllpClient::connect(server.addr).await;
    newcomer.send(&adt(b"new", "")).await;
    let ack = newcomer.ack().await.expect("the new peer is served");
    assert_eq!(ack.code, "AA");
    let closed = tokio::task::block_in_place(|| server.wait_event(is("connection_closed")));
    assert_eq!(closed["cause"], "evicted-idle", "{closed}");
    assert_eq!(closed["peer"], first.local_addr().to_string(), "the oldest");
    let closed = first.ack_within(Duration::from_secs(10)).await;
    assert!(
        matches!(closed, Ok(None)),
        "the evicted peer sees the close"
    );
}
