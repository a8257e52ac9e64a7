//! `mllp listen --mllp2` as a Release 2 sender written from the protocol sees it: a commit block
//! for each message committed, a NAK block for one nothing was kept of, an application ACK that
//! follows as a message and takes the sender's block, which is never committed itself.

use crate::support::listen_proc::ListenProc;
use crate::support::mllp_client::{adt, marked};
use crate::support::peer_wire::{control_id, frame, Deframer};
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

const COMMIT: &[u8] = &[0x0b, 0x06, 0x1c, 0x0d];

/// The next frame the listener writes, canonical, within a few seconds.
async fn next(tcp: &mut TcpStream, deframer: &mut Deframer) -> Vec<u8> {
    let mut buf = [0u8; 4096];
    loop {
        if let Some(f) = deframer.next_frame() {
            return f;
        }
        let n = tokio::time::timeout(Duration::from_secs(5), tcp.read(&mut buf))
            .await
            .expect("no answer within the wait")
            .unwrap();
        assert!(n > 0, "closed");
        deframer.push(&buf[..n]);
    }
}

#[tokio::test]
async fn each_frame_is_answered_with_its_block_and_the_senders_blocks_are_not_kept() {
    let store = tempfile::tempdir().unwrap();
    let out = store.path().display().to_string();
    let server = ListenProc::start(&["--mllp2", "--out-dir", &out]);
    let mut tcp = TcpStream::connect(server.addr).await.unwrap();
    let mut deframer = Deframer::canonical();

    // Original mode: the commit block alone.
    tcp.write_all(&frame(&adt(b"M1", ""))).await.unwrap();
    assert_eq!(next(&mut tcp, &mut deframer).await, [0x06]);

    // No control ID: nothing kept, a NAK block.
    tcp.write_all(&frame(b"MSH|^~\\&|S|F|R|F|20240101||ADT^A01||P|2.5\r"))
        .await
        .unwrap();
    assert_eq!(next(&mut tcp, &mut deframer).await, [0x15]);

    // Enhanced mode: the commit block, then the application ACK as a message, which takes
    // the sender's commit block.
    tcp.write_all(&frame(&marked("M2", "AL|AL"))).await.unwrap();
    assert_eq!(next(&mut tcp, &mut deframer).await, [0x06]);
    let app = next(&mut tcp, &mut deframer).await;
    let text = String::from_utf8_lossy(&app).into_owned();
    assert!(text.contains("MSA|AA|M2"), "{text:?}");
    assert!(control_id(&app).is_some());
    tcp.write_all(COMMIT).await.unwrap();

    // Pipelined: two frames, two blocks, in order.
    let two = [frame(&adt(b"M3", "")), frame(&adt(b"M4", ""))].concat();
    tcp.write_all(&two).await.unwrap();
    assert_eq!(next(&mut tcp, &mut deframer).await, [0x06]);
    assert_eq!(next(&mut tcp, &mut deframer).await, [0x06]);
    drop(tcp);

    let kept: Vec<String> = std::fs::read_dir(store.path())
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "hl7"))
        .map(|p| control_id(&std::fs::read(p).unwrap()).unwrap_or_default())
        .collect();
    let mut kept = kept;
    kept.sort();
    // The sender's block was read, not committed as a message.
    assert_eq!(kept, ["M1", "M2", "M3", "M4"]);
    server.assert_no_payload();
}

#[tokio::test]
async fn a_forced_negative_answer_is_a_nak_block() {
    let server = ListenProc::start(&["--mllp2", "--ack", "AE"]);
    let mut tcp = TcpStream::connect(server.addr).await.unwrap();
    let mut deframer = Deframer::canonical();
    tcp.write_all(&frame(&adt(b"F1", ""))).await.unwrap();
    assert_eq!(next(&mut tcp, &mut deframer).await, [0x15]);
}
