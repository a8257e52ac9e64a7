//! `mllp send --accept` against engines that only dial out: one that connects and answers every
//! message AA, one that reads two and drops the connection (they go again on its next
//! connection, none accepted without its AA), one that never connects (never-delivered once the
//! reconnect policy gives up), a second connection while one is in use (closed and said), and
//! the bind's safety. No line carries the payload marker.

use super::{args, path, send, send_bin, write};
use crate::support::reverse::{closed_at_once, dial_in_and_answer, dial_in_read_and_drop};
use crate::support::send_proc::{messages, Running};
use std::collections::BTreeSet;
use std::net::SocketAddr;

/// Start `mllp --log-format json send --accept 0 --json ARGS FILE` over `n` messages `A1..An`;
/// the run and the address it accepts on.
async fn accepting(dir: &std::path::Path, n: usize, rest: &[&str]) -> (Running, SocketAddr) {
    let file = path(&write(dir, "in.hl7", &messages("A", n)));
    let mut cmd = tokio::process::Command::new(send_bin());
    cmd.args(["--log-format", "json", "send", "--accept", "0", "--json"])
        .args(rest)
        .arg(file)
        .env_remove("NO_COLOR");
    let mut run = Running::start(cmd);
    let first: serde_json::Value = serde_json::from_str(&run.stderr_line().await).unwrap();
    assert_eq!(first["event"], "accepting", "{first}");
    assert!(first["time"].is_string(), "{first}");
    let addr = first["addr"].as_str().unwrap().parse().unwrap();
    (run, addr)
}

fn all(n: usize) -> BTreeSet<String> {
    (1..=n).map(|i| format!("A{i}")).collect()
}

