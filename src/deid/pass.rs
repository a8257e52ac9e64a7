//! One message's pass: the output written up to each replaced value, the patient whose dates
//! move, and the message's character set once a name needs it.

use super::derive::Deriver;
use super::replace::date_offset;
use crate::hl7::charset::Charset;
use crate::hl7::{escape, Delimiters, Message, Segment, Value};

/// One message's pass: what is copied so far, and the patient's date offset once needed.
pub(super) struct Pass<'a, 'o> {
    pub(super) message: &'a [u8],
    pub(super) out: &'o mut Vec<u8>,
    /// Bytes of the message written to `out` so far.
    pub(super) copied: usize,
    pub(super) days: Option<i64>,
    /// The PID of the segments now read; before the first, the message's first PID.
    pub(super) patient: Option<Segment<'a>>,
    /// MSH-18's, read when a name first needs it: names are compared as text, whatever bytes
    /// carry them.
    pub(super) charset: Option<Charset>,
    /// The bytes a replacement cannot carry as they are under the delimiters of the segments
    /// now read (the delimiters, the truncation character, CR and LF): one load a byte.
    escapes: [bool; 256],
}

impl<'a, 'o> Pass<'a, 'o> {
    pub(super) fn new(message: &'a [u8], out: &'o mut Vec<u8>) -> Pass<'a, 'o> {
        Pass {
            message,
            out,
            copied: 0,
            days: None,
            patient: None,
            charset: None,
            escapes: [false; 256],
        }
    }

    /// Replacements from now on are written under `d`.
    pub(super) fn delimit(&mut self, d: &Delimiters) {
        self.escapes = [false; 256];
        let escaped = [d.field, b'\r', b'\n']
            .into_iter()
            .chain(d.encoding_characters());
        for b in escaped.chain(d.truncation) {
            self.escapes[usize::from(b)] = true;
        }
    }

    /// The message's character set, as MSH-18 names it (UTF-8 when it names none it knows).
    pub(super) fn charset(&mut self) -> Charset {
        let message = self.message;
        *self.charset.get_or_insert_with(|| {
            Charset::for_message(&Message::new(message), None).unwrap_or(Charset::UTF_8)
        })
    }

    /// The date offset of the patient of the segments now read.
    pub(super) fn days(&mut self, deriver: &Deriver) -> i64 {
        if let Some(days) = self.days {
            return days;
        }
        let message = Message::new(self.message);
        let patient = self
            .patient
            .or_else(|| message.segments().find(|s| s.name() == b"PID"));
        *self.days.insert(date_offset(deriver, &patient_id(patient)))
    }

    /// Write `text` (escapes decoded) where `raw` (a value of the message) lies, escaped under
    /// `delimiters` (those of the last [`Pass::delimit`]); whether that changed the bytes.
    #[inline]
    pub(super) fn put(&mut self, raw: &'a [u8], text: &[u8], delimiters: &Delimiters) -> bool {
        let start = raw.as_ptr() as usize - self.message.as_ptr() as usize;
        self.out
            .extend_from_slice(&self.message[self.copied..start]);
        let from = self.out.len();
        match text.iter().any(|&b| self.escapes[usize::from(b)]) {
            false => self.out.extend_from_slice(text),
            true => escape::encode(text, delimiters, self.out),
        }
        self.copied = start + raw.len();
        self.out[from..] != *raw
    }

    /// The rest of the message, after the last value replaced.
    pub(super) fn finish(self) {
        self.out.extend_from_slice(&self.message[self.copied..]);
    }
}

/// Who a PID names, for the date offset: the PID-3 repetition typed MR (CX-5, the medical
/// record number) when there is one, else the first repetition; its ID (CX-1), decoded.
/// Engines disagree on the order of the other identifiers, never on the record number.
fn patient_id(pid: Option<Segment<'_>>) -> Vec<u8> {
    let Some(ids) = pid.and_then(|pid| pid.field(3)) else {
        return Vec::new();
    };
    let typed = |r: &Value<'_>| {
        r.component(5)
            .is_some_and(|t| t.decoded().eq_ignore_ascii_case(b"MR"))
    };
    let chosen = ids.repetitions().find(typed).or(ids.repetitions().next());
    chosen
        .and_then(|r| r.component(1))
        .map(|id| id.decoded().into_owned())
        .unwrap_or_default()
}
