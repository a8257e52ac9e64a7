//! Integration tests: the listener's log stays bounded through the real binary. A connection
//! sending a flood of rejected frames gets at most `--log-rate` lines a second and a count of
//! the rest; an `--exec` command's stderr comes out labelled as the command's, cut and limited.

use crate::support::listen_proc::{is, ListenProc};
use crate::support::mllp_bin;
use crate::support::mllp_client::{adt, MllpClient};
use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

const FRAMES: usize = 200_000;
/// Frames written per write: large batches keep the connection flowing.
const PER_WRITE: usize = 10_000;

/// What a listener wrote on stderr: its size and the lines about suppression and messages.
#[derive(Default)]
struct Log {
    bytes: usize,
    suppressed: Vec<String>,
    /// Lines about single frames (`answered AE`, `message`) that were written.
    per_frame: u64,
}

/// The count in `connection 1: 41250 lines suppressed (...)`.
fn suppressed_count(line: &str) -> u64 {
    let after = line
        .split("connection 1: ")
        .nth(1)
        .expect("a connection line");
    after.split(' ').next().unwrap().parse().expect("a count")
}

#[tokio::test(flavor = "multi_thread")]
async fn a_flood_of_rejected_frames_is_logged_within_the_rate_and_counted() {
    let mut child = Command::new(mllp_bin())
        .args(["listen", "--port", "0"])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start mllp listen");
    let stderr = child.stderr.take().unwrap();
    let (addr_tx, addr_rx) = std::sync::mpsc::channel();
    let reader = std::thread::spawn(move || {
        let mut log = Log::default();
        let mut lines = BufReader::new(stderr);
        let mut line = String::new();
        while lines.read_line(&mut line).unwrap_or(0) > 0 {
            log.bytes += line.len();
            if let Some(addr) = line.trim_end().split("listening on ").nth(1) {
                let _ = addr_tx.send(addr.to_string());
            } else if line.contains("lines suppressed") || line.contains("line suppressed") {
                log.suppressed.push(line.trim_end().to_string());
            } else if line.contains("connection 1: answered AE")
                || line.contains("connection 1: message")
            {
                log.per_frame += 1;
            }
            line.clear();
        }
        log
    });
    let addr = addr_rx
        .recv_timeout(Duration::from_secs(15))
        .expect("the listening line");
    let stream = TcpStream::connect(&addr).await.unwrap();
    let (mut from, mut to) = stream.into_split();
    // Answers are read apart from the writes, so neither side's buffer fills and stalls the other.
    let answers = tokio::spawn(async move {
        let mut seen = 0;
        let mut buf = vec![0; 1 << 16];
        while seen < FRAMES {
            match from.read(&mut buf).await {
                Ok(0) | Err(_) => break,
                Ok(n) => seen += buf[..n].iter().filter(|b| **b == 0x1c).count(),
            }
        }
        seen
    });
    // No MSH segment: each frame is answered negatively and logged.
    let batch = b"\x0bnot hl7\r\x1c\r".repeat(PER_WRITE);
    for _ in 0..FRAMES / PER_WRITE {
        to.write_all(&batch).await.unwrap();
    }
    let answered = tokio::time::timeout(Duration::from_secs(120), answers)
        .await
        .expect("every frame answered in time")
        .unwrap();
    assert_eq!(answered, FRAMES);
    drop(to);
    let ok = Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()
        .unwrap()
        .success();
    assert!(ok);
    let _ = child.wait();
    let log = reader.join().unwrap();
    eprintln!("listener stderr: {} bytes", log.bytes);
    assert!(
        log.bytes < 20 << 20,
        "stderr of {} bytes for one connection",
        log.bytes
    );
    assert!(
        !log.suppressed.is_empty(),
        "no line says what was held back"
    );
    // Each frame makes two lines: every one written or counted.
    let counted: u64 = log.suppressed.iter().map(|l| suppressed_count(l)).sum();
    assert_eq!(
        log.per_frame + counted,
        2 * FRAMES as u64,
        "{:?}",
        log.suppressed
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn an_exec_commands_stderr_is_labelled_cut_and_limited() {
    // One long line, then many short ones, all on the command's stderr.
    let command = "head -c 5000 /dev/zero | tr '\\0' y >&2; echo >&2; \
                   i=0; while [ $i -lt 3000 ]; do echo \"complaint $i\" >&2; i=$((i+1)); done; \
                   cat >/dev/null";
    let server = ListenProc::start(&["--exec", command, "--log-rate", "50"]);
    let mut client = MllpClient::connect(server.addr).await;
    client.send(&adt(b"ex1", "")).await;
    let ack = client.ack().await.expect("an answer");
    assert_eq!(ack.code, "AA");
    let mut events = tokio::task::block_in_place(|| server.events_until(is("message")));
    drop(client);
    server.signal("TERM");
    let (_, rest, _) = tokio::task::block_in_place(|| server.wait());
    events.extend(rest);
    let said: Vec<_> = events
        .iter()
        .filter(|e| e["event"] == "exec_stderr")
        .collect();
    // 3001 lines in far less than a minute: most are held back.
    assert!(
        (50..3001).contains(&said.len()),
        "{} lines written",
        said.len()
    );
    assert!(said
        .iter()
        .all(|e| e["pid"].as_u64().is_some_and(|p| p > 0)));
    assert_eq!(said[0]["truncated"], true);
    assert_eq!(said[0]["line"].as_str().unwrap(), "y".repeat(1000));
    assert_eq!(said[1]["line"], "complaint 0");
    assert_eq!(said[1]["truncated"], false);
    let held: Vec<_> = events
        .iter()
        .filter(|e| e["event"] == "suppressed" && e["source"] == "exec")
        .collect();
    let held: u64 = held.iter().map(|e| e["count"].as_u64().unwrap()).sum();
    assert_eq!(
        said.len() as u64 + held,
        3001,
        "every line written or counted"
    );
}

/// What a JSON log said about single frames: lines written, and the lines `suppressed` lines
/// counted, by the connection and overall.
#[derive(Default)]
struct JsonLog {
    bytes: usize,
    per_frame: u64,
    by_connection: u64,
    overall: u64,
    overall_lines: u64,
}

#[tokio::test(flavor = "multi_thread")]
async fn many_connections_together_are_held_to_the_overall_rate() {
    const CONNECTIONS: usize = 2000;
    const EACH: usize = 100;
    let mut child = Command::new(mllp_bin())
        .args(["--log-format", "json", "listen", "--port", "0"])
        .args([
            "--max-connections",
            "2000",
            "--max-connections-per-peer",
            "2000",
        ])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start mllp listen");
    let stderr = child.stderr.take().unwrap();
    let (addr_tx, addr_rx) = std::sync::mpsc::channel();
    let reader = std::thread::spawn(move || {
        let mut log = JsonLog::default();
        for line in BufReader::new(stderr).lines().map_while(Result::ok) {
            log.bytes += line.len() + 1;
            let event: serde_json::Value = serde_json::from_str(&line).expect("a JSON line");
            match event["event"].as_str().unwrap_or_default() {
                "listening" => {
                    let _ = addr_tx.send(event["addr"].as_str().unwrap().to_string());
                }
                "nack" | "message" => log.per_frame += 1,
                "suppressed" if event["source"] == "all" => {
                    log.overall += event["count"].as_u64().unwrap();
                    log.overall_lines += 1;
                }
                "suppressed" => log.by_connection += event["count"].as_u64().unwrap(),
                _ => {}
            }
        }
        log
    });
    let addr: std::net::SocketAddr = addr_rx
        .recv_timeout(Duration::from_secs(15))
        .expect("the listening line")
        .parse()
        .unwrap();
    let started = std::time::Instant::now();
    // No MSH segment: each frame is answered negatively and logged (a nack and a message line).
    let batch = b"\x0bnot hl7\r\x1c\r".repeat(EACH);
    let mut clients = Vec::new();
    for _ in 0..CONNECTIONS {
        let batch = batch.clone();
        clients.push(tokio::spawn(async move {
            let mut stream = TcpStream::connect(addr).await.unwrap();
            stream.write_all(&batch).await.unwrap();
            let (mut seen, mut buf) = (0, vec![0; 4096]);
            while seen < EACH {
                match stream.read(&mut buf).await {
                    Ok(0) | Err(_) => break,
                    Ok(n) => seen += buf[..n].iter().filter(|b| **b == 0x1c).count(),
                }
            }
            seen
        }));
    }
    let mut answered = 0;
    for client in clients {
        answered += tokio::time::timeout(Duration::from_secs(120), client)
            .await
            .expect("every frame answered in time")
            .unwrap();
    }
    assert_eq!(answered, CONNECTIONS * EACH);
    let ok = Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()
        .unwrap()
        .success();
    assert!(ok);
    let _ = child.wait();
    let seconds = started.elapsed().as_secs();
    let log = reader.join().unwrap();
    eprintln!(
        "listener stderr: {} bytes in {seconds} s; {} frame lines written",
        log.bytes, log.per_frame
    );
    // At most 1,000 lines in each second of the run, and one overall count a second.
    assert!(
        log.per_frame <= 1000 * (seconds + 2),
        "{} frame lines in {seconds} s",
        log.per_frame
    );
    assert!(
        log.overall_lines <= seconds + 2,
        "{} overall counts",
        log.overall_lines
    );
    assert!(log.overall > 0, "no line says what was held back overall");
    assert_eq!(
        log.per_frame + log.by_connection + log.overall,
        2 * (CONNECTIONS * EACH) as u64,
        "every line written or counted once"
    );
}
