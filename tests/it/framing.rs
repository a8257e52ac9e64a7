//! Integration tests: the MLLP codec over real loopback sockets, and the decoder fuzz corpus
//! replayed as ordinary tests.

use bytes::Bytes;
use futures::{SinkExt, StreamExt};
use mllp::framing::{Decoded, FramingError, MllpCodec, Tolerance, DEFAULT_MAX_FRAME};
use mllp::warning::{Warning, WarningCode};
use tokio::io::AsyncWriteExt;
use tokio::net::{TcpListener, TcpStream};
use tokio_util::codec::{FramedRead, FramedWrite};

/// A connected loopback pair: (client side, server side).
async fn pair() -> (TcpStream, TcpStream) {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let (client, accepted) = tokio::join!(TcpStream::connect(addr), listener.accept());
    (client.unwrap(), accepted.unwrap().0)
}

#[tokio::test]
async fn frames_written_by_the_encoder_decode_over_tcp() {
    let (client, server) = pair().await;
    let payloads: Vec<Bytes> = (0..50)
        .map(|i| Bytes::from(format!("MSH|^~\\&|A|B|C|D|||ADT^A01|{i}|P|2.5\r").repeat(i % 7 + 1)))
        .collect();
    let sent = payloads.clone();
    let writer = tokio::spawn(async move {
        let mut sink =
            FramedWrite::new(client, MllpCodec::new(Tolerance::STRICT, DEFAULT_MAX_FRAME));
        for payload in sent {
            sink.send(payload).await.unwrap();
        }
    });
    let mut frames = FramedRead::new(server, MllpCodec::new(Tolerance::STRICT, DEFAULT_MAX_FRAME));
    let mut received = Vec::new();
    while let Some(item) = frames.next().await {
        match item.unwrap() {
            Decoded::Frame(frame) => {
                assert!(frame.warnings.is_empty());
                received.push(frame.payload);
            }
            other => panic!("unexpected {other:?}"),
        }
    }
    writer.await.unwrap();
    assert_eq!(received, payloads);
}

#[tokio::test]
async fn fs_only_sender_gets_its_frame_while_the_connection_stays_open() {
    let (mut client, server) = pair().await;
    let mut frames = FramedRead::new(server, MllpCodec::new(Tolerance::RECEIVER, 1024));
    client.write_all(b"\x0bMSH|one\x1c").await.unwrap();
    // The sender waits here: the frame must arrive without a terminator or end of stream.
    let Some(Ok(Decoded::Frame(first))) = frames.next().await else {
        panic!("no frame at FS");
    };
    assert_eq!(&first.payload[..], b"MSH|one");
    client.write_all(b"\x0bMSH|two\x1c\x0d").await.unwrap();
    client.shutdown().await.unwrap();
    let late = frames.next().await.unwrap().unwrap();
    assert_eq!(
        late,
        Decoded::LateWarning {
            frame_index: 0,
            warning: Warning::at(WarningCode::FsWithoutCr, 8),
        }
    );
    let Some(Ok(Decoded::Frame(second))) = frames.next().await else {
        panic!("second frame missing");
    };
    assert_eq!((second.index, second.offset), (1, 10));
    assert!(frames.next().await.is_none());
}

#[tokio::test]
async fn oversize_frame_fails_before_its_fs_arrives() {
    let (mut client, server) = pair().await;
    let mut frames = FramedRead::new(server, MllpCodec::new(Tolerance::RECEIVER, 64 * 1024));
    let (done, hold_open) = tokio::sync::oneshot::channel::<()>();
    let writer = tokio::spawn(async move {
        client.write_all(b"\x0b").await.unwrap();
        client.write_all(&vec![b'A'; 64 * 1024 + 1]).await.unwrap();
        let _ = hold_open.await;
    });
    // The connection stays open and no FS is ever sent.
    match frames.next().await {
        Some(Err(FramingError::Fatal {
            code: WarningCode::FrameTooLarge,
            byte_offset,
            byte: Some(b'A'),
        })) => assert_eq!(byte_offset, 1 + 64 * 1024),
        other => panic!("expected MLLP_FRAME_TOO_LARGE, got {other:?}"),
    }
    assert!(frames.next().await.is_none(), "fatal is final");
    drop(done);
    writer.await.unwrap();
}

#[tokio::test]
async fn frames_before_a_fatal_byte_arrive_first() {
    let (mut client, server) = pair().await;
    let mut frames = FramedRead::new(server, MllpCodec::new(Tolerance::ACK_READER, 1024));
    client
        .write_all(b"\x0bA\x1c\x0d\x0bB\x1c\x0dgarbage")
        .await
        .unwrap();
    client.shutdown().await.unwrap();
    let mut delivered = 0;
    let error = loop {
        match frames.next().await {
            Some(Ok(Decoded::Frame(_))) => delivered += 1,
            Some(Err(error)) => break error,
            other => panic!("unexpected {other:?}"),
        }
    };
    assert_eq!(delivered, 2);
    assert_eq!(error.code(), Some(WarningCode::MissingLeadingVt));
}

#[test]
fn decode_fuzz_corpus_replays() {
    let dir = crate::support::repo_root().join("fuzz/corpus/decode");
    let mut replayed = 0;
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_file() {
            mllp::fuzzing::decode(&std::fs::read(&path).unwrap());
            replayed += 1;
        }
    }
    assert!(replayed > 0, "no corpus under {}", dir.display());
}
