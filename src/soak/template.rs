//! Message templates: the first message of a file (or the built-in synthetic ADT^A01), with
//! MSH-7 and MSH-10 located once so each message is rendered with a fresh timestamp and a unique
//! control ID, in place, under the template's own delimiters.

use crate::hl7::{self, Msh};
use bytes::{BufMut, BytesMut};
use std::ops::Range;

/// The built-in message: synthetic patient, processing ID `T` (training).
pub(crate) const BUILTIN: &str = "MSH|^~\\&|MLLP-SOAK|SOAK|RECEIVER|RECEIVER|20000101000000||ADT^A01^ADT_A01|SOAK0000000000000001|T|2.5\r\
EVN|A01|20000101000000\r\
PID|1||SOAK000001^^^SOAK^MR||SYNTHETIC^PATIENT^^^^^L||19700101|U\r\
PV1|1|I|SOAK^001^01\r";

/// Why a file cannot serve as a template. Names what is missing, never content.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum TemplateError {
    /// No segment starts with `MSH`.
    #[error("no MSH segment found")]
    NoMsh,
    /// The MSH segment ends before MSH-n, n given (7 or 10): no place for the timestamp or
    /// the control ID.
    #[error("the MSH segment has no MSH-{0} field")]
    MissingField(usize),
    /// The message holds VT or FS (the byte given), which cannot be framed.
    #[error("the message contains a framing byte (0x{0:02X})")]
    FramingByte(u8),
}

/// One message with its MSH-7 and MSH-10 byte ranges.
#[derive(Debug, Clone)]
pub struct Template {
    bytes: Vec<u8>,
    msh7: Range<usize>,
    msh10: Range<usize>,
    name: String,
    builtin: bool,
}

impl Template {
    /// The built-in synthetic ADT^A01.
    pub fn builtin() -> Template {
        let template = Template::parse(BUILTIN.as_bytes()).expect("the built-in template is valid");
        Template {
            builtin: true,
            ..template.named("built-in ADT^A01")
        }
    }

    /// The same template under `name` (its file, say), as the report's `config` lists it.
    pub fn named(mut self, name: impl Into<String>) -> Template {
        self.name = name.into();
        self
    }

    /// Whether this is the built-in synthetic message.
    pub(crate) fn is_builtin(&self) -> bool {
        self.builtin
    }

    /// What the report calls this template: `template` unless [`Template::named`].
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The first message of `input`: an already framed message is unwrapped, CRLF and LF become
    /// CR, and anything from a second MSH segment on is ignored.
    pub fn parse(input: &[u8]) -> Result<Template, TemplateError> {
        let input = unframe(input);
        let mut text = Vec::with_capacity(input.len() + 1);
        let mut i = 0;
        while i < input.len() {
            match input[i] {
                b'\r' if input.get(i + 1) == Some(&b'\n') => {
                    text.push(b'\r');
                    i += 1;
                }
                b'\n' => text.push(b'\r'),
                b => text.push(b),
            }
            i += 1;
        }
        if let Some(&b) = text.iter().find(|&&b| b == 0x0B || b == 0x1C) {
            return Err(TemplateError::FramingByte(b));
        }
        let mut start = None;
        let mut end = text.len();
        for (at, segment) in hl7::segments(&text) {
            if segment.starts_with(b"MSH") {
                match start {
                    None => start = Some(at),
                    Some(_) => {
                        end = at;
                        break;
                    }
                }
            }
        }
        let start = start.ok_or(TemplateError::NoMsh)?;
        let mut bytes = text[start..end].to_vec();
        if bytes.last() != Some(&b'\r') {
            bytes.push(b'\r');
        }
        let seg_len = memchr::memchr(b'\r', &bytes).unwrap_or(bytes.len());
        let segment = &bytes[..seg_len];
        let msh = Msh::parse(segment).ok_or(TemplateError::NoMsh)?;
        let range = |n: usize| -> Result<Range<usize>, TemplateError> {
            let field = msh.field(n).ok_or(TemplateError::MissingField(n))?;
            let at = field.as_ptr() as usize - segment.as_ptr() as usize;
            Ok(at..at + field.len())
        };
        let msh7 = range(7)?;
        let msh10 = range(10)?;
        Ok(Template {
            bytes,
            msh7,
            msh10,
            name: "template".into(),
            builtin: false,
        })
    }

