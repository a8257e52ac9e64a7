//! Byte-level conformance of `mllp listen` (framing tolerances, ACK bytes, answers): raw byte
//! sequences in over a plain TCP socket, the exact bytes of every ACK frame out, and the framing
//! events.

use crate::support::listen_proc::ListenProc;
use crate::support::peer_wire::{frame, Deframer, CR, FS, VT};
use serde_json::Value;
use std::net::SocketAddr;
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

const WAIT: Duration = Duration::from_secs(10);

/// A raw connection that checks every byte the server writes is a canonical ACK frame.
struct Raw {
    stream: TcpStream,
    deframer: Deframer,
}

impl Raw {
    async fn connect(addr: SocketAddr) -> Raw {
        let stream = TcpStream::connect(addr).await.unwrap();
        stream.set_nodelay(true).unwrap();
        Raw {
            stream,
            deframer: Deframer::canonical(),
        }
    }

    async fn write(&mut self, bytes: &[u8]) {
        self.stream.write_all(bytes).await.unwrap();
        self.stream.flush().await.unwrap();
    }

    /// The payloads of the next `count` frames; each must be `VT payload FS CR`, back to back,
    /// with no framing byte inside.
    async fn frames(&mut self, count: usize) -> Vec<Vec<u8>> {
        let mut out = Vec::new();
        while out.len() < count {
            let next = tokio::time::timeout(WAIT, self.deframer.read_frame(&mut self.stream));
            match next.await.expect("no ACK within the wait") {
                Some(payload) => out.push(payload),
                None => panic!("closed after {} of {count} ACK frames", out.len()),
            }
        }
        out
    }

    /// Everything until the server closes; the connection must close within the wait.
    async fn until_closed(&mut self) -> Vec<u8> {
        let mut rest = self.deframer.take_rest();
        let read = self.stream.read_to_end(&mut rest);
        let _ = tokio::time::timeout(WAIT, read)
            .await
            .expect("the server did not close the connection");
        rest
    }
}

/// An ADT^A01 from S/F to R/RF with MSH-10 `id` and the rest of the segment `tail`.
fn msg_with(id: &[u8], tail: &[u8]) -> Vec<u8> {
    let mut m = b"MSH|^~\\&|S|F|R|RF|20240101120000||ADT^A01|".to_vec();
    m.extend_from_slice(id);
    m.extend_from_slice(tail);
    m
}

fn msg(id: &[u8]) -> Vec<u8> {
    let tail = format!(
        "|P|2.5\rPID|1||42||{}\r",
        crate::support::no_payload::MARKER
    );
    msg_with(id, tail.as_bytes())
}

/// Checks `ack` is exactly the positive ACK for [`msg`]-shaped input with MSH-10 `id`, field
/// separator `sep`: only MSH-7 (a timestamp) and MSH-10 (fresh) are the server's to choose.
fn assert_exact_ack(ack: &[u8], sep: u8, code: &str, id: &[u8], tail: &[u8]) {
    let fields: Vec<&[u8]> = ack.split(|&b| b == sep || b == CR).collect();
    assert!(
        fields.len() > 10,
        "short ACK {:?}",
        String::from_utf8_lossy(ack)
    );
    let (stamp, fresh_id) = (fields[6], fields[9]);
    assert!(
        stamp.len() >= 14 && stamp.iter().all(u8::is_ascii_digit),
        "MSH-7 {stamp:?}"
    );
    assert!(
        !fresh_id.is_empty() && fresh_id != id,
        "MSH-10 {fresh_id:?}"
    );
    let s = sep as char;
    let mut want = format!("MSH{s}^~\\&{s}R{s}RF{s}S{s}F{s}").into_bytes();
    want.extend_from_slice(stamp);
    want.extend_from_slice(format!("{s}{s}ACK^A01{s}").as_bytes());
    want.extend_from_slice(fresh_id);
    want.extend_from_slice(tail);
    want.extend_from_slice(format!("\rMSA{s}{code}{s}").as_bytes());
    want.extend_from_slice(id);
    want.push(CR);
    assert_eq!(
        String::from_utf8_lossy(ack),
        String::from_utf8_lossy(&want),
        "ACK bytes"
    );
    assert_eq!(ack, &want[..]);
}

fn positive(ack: &[u8], id: &[u8]) {
    assert_exact_ack(ack, b'|', "AA", id, b"|P|2.5");
}

/// The MSA fields of a negative ACK, and that an ERR segment with a Table 0357 code follows.
fn negative(ack: &[u8], code: &str, id: &[u8]) {
    let segs: Vec<&[u8]> = ack.split(|&b| b == CR).collect();
    assert!(segs[0].starts_with(b"MSH|^~\\&|"), "{segs:?}");
    let msa: Vec<&[u8]> = segs[1].split(|&b| b == b'|').collect();
    assert_eq!(msa[0], b"MSA");
    assert_eq!(msa[1], code.as_bytes());
    assert_eq!(msa[2], id);
    assert!(!msa[3].is_empty(), "a negative ACK says why in MSA-3");
    assert!(
        segs[2].starts_with(b"ERR|") && segs[2].windows(7).any(|w| w == b"HL70357"),
        "{:?}",
        String::from_utf8_lossy(segs[2])
    );
    assert_eq!(segs.last().unwrap(), b"", "ends with CR");
}

