//! Enhanced mode (CA, then the application ACK) against a two-phase peer and `mllp listen`,
//! and a tolerated deviation warned about without verbose flags.

use super::{path, send, to, write};
use crate::support::listen_proc::ListenProc;
use crate::support::peer::{Behaviour, Peer, Script};
use crate::support::peer_wire::frame;

const ENHANCED: &str =
    "MSH|^~\\&|A|B|C|D|20240101000000||ADT^A01|ENH1|P|2.5|||AL|AL\rPID|1||X||PAYLOADMARKER7Q3^P\r";

/// A peer that answers each message with `CA`, then (after a pause) `AA` for the same MSA-2.
async fn two_phase_peer() -> (u16, tokio::task::JoinHandle<()>) {
    use crate::support::peer_wire::{ack, Deframer};
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    let task = tokio::spawn(async move {
        let (mut tcp, _) = listener.accept().await.unwrap();
        let mut deframer = Deframer::default();
        let mut buf = [0u8; 4096];
        loop {
            let n = match tcp.read(&mut buf).await {
                Ok(0) | Err(_) => return,
                Ok(n) => n,
            };
            deframer.push(&buf[..n]);
            while let Some(payload) = deframer.next_frame() {
                tcp.write_all(&frame(&ack(&payload, "CA"))).await.unwrap();
                tokio::task::yield_now().await;
                tcp.write_all(&frame(&ack(&payload, "AA"))).await.unwrap();
            }
        }
    });
    (port, task)
}

#[tokio::test(flavor = "multi_thread")]
async fn enhanced_mode_settles_on_ca_then_aa() {
    let (port, _peer) = two_phase_peer().await;
    let dir = tempfile::tempdir().unwrap();
    let file = write(dir.path(), "enh.hl7", ENHANCED.as_bytes());
    let run = send(&to(
        port,
        &[
            "--json",
            "--print-ack",
            "--correlate",
            "control-id",
            &path(&file),
        ],
    ))
    .await;
    assert_eq!(run.code, 0, "{}{}", run.stdout, run.stderr);
    let r = &run.messages()[0];
    assert_eq!(r["outcome"], "accepted");
    assert_eq!(r["ack_code"], "AA");
    assert!(r["ack"].as_str().unwrap().contains("MSA|AA|ENH1"));
}

#[tokio::test(flavor = "multi_thread")]
async fn enhanced_mode_to_listen_without_an_application_ack_is_committed_only() {
    // `mllp listen` answers CA; with no application ACK following, the message is
    // committed-only (exit 3: "only its CA").
    let listen = ListenProc::start(&[]);
    let dir = tempfile::tempdir().unwrap();
    let file = write(dir.path(), "enh.hl7", ENHANCED.as_bytes());
    let run = send(&to(
        listen.addr.port(),
        &[
            "--json",
            "--correlate",
            "control-id",
            "--app-ack-timeout",
            "300ms",
            &path(&file),
        ],
    ))
    .await;
    let r = &run.messages()[0];
    if r["outcome"] == "accepted" {
        // listen sends the application ACK: the full two-phase exchange.
        assert_eq!(r["ack_code"], "AA");
        assert_eq!(run.code, 0);
    } else {
        assert_eq!(r["outcome"], "committed-only", "{r}");
        assert_eq!(r["ack_code"], "CA");
        assert_eq!(run.code, 3);
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_missing_application_ack_is_committed_only_with_the_public_cause_ack_timeout() {
    let peer = Peer::start(Script::always(Behaviour::Ack("CA"))).await;
    let dir = tempfile::tempdir().unwrap();
    let file = write(dir.path(), "enh.hl7", ENHANCED.as_bytes());
    let run = send(&to(
        peer.port(),
        &[
            "--json",
            "--correlate",
            "control-id",
            "--app-ack-timeout",
            "200ms",
            &path(&file),
        ],
    ))
    .await;
    let r = &run.messages()[0];
    assert_eq!(r["outcome"], "committed-only", "{r}");
    assert_eq!(r["cause"], "ack-timeout", "{r}");
    assert_eq!(r["cause_detail"], "app-ack-timeout", "{r}");
    assert_eq!(run.code, 3);
}

#[tokio::test(flavor = "multi_thread")]
async fn a_tolerated_deviation_is_warned_about_without_verbose_flags() {
    // An ACK naming another message: warned about, credited to none.
    let peer = Peer::start(Script::always(Behaviour::WrongId("AA"))).await;
    let dir = tempfile::tempdir().unwrap();
    let file = write(dir.path(), "enh.hl7", ENHANCED.as_bytes());
    let quick = ["--ack-timeout", "200ms", "--no-reconnect"];
    let run = send(&to(peer.port(), &[&quick[..], &[&path(&file)]].concat())).await;
    // Every message written had such a reply: the peer does not echo MSH-10 (permanent).
    assert_eq!(run.code, 5, "{}{}", run.stdout, run.stderr);
    assert!(run.stderr.contains("--correlate fifo"), "{}", run.stderr);
    assert!(
        run.stderr.contains("MLLP_ACK_UNMATCHED_CONTROL_ID"),
        "no warning: {}",
        run.stderr
    );
    let quiet = send(&to(
        peer.port(),
        &[&quick[..], &["--quiet", &path(&file)]].concat(),
    ))
    .await;
    assert!(!quiet.stderr.contains("MLLP_ACK_UNMATCHED_CONTROL_ID"));
}
