//! HL7 v2 header scanning without a full parser: MSH fields a transport needs, MSA of an ACK,
//! batch and concatenation detection. Works on any bytes and never panics.

/// The delimiters an HL7 message declares in MSH-1 and MSH-2.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Delimiters {
    pub field: u8,
    pub component: u8,
    pub repetition: u8,
    pub escape: u8,
    pub subcomponent: u8,
}

impl Default for Delimiters {
    fn default() -> Self {
        Delimiters {
            field: b'|',
            component: b'^',
            repetition: b'~',
            escape: b'\\',
            subcomponent: b'&',
        }
    }
}

/// The MSH segment of a payload, its fields as byte slices. Field `n` is HL7's MSH-n
/// (MSH-1 is the field separator itself, MSH-2 the encoding characters).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Msh<'a> {
    pub delimiters: Delimiters,
    /// MSH-2 exactly as written.
    pub encoding_characters: &'a [u8],
    /// The MSH segment, without its terminator.
    pub segment: &'a [u8],
}

impl<'a> Msh<'a> {
    /// MSH-n as written; `None` when the segment is too short. Never reads past the segment.
    pub fn field(&self, n: usize) -> Option<&'a [u8]> {
        let _ = n;
        todo!("hl7::Msh::field")
    }
    pub fn control_id(&self) -> Option<&'a [u8]> {
        self.field(10)
    }
    pub fn message_type(&self) -> Option<&'a [u8]> {
        self.field(9)
    }
    pub fn date_time(&self) -> Option<&'a [u8]> {
        self.field(7)
    }
    pub fn accept_ack_type(&self) -> Option<&'a [u8]> {
        self.field(15)
    }
    pub fn application_ack_type(&self) -> Option<&'a [u8]> {
        self.field(16)
    }
    /// MSH-9's first component is `ACK`.
    pub fn is_ack(&self) -> bool {
        todo!("hl7::Msh::is_ack")
    }
    /// MSH-15 or MSH-16 present and not empty.
    pub fn is_enhanced(&self) -> bool {
        todo!("hl7::Msh::is_enhanced")
    }
}

/// How a payload is shaped.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Shape {
    /// One message.
    Single,
    /// FHS or BHS envelope.
    Batch,
    /// More than one MSH without a batch envelope.
    Concatenated,
    /// No MSH segment found.
    NoMsh,
}

/// The scan of one payload.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Scan<'a> {
    pub msh: Option<Msh<'a>>,
    pub shape: Shape,
}

/// Find the first segment starting `MSH` (segments end in CR or LF) and classify the payload.
pub fn scan(payload: &[u8]) -> Scan<'_> {
    let _ = payload;
    todo!("hl7::scan")
}

/// What an ACK says: MSA-1, MSA-2, MSA-3 under the ACK's own field separator, and ERR-3's code if present.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AckView<'a> {
    pub code: &'a [u8],
    pub control_id: &'a [u8],
    pub text: Option<&'a [u8]>,
    pub error_code: Option<&'a [u8]>,
}

/// Read MSA of an acknowledgement payload; `None` when there is no MSH or no MSA.
pub fn scan_ack(payload: &[u8]) -> Option<AckView<'_>> {
    let _ = payload;
    todo!("hl7::scan_ack")
}