fn warning(code: &'static str) -> impl Fn(&Value) -> bool {
    move |v| v["event"] == "warning" && v["code"] == code
}

#[tokio::test]
async fn positive_acks_are_canonical_and_echo_odd_control_ids() {
    let listen = ListenProc::start(&["--format", "raw"]);
    let ids: [&[u8]; 8] = [
        b"1",
        b"A\\F\\B\\S\\C",
        b"caf\xe9",
        "été-\u{1F600}".as_bytes(),
        b" lead and trail ",
        b"A^B&C~D",
        &[b'x'; 199],
        b"00000000000000000000",
    ];
    let mut raw = Raw::connect(listen.addr).await;
    for id in ids {
        raw.write(&frame(&msg(id))).await;
        positive(&raw.frames(1).await[0], id);
    }
    // MSH-10 last in the segment, ended by CR or by the frame itself: the ACK still carries
    // MSH-11 and MSH-12.
    for tail in [&b""[..], b"\r"] {
        raw.write(&frame(&msg_with(b"LAST", tail))).await;
        assert_exact_ack(&raw.frames(1).await[0], b'|', "AA", b"LAST", b"|P|2.5");
    }
    // The inbound's own delimiters: `#` as field separator, `|` inside MSH-10.
    let odd = b"MSH#^~\\&#S#F#R#RF#20240101120000##ADT^A01#|x|#P#2.5\rPID#1\r";
    raw.write(&frame(odd)).await;
    assert_exact_ack(&raw.frames(1).await[0], b'#', "AA", b"|x|", b"#P#2.5");
}

#[tokio::test]
async fn tolerated_deviations_are_acked_and_warned_at_their_offset() {
    let listen = ListenProc::start(&[]);
    let m1 = msg(b"FS1");
    // FS without CR: complete at the FS (ACKed before any further byte), warned when the next
    // byte shows the CR is missing; offset of the FS.
    let mut raw = Raw::connect(listen.addr).await;
    raw.write(&[&[VT][..], &m1, &[FS]].concat()).await;
    positive(&raw.frames(1).await[0], b"FS1");
    raw.write(&frame(&msg(b"FS2"))).await;
    positive(&raw.frames(1).await[0], b"FS2");
    let w = listen.wait_event(warning("MLLP_FS_WITHOUT_CR"));
    assert_eq!(w["byte_offset"], 1 + m1.len());

    // LF after FS.
    let mut raw = Raw::connect(listen.addr).await;
    raw.write(&[&[VT][..], &m1, &[FS, b'\n']].concat()).await;
    positive(&raw.frames(1).await[0], b"FS1");
    let w = listen.wait_event(warning("MLLP_LF_AFTER_FS"));
    assert_eq!(w["byte_offset"], 2 + m1.len());

    // Whitespace before VT (SP, HT, CR, LF), and CR LF between frames.
    let mut raw = Raw::connect(listen.addr).await;
    let bytes = [b" \t\r\n", &frame(&m1)[..], b"\n", &frame(&msg(b"WS2"))].concat();
    raw.write(&bytes).await;
    let acks = raw.frames(2).await;
    positive(&acks[0], b"FS1");
    positive(&acks[1], b"WS2");
    assert_eq!(
        listen.wait_event(warning("MLLP_LEADING_WHITESPACE"))["byte_offset"],
        0
    );
    assert_eq!(
        listen.wait_event(warning("MLLP_LEADING_WHITESPACE"))["byte_offset"],
        4 + m1.len() + 3
    );
}

#[tokio::test]
async fn a_missing_vt_closes_the_connection_as_framing_fatal() {
    let listen = ListenProc::start(&[]);
    let mut raw = Raw::connect(listen.addr).await;
    raw.write(&[&msg(b"NOVT")[..], &[FS, CR]].concat()).await;
    assert_eq!(
        raw.until_closed().await,
        b"",
        "no ACK for an unframed message"
    );
    let closed = listen.wait_event(|v| v["event"] == "connection_closed");
    assert_eq!(closed["cause"], "framing-fatal", "{closed}");
    assert_eq!(closed["code"], "MLLP_MISSING_LEADING_VT", "{closed}");
    // Only that connection: the next one is served.
    let mut raw = Raw::connect(listen.addr).await;
    raw.write(&frame(&msg(b"NEXT"))).await;
    positive(&raw.frames(1).await[0], b"NEXT");
}

