//! Integration tests: HL7 header scanning and ACK building end to end (framed over loopback,
//! de-framed, answered, read back), and the header/ACK fuzz corpus replayed.

use frames::next_frame;
use mllp::ack::{build_ack, build_batch_ack, AckCode, AckContext, Disposition, NackReason};
use mllp::framing::{MllpCodec, Tolerance, DEFAULT_MAX_FRAME};
use mllp::hl7::{scan_ack, split_batch};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio_util::codec::Encoder;

/// Reading one frame from any async reader.
mod frames {
    use bytes::BytesMut;
    use mllp::framing::{Decoded, Frame, MllpCodec};
    use tokio::io::AsyncReadExt;
    use tokio_util::codec::Decoder;

    pub async fn next_frame<R: AsyncReadExt + Unpin>(
        io: &mut R,
        codec: &mut MllpCodec,
        buf: &mut BytesMut,
    ) -> Frame {
        loop {
            while let Some(item) = codec.decode(buf).expect("decodes") {
                if let Decoded::Frame(frame) = item {
                    return frame;
                }
            }
            let n = io.read_buf(buf).await.expect("reads");
            assert!(n > 0, "peer closed before a whole frame");
        }
    }
}

/// Send `wire` to a loopback receiver that answers each frame with `build_ack`, and return
/// the answer's payload as the sending side de-frames it.
async fn round_trip(wire: &[u8], disposition: Disposition) -> Option<Vec<u8>> {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let receiver = tokio::spawn(async move {
        let (mut io, _) = listener.accept().await.unwrap();
        let mut codec = MllpCodec::new(Tolerance::RECEIVER, DEFAULT_MAX_FRAME);
        let mut buf = bytes::BytesMut::new();
        let frame = next_frame(&mut io, &mut codec, &mut buf).await;
        let ctx = AckContext::fresh();
        let answer = build_ack(&frame.payload, disposition, frame.is_damaged(), &ctx);
        if let Some(ack) = &answer {
            let mut out = bytes::BytesMut::new();
            codec.encode(&ack.payload[..], &mut out).unwrap();
            io.write_all(&out).await.unwrap();
        }
        io.shutdown().await.unwrap();
    });
    let mut sender = TcpStream::connect(addr).await.unwrap();
    sender.write_all(wire).await.unwrap();
    let mut reply = Vec::new();
    sender.read_to_end(&mut reply).await.unwrap();
    receiver.await.unwrap();
    if reply.is_empty() {
        return None;
    }
    let mut codec = MllpCodec::new(Tolerance::ACK_READER, DEFAULT_MAX_FRAME);
    let mut buf = bytes::BytesMut::from(&reply[..]);
    let mut drained: &[u8] = &[];
    Some(
        next_frame(&mut drained, &mut codec, &mut buf)
            .await
            .payload
            .to_vec(),
    )
}

fn framed(payload: &[u8]) -> Vec<u8> {
    [&[0x0B][..], payload, &[0x1C, 0x0D]].concat()
}

#[tokio::test]
async fn committed_message_gets_its_control_id_back_over_loopback() {
    let msg = b"MSH|^~\\&|SND|SF|RCV|RF|20240101||ADT^A01|C\\E\\1 ^\x8b |P|2.5|||AL\rPID|1\r";
    let ack = round_trip(&framed(msg), Disposition::Committed)
        .await
        .unwrap();
    let view = scan_ack(&ack).unwrap();
    assert_eq!(view.code, b"CA");
    assert_eq!(view.control_id, b"C\\E\\1 ^\x8b ");
    assert!(ack.starts_with(b"MSH|^~\\&|RCV|RF|SND|SF|"));
}

#[tokio::test]
async fn failed_commit_answers_negative_with_err_207() {
    let msg = b"MSH!^~\\&!S!!R!!T!!ORU^R01!Q9!P!2.4\rOBX!1\r";
    let ack = round_trip(&framed(msg), Disposition::CommitFailed)
        .await
        .unwrap();
    let view = scan_ack(&ack).unwrap();
    assert_eq!((view.code, view.control_id), (&b"AE"[..], &b"Q9"[..]));
    assert_eq!(view.error_code, Some(&b"207"[..]));
    assert!(view.text.is_some());
}

#[tokio::test]
async fn damaged_frame_is_downgraded() {
    // A VT mid-payload: the partial payload is discarded and the remnant flagged.
    let mut wire = b"\x0bMSH|^~\\&|S||R||T||ADT^A01|LOST".to_vec();
    wire.extend_from_slice(&framed(b"MSH|^~\\&|S||R||T||ADT^A01|KEPT|P|2.5\r"));
    let ack = round_trip(&wire, Disposition::Committed).await.unwrap();
    let view = scan_ack(&ack).unwrap();
    assert_eq!((view.code, view.control_id), (&b"AE"[..], &b"KEPT"[..]));
}

#[tokio::test]
async fn an_inbound_ack_gets_no_answer() {
    let ack = b"MSH|^~\\&|R||S||T||ACK^A01|X1|P|2.5\rMSA|AA|C1\r";
    assert_eq!(round_trip(&framed(ack), Disposition::Committed).await, None);
}

#[test]
fn batch_ack_answers_every_message_of_a_batch() {
    let batch = b"BHS|^~\\&|S||R||T||||B7\rMSH|^~\\&|S||R||T||ADT^A01|M1|P|2.5\rMSH|^~\\&|S||R||T||ADT^A08|M2|P|2.5\rBTS|2\r";
    let ctx = AckContext::fresh();
    let plain = build_ack(batch, Disposition::Committed, false, &ctx).unwrap();
    assert_eq!(
        (plain.code, plain.reason),
        (AckCode::AE, Some(NackReason::UncorrelatableInbound))
    );
    let answered = build_batch_ack(batch, Disposition::Committed, false, &ctx).unwrap();
    assert_eq!(answered.code, AckCode::AA);
    let ids: Vec<_> = split_batch(&answered.payload)
        .into_iter()
        .map(|m| scan_ack(m).unwrap().control_id.to_vec())
        .collect();
    assert_eq!(ids, vec![b"M1".to_vec(), b"M2".to_vec()]);
}

#[test]
fn header_ack_fuzz_corpus_replays() {
    let dir = crate::support::repo_root().join("fuzz/corpus/header_ack");
    let mut replayed = 0;
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        let data = std::fs::read(&path).unwrap();
        mllp::fuzzing::header_and_ack(&data);
        replayed += 1;
    }
    assert!(replayed > 0, "no corpus under {}", dir.display());
}
