//! The scripted peer's own minimal MLLP and HL7: framing, MSH-10 scanning, ACK building.
//! Independent of the library's codec on purpose, so the peer does not share its bugs.

pub const VT: u8 = 0x0b;
pub const FS: u8 = 0x1c;
pub const CR: u8 = 0x0d;

/// Wraps a payload in an MLLP frame.
pub fn frame(payload: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(payload.len() + 3);
    out.push(VT);
    out.extend_from_slice(payload);
    out.extend_from_slice(&[FS, CR]);
    out
}

/// Collects bytes and yields complete frames' payloads (VT .. FS CR); bytes before a VT are
/// skipped.
#[derive(Default)]
pub struct Deframer {
    buf: Vec<u8>,
}

impl Deframer {
    pub fn push(&mut self, bytes: &[u8]) {
        self.buf.extend_from_slice(bytes);
    }

    pub fn next_frame(&mut self) -> Option<Vec<u8>> {
        let start = self.buf.iter().position(|&b| b == VT)?;
        let end = self.buf[start..].windows(2).position(|w| w == [FS, CR])? + start;
        let payload = self.buf[start + 1..end].to_vec();
        self.buf.drain(..end + 2);
        Some(payload)
    }
}

/// MSH-10 of a payload: the first segment split on its own field separator.
pub fn control_id(payload: &[u8]) -> Option<String> {
    let msh = payload.split(|&b| b == CR || b == b'\n').next()?;
    if !msh.starts_with(b"MSH") || msh.len() < 4 {
        return None;
    }
    let sep = msh[3];
    let field = msh.split(|&b| b == sep).nth(9)?;
    Some(String::from_utf8_lossy(field).into_owned())
}

/// A valid ACK answering `payload` with `code`; MSA-2 carries the message's MSH-10.
pub fn ack(payload: &[u8], code: &str) -> Vec<u8> {
    let id = control_id(payload).unwrap_or_default();
    format!("MSH|^~\\&|PEER|TEST|MLLP|TEST|20240101000000||ACK|ACK{id}|P|2.5\rMSA|{code}|{id}\r")
        .into_bytes()
}

/// A small ADT message with control ID `id` and `marker` inside a patient name, for tests.
pub fn message(id: &str, marker: &str) -> Vec<u8> {
    format!(
        "MSH|^~\\&|MLLP|TEST|PEER|TEST|20240101000000||ADT^A01|{id}|P|2.5\r\
         PID|1||12345||{marker}^PATIENT\r"
    )
    .into_bytes()
}

#[test]
fn deframes_and_acks_with_msa2_from_msh10() {
    let mut d = Deframer::default();
    let msg = message("CTRL42", "X");
    let mut wire = frame(&msg);
    wire.extend_from_slice(&frame(&message("CTRL43", "Y")));
    d.push(&wire[..5]);
    assert!(d.next_frame().is_none());
    d.push(&wire[5..]);
    let first = d.next_frame().unwrap();
    assert_eq!(first, msg);
    assert_eq!(
        control_id(&d.next_frame().unwrap()).as_deref(),
        Some("CTRL43")
    );
    let ack = String::from_utf8(ack(&first, "AE")).unwrap();
    assert!(ack.ends_with("MSA|AE|CTRL42\r"), "{ack}");
}