#[tokio::test]
async fn damaged_and_empty_frames_get_negative_acks() {
    let listen = ListenProc::start(&["--format", "raw"]);
    // VT mid-payload: the partial payload is discarded, the remnant answered AE (never AA).
    let mut raw = Raw::connect(listen.addr).await;
    let head = &msg(b"LOST")[..20];
    let remnant = msg(b"KEPT");
    raw.write(&[&[VT][..], head, &frame(&remnant)].concat())
        .await;
    negative(&raw.frames(1).await[0], "AE", b"KEPT");
    let w = listen.wait_event(warning("MLLP_TRAILING_BYTES"));
    assert_eq!(w["byte_offset"], 1 + head.len());
    let nack = listen.wait_event(|v| v["event"] == "nack");
    assert_eq!(nack["reason"], "discarded-bytes", "{nack}");
    let committed = listen.wait_event(|v| v["event"] == "message");
    assert_eq!(
        committed["bytes"],
        remnant.len(),
        "the remnant is what is kept"
    );

    // An empty payload: AE with an empty MSA-2, and the connection stays usable.
    raw.write(&[VT, FS, CR]).await;
    negative(&raw.frames(1).await[0], "AE", b"");
    assert_eq!(
        listen.wait_event(warning("MLLP_EMPTY_PAYLOAD"))["byte_offset"],
        1 + head.len() + 1 + remnant.len() + 2 + 1
    );
    let nack = listen.wait_event(|v| v["event"] == "nack");
    assert_eq!(nack["reason"], "uncorrelatable-inbound", "{nack}");
    raw.write(&frame(&msg(b"AFTER"))).await;
    positive(&raw.frames(1).await[0], b"AFTER");
}

#[tokio::test]
async fn chunking_never_changes_the_answer() {
    let listen = ListenProc::start(&["--format", "raw"]);
    // Two frames in one write.
    let mut raw = Raw::connect(listen.addr).await;
    raw.write(&[frame(&msg(b"TWO1")), frame(&msg(b"TWO2"))].concat())
        .await;
    let acks = raw.frames(2).await;
    positive(&acks[0], b"TWO1");
    positive(&acks[1], b"TWO2");
    // Twenty frames in one write: twenty ACKs in order.
    let ids: Vec<Vec<u8>> = (0..20).map(|i| format!("P{i}").into_bytes()).collect();
    let burst: Vec<u8> = ids.iter().flat_map(|id| frame(&msg(id))).collect();
    raw.write(&burst).await;
    for (ack, id) in raw.frames(20).await.iter().zip(&ids) {
        positive(ack, id);
    }
    // One frame over many writes, one byte each.
    for byte in frame(&msg(b"BYTEWISE")) {
        raw.write(&[byte]).await;
    }
    positive(&raw.frames(1).await[0], b"BYTEWISE");
}

#[tokio::test]
async fn an_inbound_ack_is_never_answered() {
    let listen = ListenProc::start(&["--format", "raw"]);
    let mut raw = Raw::connect(listen.addr).await;
    let ack = b"MSH|^~\\&|R|RF|S|F|20240101120000||ACK^A01|X9|P|2.5\rMSA|AA|Z1\r";
    // The ACK first, then a message: the first frame back must answer the message.
    raw.write(&[frame(ack), frame(&msg(b"AFTERACK"))].concat())
        .await;
    positive(&raw.frames(1).await[0], b"AFTERACK");
    let first = listen.wait_event(|v| v["event"] == "message");
    assert_eq!(first["ack_code"], Value::Null, "{first}");
}

#[tokio::test]
async fn strict_mode_makes_every_deviation_fatal_without_an_ack() {
    let listen = ListenProc::start(&["--strict"]);
    let cases: [(&[u8], &str); 3] = [
        (&[VT, b'M', b'S', b'H', FS, VT], "MLLP_FS_WITHOUT_CR"),
        (&[VT, b'M', b'S', b'H', FS, b'\n'], "MLLP_LF_AFTER_FS"),
        (&[b' ', VT], "MLLP_LEADING_WHITESPACE"),
    ];
    for (bytes, code) in cases {
        let mut raw = Raw::connect(listen.addr).await;
        raw.write(bytes).await;
        assert_eq!(raw.until_closed().await, b"", "{code}: no ACK");
        let closed = listen.wait_event(|v| v["event"] == "connection_closed");
        assert_eq!(closed["cause"], "framing-fatal", "{closed}");
        assert_eq!(closed["code"], code, "{closed}");
    }
}

#[tokio::test]
async fn an_oversize_frame_is_answered_ar_and_its_connection_goes_on() {
    let listen = ListenProc::start(&["--max-frame-size", "64"]);
    let mut raw = Raw::connect(listen.addr).await;
    let big = msg(&[b'9'; 80]);
    raw.write(&frame(&big)).await;
    raw.write(&frame(b"MSH|^~\\&|S|F|R|RF|1||ADT^A01|OK|P|2.5\r"))
        .await;
    let acks = raw.frames(2).await;
    let refused = String::from_utf8_lossy(&acks[0]).into_owned();
    assert!(refused.contains("\rMSA|AR|"), "{refused}");
    assert!(refused.contains("too large"), "{refused}");
    assert!(refused.contains("\rERR|"), "{refused}");
    assert_exact_ack(&acks[1], b'|', "AA", b"OK", b"|P|2.5");
}
