//! The test suite's own minimal MLLP and HL7: the one frame builder and the one frame reader
//! all the tests and their support code use, MSH-10 scanning, ACK building. Independent of the
//! library's codec on purpose, so the tests do not share its bugs.

use tokio::io::{AsyncRead, AsyncReadExt};

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

/// Collects bytes and yields complete frames' payloads. Lenient by default, as a peer reads what
/// a client wrote: bytes before a VT are skipped. [`Deframer::canonical`] checks what a server
/// wrote instead: every frame exactly `VT payload FS CR`, back to back, no VT inside, or the test
/// fails naming the bytes.
#[derive(Default)]
pub struct Deframer {
    buf: Vec<u8>,
    /// Canonical frames, each followed by these bytes (none, or a newline where a tool prints one
    /// frame per line).
    canonical: Option<&'static [u8]>,
}

impl Deframer {
    pub fn canonical() -> Deframer {
        Deframer {
            buf: Vec::new(),
            canonical: Some(b""),
        }
    }

    /// Canonical frames, each followed by a newline (python-hl7's `mllp_send` prints the ACKs it
    /// reads so).
    pub fn canonical_lines() -> Deframer {
        Deframer {
            buf: Vec::new(),
            canonical: Some(b"\n"),
        }
    }

    pub fn push(&mut self, bytes: &[u8]) {
        self.buf.extend_from_slice(bytes);
    }

    pub fn next_frame(&mut self) -> Option<Vec<u8>> {
        match self.canonical {
            None => self.next_lenient(),
            Some(gap) => self.next_canonical(gap),
        }
    }

    fn next_lenient(&mut self) -> Option<Vec<u8>> {
        let start = self.buf.iter().position(|&b| b == VT)?;
        let end = self.buf[start..].windows(2).position(|w| w == [FS, CR])? + start;
        let payload = self.buf[start + 1..end].to_vec();
        self.buf.drain(..end + 2);
        Some(payload)
    }

    fn next_canonical(&mut self, gap: &[u8]) -> Option<Vec<u8>> {
        let first = *self.buf.first()?;
        let shown = || String::from_utf8_lossy(&self.buf).into_owned();
        assert_eq!(first, VT, "a frame must start with VT: {:?}", shown());
        let fs = self.buf.iter().position(|&b| b == FS)?;
        let end = fs + 2 + gap.len();
        if self.buf.len() < end {
            return None;
        }
        let trailer = [&[CR][..], gap].concat();
        assert_eq!(
            self.buf[fs + 1..end],
            trailer,
            "FS must be followed by {trailer:?}: {:?}",
            shown()
        );
        let payload = self.buf[1..fs].to_vec();
        assert!(!payload.contains(&VT), "VT inside a frame: {:?}", shown());
        self.buf.drain(..end);
        Some(payload)
    }

    /// The next frame from `stream`, reading as needed; `None` once the stream ends (or fails)
    /// first.
    pub async fn read_frame<R: AsyncRead + Unpin>(&mut self, stream: &mut R) -> Option<Vec<u8>> {
        let mut chunk = [0u8; 4096];
        loop {
            if let Some(payload) = self.next_frame() {
                return Some(payload);
            }
            match stream.read(&mut chunk).await {
                Ok(0) | Err(_) => return None,
                Ok(n) => self.push(&chunk[..n]),
            }
        }
    }

    /// The bytes not yet part of a complete frame, taken out.
    pub fn take_rest(&mut self) -> Vec<u8> {
        std::mem::take(&mut self.buf)
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

#[test]
fn canonical_frames_are_read_and_their_deviations_named() {
    let mut d = Deframer::canonical_lines();
    let mut wire = frame(b"A");
    wire.push(b'\n');
    wire.extend(frame(b"B"));
    d.push(&wire);
    assert_eq!(d.next_frame().unwrap(), b"A");
    assert!(d.next_frame().is_none(), "B's newline has not come yet");
    d.push(b"\n");
    assert_eq!(d.next_frame().unwrap(), b"B");
    assert!(d.take_rest().is_empty());
    for (bad, problem) in [
        (&b"xA\x1c\r"[..], "start with VT"),
        (b"\x0bA\x1c\n", "followed by"),
        (b"\x0bA\x0bB\x1c\r", "VT inside"),
    ] {
        let panic = std::panic::catch_unwind(|| {
            let mut d = Deframer::canonical();
            d.push(bad);
            d.next_frame()
        })
        .unwrap_err();
        let message = panic.downcast_ref::<String>().unwrap();
        assert!(message.contains(problem), "{message}");
    }
}
