//! `send --host A --host B`: a primary that refuses, or dies mid-run, and the link moves to the
//! backup; every message still has exactly one fate.

use super::{path, send, write};
use crate::support::peer::{Behaviour, Peer, Script};
use crate::support::peer_wire::message;
use crate::support::ports::closed_port;

fn input(dir: &std::path::Path, n: usize) -> String {
    let bytes: Vec<u8> = (1..=n)
        .flat_map(|i| message(&format!("F{i}"), "PAYLOADMARKER7Q3"))
        .collect();
    path(&write(dir, "in.hl7", &bytes))
}

fn quick() -> Vec<String> {
    [
        "--backoff-initial",
        "10ms",
        "--backoff-max",
        "50ms",
        "--json",
    ]
    .map(String::from)
    .to_vec()
}

#[tokio::test(flavor = "multi_thread")]
async fn a_primary_that_refuses_hands_the_link_to_the_backup() {
    let a = closed_port();
    let backup = Peer::start(Script::always(Behaviour::Ack("AA"))).await;
    let dir = tempfile::tempdir().unwrap();
    let file = input(dir.path(), 3);
    let mut args = quick();
    args.extend(
        [
            "--host",
            &format!("127.0.0.1:{a}"),
            "--host",
            &format!("127.0.0.1:{}", backup.port()),
            "--failover-after",
            "2",
            &file,
        ]
        .map(String::from),
    );
    let run = send(&args).await;
    assert_eq!(run.code, 0, "{}{}", run.stdout, run.stderr);
    assert_eq!(run.messages().len(), 3);
    assert!(run.messages().iter().all(|r| r["outcome"] == "accepted"));
    assert_eq!(backup.payloads().len(), 3);
}

/// A primary that answers `n` messages on its first connection, then dies: the connection
/// and the listening socket close, so later connects are refused.
pub(super) async fn dying_primary(n: usize) -> u16 {
    use crate::support::peer_wire::{ack, frame, Deframer};
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    tokio::spawn(async move {
        let (mut tcp, _) = listener.accept().await.unwrap();
        drop(listener);
        let mut deframer = Deframer::default();
        let mut buf = [0u8; 4096];
        let mut answered = 0;
        while answered < n {
            let Ok(read) = tcp.read(&mut buf).await else {
                return;
            };
            if read == 0 {
                return;
            }
            deframer.push(&buf[..read]);
            while let Some(payload) = deframer.next_frame() {
                if answered < n {
                    let _ = tcp.write_all(&frame(&ack(&payload, "AA"))).await;
                    answered += 1;
                }
            }
        }
    });
    port
}

#[tokio::test(flavor = "multi_thread")]
async fn a_primary_that_dies_mid_run_leaves_no_message_without_its_fate() {
    let primary = dying_primary(2).await;
    let backup = Peer::start(Script::always(Behaviour::Ack("AA"))).await;
    let dir = tempfile::tempdir().unwrap();
    let file = input(dir.path(), 6);
    let mut args = quick();
    args.extend(
        [
            "--no-pipeline",
            "--host",
            &format!("127.0.0.1:{primary}"),
            "--host",
            &format!("127.0.0.1:{}", backup.port()),
            "--failover-after",
            "1",
            &file,
        ]
        .map(String::from),
    );
    let run = send(&args).await;
    let records = run.messages();
    assert_eq!(records.len(), 6, "{}", run.stdout);
    assert_eq!(run.code, 0, "{}{}", run.stdout, run.stderr);
    assert!(records.iter().all(|r| r["outcome"] == "accepted"));
    // What the primary did not answer went to the backup, each once.
    assert!(backup.payloads().len() >= 4, "{}", backup.payloads().len());
}

#[tokio::test(flavor = "multi_thread")]
async fn with_every_host_down_the_reconnect_limits_still_end_the_run() {
    for limit in [["--give-up-after", "1s"], ["--max-retries", "4"]] {
        let (a, b) = (closed_port(), closed_port());
        let dir = tempfile::tempdir().unwrap();
        let file = input(dir.path(), 2);
        let mut args = quick();
        args.extend(
            [
                "--host",
                &format!("127.0.0.1:{a}"),
                "--host",
                &format!("127.0.0.1:{b}"),
                "--failover-after",
                "1",
                limit[0],
                limit[1],
                &file,
            ]
            .map(String::from),
        );
        // Bouncing between the hosts for ever is the failure this guards against.
        let run = tokio::time::timeout(std::time::Duration::from_secs(20), send(&args))
            .await
            .unwrap_or_else(|_| panic!("{limit:?}: the run did not end"));
        assert_eq!(run.code, 4, "{limit:?}: {}{}", run.stdout, run.stderr);
        let records = run.messages();
        assert_eq!(records.len(), 2, "{}", run.stdout);
        assert!(records.iter().all(|r| r["outcome"] == "never-delivered"));
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn failover_flags_with_one_host_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let file = input(dir.path(), 1);
    for flag in [["--failover-after", "2"], ["--failback-after", "1s"]] {
        let mut args = quick();
        args.extend(["--host", "127.0.0.1:9", flag[0], flag[1], &file].map(String::from));
        let run = send(&args).await;
        assert_eq!(run.code, 2, "{flag:?}: {}{}", run.stdout, run.stderr);
        assert!(run.stderr.contains(flag[0]), "{}", run.stderr);
        assert!(run.stderr.contains("more than once"), "{}", run.stderr);
    }
}