#[tokio::test(flavor = "multi_thread")]
async fn an_engine_that_connects_gets_every_message_and_each_is_accepted() {
    let dir = tempfile::tempdir().unwrap();
    let (run, addr) = accepting(dir.path(), 5, &[]).await;
    let answered = dial_in_and_answer(addr, 5).await;
    let run = run.finish().await;
    assert_eq!(run.code, 0, "{}{}", run.stdout, run.stderr);
    assert_eq!(answered.iter().cloned().collect::<BTreeSet<_>>(), all(5));
    let records = run.messages();
    assert_eq!(records.len(), 5);
    assert!(
        records.iter().all(|r| r["outcome"] == "accepted"),
        "{}",
        run.stdout
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn an_engine_that_reads_two_and_drops_gets_them_again_on_its_next_connection() {
    let dir = tempfile::tempdir().unwrap();
    // Two written at a time: the two the engine reads are all that was written.
    let quick = [
        "--window",
        "2",
        "--backoff-initial",
        "10ms",
        "--backoff-max",
        "50ms",
    ];
    let (run, addr) = accepting(dir.path(), 4, &quick).await;
    let dropped = dial_in_read_and_drop(addr, 2).await;
    assert_eq!(dropped, ["A1", "A2"]);
    // The sender waits for the next inbound connection and writes them there again.
    let answered = dial_in_and_answer(addr, 4).await;
    let run = run.finish().await;
    assert_eq!(run.code, 0, "{}{}", run.stdout, run.stderr);
    let answered: BTreeSet<String> = answered.into_iter().collect();
    assert_eq!(answered, all(4));
    let records = run.messages();
    assert_eq!(records.len(), 4);
    for record in &records {
        // Accepted only with the AA of the second connection.
        assert_eq!(record["outcome"], "accepted", "{record}");
        let id = record["control_id"].as_str().unwrap();
        assert!(answered.contains(id), "{id} accepted without its AA");
    }
    let resent = records.iter().filter(|r| r["attempts"].as_u64() > Some(1));
    assert_eq!(resent.count(), 2, "{}", run.stdout);
    assert_eq!(run.summary()["resent"], 2, "{}", run.stdout);
}

#[tokio::test(flavor = "multi_thread")]
async fn an_engine_that_never_connects_leaves_every_message_never_delivered() {
    let dir = tempfile::tempdir().unwrap();
    let give_up = [
        "--connect-timeout",
        "200ms",
        "--give-up-after",
        "1s",
        "--backoff-initial",
        "10ms",
        "--backoff-max",
        "50ms",
    ];
    let (run, _addr) = accepting(dir.path(), 3, &give_up).await;
    let run = run.finish().await;
    let records = run.messages();
    assert_eq!(records.len(), 3);
    for record in &records {
        assert_eq!(record["outcome"], "never-delivered", "{record}");
        assert_eq!(record["cause"], "connect-timeout", "{record}");
    }
    // Never-delivered after a transient failure: the transient exit, as for a host that
    // never answers.
    assert_eq!(run.code, 4, "{}", run.stderr);
    // Words for waiting for the engine, not for connecting out to it.
    let summary = run.summary();
    let hint = summary["hint"].as_str().unwrap_or_default();
    assert!(hint.contains("no engine connected"), "{summary}");
    assert!(!run.stderr.contains("routing"), "{}", run.stderr);
    assert!(!run.stderr.contains("cannot connect"), "{}", run.stderr);
}

#[tokio::test(flavor = "multi_thread")]
async fn a_second_connection_while_one_is_in_use_is_closed_and_said() {
    use tokio::io::AsyncWriteExt;
    let dir = tempfile::tempdir().unwrap();
    let (run, addr) = accepting(dir.path(), 1, &[]).await;
    let mut first = tokio::net::TcpStream::connect(addr).await.unwrap();
    let mut deframer = crate::support::peer_wire::Deframer::canonical();
    let payload = deframer.read_frame(&mut first).await.expect("the message");
    // In use: another engine connection is closed at once.
    assert!(closed_at_once(addr).await);
    let ack = crate::support::peer_wire::ack(&payload, "AA");
    first
        .write_all(&crate::support::peer_wire::frame(&ack))
        .await
        .unwrap();
    let run = run.finish().await;
    assert_eq!(run.code, 0, "{}{}", run.stdout, run.stderr);
    let refused = run
        .stderr
        .lines()
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .find(|e| e["event"] == "accept_refused");
    let refused = refused.expect("the refusal said");
    assert_eq!(refused["reason"], "in-use", "{refused}");
}

#[tokio::test]
async fn a_wildcard_needs_allow_wildcard_and_tls_flags_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let file = path(&write(dir.path(), "in.hl7", &messages("W", 1)));
    let run = send(&args(&["--accept", "0.0.0.0:0", &file])).await;
    assert_eq!(run.code, 2, "{}", run.stderr);
    assert!(run.stderr.contains("--allow-wildcard"), "{}", run.stderr);
    let run = send(&args(&["--accept", "0", "--tls", &file])).await;
    assert_eq!(run.code, 2, "{}", run.stderr);
    assert!(run.stderr.contains("--tls"), "{}", run.stderr);
    let run = send(&args(&["--accept", "0", "--host", "127.0.0.1:1", &file])).await;
    assert_eq!(run.code, 2, "{}", run.stderr);
    assert!(run.stderr.contains("--accept"), "{}", run.stderr);
}

#[tokio::test]
async fn an_address_in_use_is_refused_before_anything_is_sent() {
    let dir = tempfile::tempdir().unwrap();
    let file = path(&write(dir.path(), "in.hl7", &messages("U", 2)));
    let taken = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = taken.local_addr().unwrap().to_string();
    let run = send(&args(&["--accept", &addr, "--json", &file])).await;
    // As any other address on the command line that cannot be used: nothing was read from the
    // engine, nothing sent, so no message has a fate to report.
    assert_eq!(run.code, 2, "{}{}", run.stdout, run.stderr);
    assert!(run.stdout.is_empty(), "{}", run.stdout);
    assert!(
        run.stderr.contains(&format!("--accept {addr}")),
        "{}",
        run.stderr
    );
    assert!(run.stderr.contains("in use"), "{}", run.stderr);
    assert!(run.stderr.contains("another port"), "{}", run.stderr);
    assert!(run.stderr.contains("nothing was sent"), "{}", run.stderr);
}