    /// Length of a rendering with fields of these lengths.
    pub(crate) fn rendered_len(&self, timestamp: usize, control_id: usize) -> usize {
        self.bytes.len() - self.msh7.len() - self.msh10.len() + timestamp + control_id
    }

    /// Append the message with `timestamp` as MSH-7 and `control_id` as MSH-10.
    pub fn render(&self, timestamp: &[u8], control_id: &[u8], out: &mut BytesMut) {
        out.reserve(self.rendered_len(timestamp.len(), control_id.len()));
        out.put_slice(&self.bytes[..self.msh7.start]);
        out.put_slice(timestamp);
        out.put_slice(&self.bytes[self.msh7.end..self.msh10.start]);
        out.put_slice(control_id);
        out.put_slice(&self.bytes[self.msh10.end..]);
    }
}

fn unframe(input: &[u8]) -> &[u8] {
    let trimmed = input.strip_prefix(&[0x0B]).unwrap_or(input);
    if trimmed.len() == input.len() {
        return input;
    }
    let end = memchr::memchr(0x1C, trimmed).unwrap_or(trimmed.len());
    &trimmed[..end]
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fields(message: &[u8]) -> (Vec<u8>, Vec<u8>) {
        let scan = hl7::scan(message);
        let msh = scan.msh.unwrap();
        (
            msh.date_time().unwrap().to_vec(),
            msh.control_id().unwrap().to_vec(),
        )
    }

    #[test]
    fn builtin_renders_fresh_fields_and_processing_id_t() {
        let t = Template::builtin();
        let mut out = BytesMut::new();
        t.render(b"20250102030405", b"ABC123", &mut out);
        let (ts, id) = fields(&out);
        assert_eq!(ts, b"20250102030405");
        assert_eq!(id, b"ABC123");
        let msh = hl7::scan(&out).msh.unwrap();
        assert_eq!(msh.field(11), Some(&b"T"[..]));
        assert_eq!(out.len(), t.rendered_len(14, 6));
    }

    #[test]
    fn own_delimiters_line_endings_and_second_message() {
        let input = b"MSH#*~\\&#A#B#C#D#2020##ADT*A01#OLD#P#2.5\r\nPID#1\nMSH#*~\\&#X\r\n";
        let t = Template::parse(input).unwrap();
        let mut out = BytesMut::new();
        t.render(b"20250101", b"NEW", &mut out);
        assert_eq!(
            &out[..],
            b"MSH#*~\\&#A#B#C#D#20250101##ADT*A01#NEW#P#2.5\rPID#1\r"
        );
    }

    #[test]
    fn framed_input_is_unwrapped() {
        let t = Template::parse(b"\x0bMSH|^~\\&|||||1||ADT^A01|X|T|2.5\r\x1c\r").unwrap();
        let mut out = BytesMut::new();
        t.render(b"2", b"Y", &mut out);
        assert_eq!(&out[..], b"MSH|^~\\&|||||2||ADT^A01|Y|T|2.5\r");
    }

    #[test]
    fn problems_are_named() {
        assert_eq!(
            Template::parse(b"PID|1\r").unwrap_err(),
            TemplateError::NoMsh
        );
        assert_eq!(
            Template::parse(b"MSH|^~\\&|A|B|C|D|2020||ADT\r").unwrap_err(),
            TemplateError::MissingField(10)
        );
        assert_eq!(
            Template::parse(b"MSH|^~\\&|A\x1c|B|C|D|2020||ADT|1|T\r").unwrap_err(),
            TemplateError::FramingByte(0x1C)
        );
    }
}
