//! One message's pass: the output written up to each replaced value, the patient whose dates
//! move, and the message's character set once a name needs it.

use super::derive::Deriver;
use super::replace::date_offset;
use crate::hl7::charset::Charset;
use crate::hl7::{escape, segments, Delimiters, Message, Segment, Value};
use std::borrow::Cow;

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
        *self
            .charset
            .get_or_insert_with(|| match ends_before_msh18(message) {
                true => Charset::UTF_8,
                false => {
                    Charset::for_message(&Message::new(message), None).unwrap_or(Charset::UTF_8)
                }
            })
    }

    /// The date offset of the patient of the segments now read.
    pub(super) fn days(&mut self, deriver: &Deriver) -> i64 {
        if let Some(days) = self.days {
            return days;
        }
        let message = self.message;
        let patient = self.patient.or_else(|| {
            Message::new(message)
                .segments()
                .find(|s| s.name() == b"PID")
        });
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
        // Every byte looked up, no early exit: values are short, and a branch a byte costs more.
        let escaped = text
            .iter()
            .fold(false, |e, &b| e | self.escapes[usize::from(b)]);
        match escaped {
            false => self.out.extend_from_slice(text),
            true => escape::encode(text, delimiters, self.out),
        }
        self.copied = start + raw.len();
        differ(&self.out[from..], raw)
    }

    /// The rest of the message, after the last value replaced.
    pub(super) fn finish(self) {
        self.out.extend_from_slice(&self.message[self.copied..]);
    }
}

/// Whether two values differ: compared in words where `memcmp`'s call would cost more than
/// the comparison (values are short).
#[inline]
pub(super) fn differ(a: &[u8], b: &[u8]) -> bool {
    if a.len() != b.len() {
        return true;
    }
    let word = |w: Option<&[u8; 8]>| u64::from_le_bytes(*w.unwrap_or(&[0; 8]));
    match a.len() {
        // The first and last eight bytes, overlapping in the middle.
        8..=16 => {
            word(a.first_chunk()) != word(b.first_chunk())
                || word(a.last_chunk()) != word(b.last_chunk())
        }
        17.. => a != b,
        _ => a.iter().zip(b).any(|(x, y)| x != y),
    }
}

/// Whether the message's first segment is an MSH that ends before MSH-18 (fewer than 16 field
/// separators after MSH-1): it names no character set, which [`Charset::for_message`] reads as
/// UTF-8, found here without its search for the field.
fn ends_before_msh18(message: &[u8]) -> bool {
    match segments(message).next() {
        Some((_, [b'M', b'S', b'H', field, rest @ ..])) => {
            rest.iter().filter(|&b| b == field).count() < 16
        }
        _ => false,
    }
}

/// Who a PID names, for the date offset: the PID-3 repetition typed MR (CX-5, the medical
/// record number) when there is one, else the first repetition; its ID (CX-1), decoded.
/// Engines disagree on the order of the other identifiers, never on the record number.
fn patient_id(pid: Option<Segment<'_>>) -> Cow<'_, [u8]> {
    let Some(ids) = pid.and_then(|pid| pid.field(3)) else {
        return Cow::Borrowed(&[]);
    };
    let typed = |r: &Value<'_>| {
        r.component(5)
            .is_some_and(|t| t.decoded().eq_ignore_ascii_case(b"MR"))
    };
    let chosen = ids.repetitions().find(typed).or(ids.repetitions().next());
    chosen
        .and_then(|r| r.component(1))
        .map(|id| id.decoded())
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        /// As `!=`, whatever the lengths (short, a word or two, longer).
        #[test]
        fn values_differ_as_slices_do(
            a in prop::collection::vec(0u8..3, 0..40),
            b in prop::collection::vec(0u8..3, 0..40),
        ) {
            prop_assert_eq!(differ(&a, &b), a != b);
            prop_assert!(!differ(&a, &a.clone()));
        }
    }

    #[test]
    fn a_header_short_of_msh18_names_no_charset() {
        for fields in 2..22 {
            let mut msh = b"MSH|^~\\&".to_vec();
            for n in 3..=fields {
                msh.extend_from_slice(if n == 18 { b"|8859/1" } else { b"|x" });
            }
            let message = [&msh[..], b"\rPID|1\r"].concat();
            let named = Charset::for_message(&Message::new(&message), None);
            assert_eq!(ends_before_msh18(&message), fields < 18, "{fields}");
            assert_eq!(named == Ok(Charset::UTF_8), fields < 18, "{fields}");
        }
        assert!(!ends_before_msh18(b"PID|1\rMSH|^~\\&\r"));
    }
}
