//! `relay --mllp2-downstream` / `--mllp2-upstream`: each side speaks its own MLLP release; a
//! commit block or an AA downstream only after the upstream's final positive answer, a NAK
//! or negative answer only when nothing was kept, nothing when the upstream went silent.

use super::proc::RelayProc;
use crate::support::engine::scripted;
use crate::support::mllp_client::{adt, MllpClient};
use crate::support::peer::{Behaviour, Peer, Script};
use crate::support::peer_wire::{ack, frame, Deframer};
use crate::support::ports::closed_port;
use std::time::Duration;
use tokio::io::AsyncWriteExt;

const COMMIT: &[u8] = &[0x0b, 0x06, 0x1c, 0x0d];
const NAK: &[u8] = &[0x0b, 0x15, 0x1c, 0x0d];

/// A Release 2 engine answering every message with `reply` (given the message's payload).
async fn engine(reply: fn(&[u8]) -> Vec<u8>) -> String {
    let port = scripted(move |frames| {
        let mut out = Vec::new();
        for payload in frames.iter().filter(|f| f.len() != 1) {
            out.extend(reply(payload));
        }
        out
    })
    .await;
    format!("127.0.0.1:{port}")
}

/// Write one message downstream as raw bytes and read the next frame's payload (a block is
/// its one byte); `None` when the relay closed the connection first.
async fn raw_exchange(relay: &RelayProc, id: &str) -> Option<Vec<u8>> {
    let mut stream = tokio::net::TcpStream::connect(relay.addr).await.unwrap();
    stream
        .write_all(&frame(&adt(id.as_bytes(), "")))
        .await
        .unwrap();
    let mut deframer = Deframer::canonical();
    let read = deframer.read_frame(&mut stream);
    tokio::time::timeout(Duration::from_secs(10), read)
        .await
        .expect("an answer or a close in time")
}

const FAST: [&str; 6] = [
    "--backoff-initial",
    "20ms",
    "--backoff-max",
    "100ms",
    "--ack-timeout",
    "1s",
];

#[tokio::test(flavor = "multi_thread")]
async fn a_release_2_downstream_gets_a_commit_block_after_a_release_1_upstreams_aa() {
    let peer = Peer::start(Script::always(Behaviour::Ack("AA"))).await;
    let relay = RelayProc::start(
        &peer.addr().to_string(),
        &[&FAST[..], &["--mllp2-downstream"]].concat(),
    );
    assert_eq!(
        raw_exchange(&relay, "D1").await,
        Some(COMMIT[1..2].to_vec())
    );
    assert_eq!(peer.payloads().len(), 1);
    // An AE upstream: a NAK block, never a commit.
    let refusing = Peer::start(Script::always(Behaviour::Ack("AE"))).await;
    let relay = RelayProc::start(
        &refusing.addr().to_string(),
        &[&FAST[..], &["--mllp2-downstream"]].concat(),
    );
    assert_eq!(raw_exchange(&relay, "D2").await, Some(NAK[1..2].to_vec()));
}

#[tokio::test(flavor = "multi_thread")]
async fn a_release_1_downstream_gets_an_aa_only_after_a_release_2_upstreams_commit_block() {
    let to = engine(|_| COMMIT.to_vec()).await;
    let relay = RelayProc::start(&to, &[&FAST[..], &["--mllp2-upstream"]].concat());
    let mut client = MllpClient::connect(relay.addr).await;
    client.send(&adt(b"U1", "")).await;
    let answer = client.ack().await.expect("an answer");
    assert_eq!(
        (answer.code.as_str(), &answer.control_id[..]),
        ("AA", &b"U1"[..])
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn both_sides_release_2_pass_a_commit_block_on() {
    let to = engine(|_| COMMIT.to_vec()).await;
    let args = [&FAST[..], &["--mllp2-upstream", "--mllp2-downstream"]].concat();
    let relay = RelayProc::start(&to, &args);
    assert_eq!(
        raw_exchange(&relay, "B1").await,
        Some(COMMIT[1..2].to_vec())
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn an_upstream_nak_is_negative_downstream_with_nothing_claimed_kept() {
    let to = engine(|_| NAK.to_vec()).await;
    let relay = RelayProc::start(&to, &[&FAST[..], &["--mllp2-upstream"]].concat());
    let mut client = MllpClient::connect(relay.addr).await;
    client.send(&adt(b"N1", "")).await;
    let answer = client.ack().await.expect("an answer");
    assert_eq!(answer.code, "AE");
    assert!(String::from_utf8_lossy(&answer.payload).contains("NAK block"));
    let args = [&FAST[..], &["--mllp2-upstream", "--mllp2-downstream"]].concat();
    let relay = RelayProc::start(&to, &args);
    assert_eq!(raw_exchange(&relay, "N2").await, Some(NAK[1..2].to_vec()));
}

#[tokio::test(flavor = "multi_thread")]
async fn a_release_1_answer_to_mllp2_upstream_is_named_and_never_accepted() {
    let to = engine(|payload| frame(&ack(payload, "AA"))).await;
    let relay = RelayProc::start(&to, &[&FAST[..], &["--mllp2-upstream"]].concat());
    let mut client = MllpClient::connect(relay.addr).await;
    client.send(&adt(b"R1", "")).await;
    let answer = client.ack_within(Duration::from_secs(10)).await;
    assert!(
        matches!(answer, Ok(None)),
        "no answer, the connection closed"
    );
    let named = relay.events_until(|e| e["cause"] == "peer-not-mllp2");
    assert!(!named.is_empty());
}

#[tokio::test(flavor = "multi_thread")]
async fn a_silent_release_2_upstream_leaves_the_fate_unknown_downstream() {
    let to = engine(|_| Vec::new()).await;
    let args = [&FAST[..], &["--mllp2-upstream", "--mllp2-downstream"]].concat();
    let relay = RelayProc::start(&to, &args);
    assert_eq!(
        raw_exchange(&relay, "S1").await,
        None,
        "no block, the connection closed"
    );
}

#[test]
fn a_release_2_upstream_with_a_mirror_is_refused() {
    let out = crate::support::mllp()
        .args([
            "relay",
            "--listen",
            "0",
            "--to",
            "127.0.0.1:9",
            "--mllp2-upstream",
        ])
        .args(["--mirror", "127.0.0.1:8"])
        .timeout(Duration::from_secs(10))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
}

/// `--queue` with a Release 2 downstream: the commit block comes once the row is on disk, with
/// the upstream down; a SIGKILL right after it loses nothing.
#[tokio::test(flavor = "multi_thread")]
async fn a_queue_commit_block_means_the_row_survives_a_sigkill() {
    let dir = tempfile::tempdir().unwrap();
    let queue = dir.path().join("q.db");
    let down = format!("127.0.0.1:{}", closed_port());
    let args = [
        &FAST[..],
        &["--mllp2-downstream", "--queue", queue.to_str().unwrap()],
    ]
    .concat();
    let mut relay = RelayProc::start(&down, &args);
    assert_eq!(
        raw_exchange(&relay, "Q1").await,
        Some(COMMIT[1..2].to_vec())
    );
    relay.kill();
    let db = rusqlite::Connection::open(&queue).unwrap();
    let pending: i64 = db
        .query_row(
            "SELECT COUNT(*) FROM queue WHERE status = 'pending'",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(pending, 1);
}
