//! Writing acknowledgements: the swapped MSH under the inbound's own delimiters, MSA with the
//! inbound MSH-10 byte for byte, and MSA-3 plus ERR on a negative answer.

use super::policy::Decision;
use super::AckContext;
use crate::hl7::{Delimiters, Msh};

/// HL7 version written when the inbound gave none we can copy.
const FALLBACK_VERSION: &[u8] = b"2.5";
/// Processing ID (MSH-11) written when the inbound gave none: production.
const FALLBACK_PROCESSING_ID: &[u8] = b"P";

/// An answer can be written under these delimiters and read back: a letter or digit as a
/// delimiter would collide with segment names, `ACK` and the codes.
pub(crate) fn usable(delimiters: &Delimiters) -> bool {
    let [c, r, e, s] = delimiters.encoding_characters();
    [delimiters.field, c, r, e, s]
        .iter()
        .all(|b| !b.is_ascii_alphanumeric())
}

/// One HL7 segment being written.
pub(crate) struct SegmentWriter<'o> {
    out: &'o mut Vec<u8>,
    delimiters: Delimiters,
}

impl<'o> SegmentWriter<'o> {
    pub(crate) fn start(out: &'o mut Vec<u8>, name: &[u8], delimiters: Delimiters) -> Self {
        out.extend_from_slice(name);
        SegmentWriter { out, delimiters }
    }

    /// Bytes taken from the inbound's own fields: they hold no field separator and no CR/LF.
    pub(crate) fn raw(&mut self, bytes: &[u8]) -> &mut Self {
        self.out.push(self.delimiters.field);
        self.out.extend_from_slice(bytes);
        self
    }

    /// Our own text, escaped so no delimiter or terminator in it can split the segment.
    pub(crate) fn text(&mut self, text: &str) -> &mut Self {
        self.out.push(self.delimiters.field);
        escape_into(self.out, text.as_bytes(), &self.delimiters);
        self
    }

    /// Components of our own text; only the first when the component separator is unusable.
    pub(crate) fn components(&mut self, parts: &[&str]) -> &mut Self {
        let d = self.delimiters;
        let joinable = d.component != d.field && !d.component.is_ascii_alphanumeric();
        self.out.push(d.field);
        for (i, part) in parts.iter().enumerate() {
            if i > 0 {
                if !joinable {
                    break;
                }
                self.out.push(d.component);
            }
            escape_into(self.out, part.as_bytes(), &d);
        }
        self
    }

    pub(crate) fn empty(&mut self, count: usize) -> &mut Self {
        for _ in 0..count {
            self.out.push(self.delimiters.field);
        }
        self
    }

    pub(crate) fn end(&mut self) {
        self.out.push(b'\r');
    }
}

/// `text` as it is written under `delimiters` (for the checks of the tests and fuzz targets).
#[cfg(any(test, feature = "fuzzing"))]
pub(crate) fn escaped(text: &str, delimiters: &Delimiters) -> Vec<u8> {
    let mut out = Vec::with_capacity(text.len());
    escape_into(&mut out, text.as_bytes(), delimiters);
    out
}

/// Escape our own text under HL7 rules; where the escape character itself is unusable the
/// offending bytes become spaces. Letters and digits are never escaped: an inbound that declares
/// one as a delimiter gets its text as is.
fn escape_into(out: &mut Vec<u8>, text: &[u8], d: &Delimiters) {
    // Timestamps and our control IDs are letters and digits only: nothing to escape.
    if text.iter().all(u8::is_ascii_alphanumeric) {
        out.extend_from_slice(text);
        return;
    }
    escape_each(out, text, d);
}

/// Escaping byte by byte, with no shortcut for plain text.
fn escape_each(out: &mut Vec<u8>, text: &[u8], d: &Delimiters) {
    let can_escape = d.escape != d.field && !d.escape.is_ascii_alphanumeric();
    for &b in text {
        let code = match b {
            b'\r' | b'\n' => {
                out.push(b' ');
                continue;
            }
            _ if b.is_ascii_alphanumeric() => {
                out.push(b);
                continue;
            }
            _ if b == d.field => b'F',
            _ if b == d.component => b'S',
            _ if b == d.repetition => b'R',
            _ if b == d.escape => b'E',
            _ if b == d.subcomponent => b'T',
            _ => {
                out.push(b);
                continue;
            }
        };
        if can_escape {
            out.extend_from_slice(&[d.escape, code, d.escape]);
        } else {
            out.push(b' ');
        }
    }
}

/// Encoding characters an answer falls back on when the inbound's own and HL7's defaults collide.
const SPARE: &[u8] = b"#$*!%@;:/";

/// MSH-2 of an answer: up to five distinct characters.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct EncodingCharacters {
    bytes: [u8; 5],
    len: usize,
}

impl EncodingCharacters {
    /// HL7's defaults, `^~\\&`.
    pub(crate) const DEFAULT: EncodingCharacters = EncodingCharacters {
        bytes: *b"^~\\&\0",
        len: 4,
    };

    pub(crate) fn as_bytes(&self) -> &[u8] {
        &self.bytes[..self.len]
    }
}

/// The delimiters an answer to `msh` is written under, and the MSH-2 that declares them. The
/// inbound's own MSH-2 when it is valid (four or five distinct characters, none a letter, digit
/// or the field separator); else, position by position, the inbound's character or HL7's default
/// where that one is valid and not taken yet, and a spare character for what is left: MSH-2 is
/// never empty and never declares a delimiter twice.
pub(crate) fn answer_delimiters(msh: &Msh<'_>) -> (Delimiters, EncodingCharacters) {
    let field = msh.delimiters.field;
    let declared = msh.encoding_characters;
    let fits = |b: u8| b != field && !b.is_ascii_alphanumeric() && b != b'\r' && b != b'\n';
    let distinct = declared
        .iter()
        .enumerate()
        .all(|(i, b)| !declared[..i].contains(b));
    if (4..=5).contains(&declared.len()) && distinct && declared.iter().all(|&b| fits(b)) {
        let mut bytes = [0; 5];
        bytes[..declared.len()].copy_from_slice(declared);
        let chars = EncodingCharacters {
            bytes,
            len: declared.len(),
        };
        return (Delimiters::from_header(field, declared), chars);
    }
    let defaults = Delimiters::default().encoding_characters();
    let mut chosen = [0u8; 4];
    for (i, slot) in chosen.iter_mut().enumerate() {
        let candidates = [declared.get(i).copied(), Some(defaults[i])];
        if let Some(b) = candidates.into_iter().flatten().find(|&b| fits(b)) {
            *slot = b;
        }
    }
    // A character chosen twice keeps its first place only.
    for i in 0..4 {
        if chosen[..i].contains(&chosen[i]) {
            chosen[i] = 0;
        }
    }
    for i in 0..4 {
        if chosen[i] == 0 {
            let spare = SPARE
                .iter()
                .copied()
                .find(|b| fits(*b) && !chosen.contains(b));
            chosen[i] = spare.unwrap_or(b'#');
        }
    }
    let mut bytes = [0; 5];
    bytes[..4].copy_from_slice(&chosen);
    (
        Delimiters::from_header(field, &chosen),
        EncodingCharacters { bytes, len: 4 },
    )
}

/// `value`, or `fallback` when it is empty: a required field of an answer is never empty.
fn or<'a>(value: &'a [u8], fallback: &'a [u8]) -> &'a [u8] {
    if value.is_empty() {
        fallback
    } else {
        value
    }
}

/// Write the MSH of an answer to `msh` under `d` (from [`answer_delimiters`]): sender and
/// receiver swapped, MSH-11 (else `P`), MSH-12 (else `2.5`) and MSH-18 copied, trailing empty
/// fields left out.
pub(crate) fn answer_msh(
    out: &mut Vec<u8>,
    msh: &Msh<'_>,
    (d, encoding): (Delimiters, EncodingCharacters),
    trigger: Option<&[u8]>,
    ctx: &AckContext,
) {
    let field = |n| msh.field(n).unwrap_or_default();
    let mut w = SegmentWriter::start(out, b"MSH", d);
    w.out.push(d.field);
    w.out.extend_from_slice(encoding.as_bytes());
    w.raw(field(5)).raw(field(6)).raw(field(3)).raw(field(4));
    w.text(&timestamp(ctx)).empty(1);
    w.out.push(d.field);
    w.out.extend_from_slice(b"ACK");
    if let Some(trigger) = trigger.filter(|t| !t.is_empty()) {
        w.out.push(d.component);
        w.out.extend_from_slice(trigger);
    }
    w.text(&control_id(ctx));
    w.raw(or(field(11), FALLBACK_PROCESSING_ID));
    w.raw(or(field(12), FALLBACK_VERSION));
    let msh18 = field(18);
    if !msh18.is_empty() {
        w.empty(5).raw(msh18);
    }
    w.end();
}

/// MSH-7 of an answer: the context's, else now.
fn timestamp(ctx: &AckContext) -> std::borrow::Cow<'_, str> {
    if ctx.timestamp.is_empty() {
        super::hl7_timestamp(std::time::SystemTime::now()).into()
    } else {
        ctx.timestamp.as_str().into()
    }
}

/// MSH-10 of an answer: the context's, else a fresh one.
fn control_id(ctx: &AckContext) -> std::borrow::Cow<'_, str> {
    if ctx.control_id.is_empty() {
        super::next_control_id().into()
    } else {
        ctx.control_id.as_str().into()
    }
}

/// The whole acknowledgement message, appended to `out`.
pub(crate) fn ack_into(
    out: &mut Vec<u8>,
    msh: Option<&Msh<'_>>,
    decision: &Decision,
    ctx: &AckContext,
) {
    let (delimiters, control_id) = match msh {
        Some(msh) if !decision.headerless && usable(&msh.delimiters) => {
            let answer = answer_delimiters(msh);
            answer_msh(out, msh, answer, msh.component(9, 2), ctx);
            (answer.0, msh.control_id().unwrap_or_default())
        }
        // Only MSH-2 is unusable: nothing is copied but MSH-10, under the inbound's field
        // separator, so MSA-2 still names the message.
        Some(msh) if !msh.delimiters.field.is_ascii_alphanumeric() => {
            let answer = answer_delimiters(msh);
            minimal_msh(out, answer, ctx);
            (answer.0, msh.control_id().unwrap_or_default())
        }
        // No MSH, or a field separator that is a letter or digit: no field to echo.
        _ => {
            let defaults = (Delimiters::default(), EncodingCharacters::DEFAULT);
            minimal_msh(out, defaults, ctx);
            (defaults.0, &[][..])
        }
    };
    let mut msa = SegmentWriter::start(out, b"MSA", delimiters);
    msa.raw(decision.code.as_str().as_bytes()).raw(control_id);
    let words = ctx.text.as_deref().filter(|_| ctx.worded);
    if let Some(cause) = decision.negative {
        msa.text(ctx.text.as_deref().unwrap_or(cause.text())).end();
        let (code, name) = cause.error();
        let mut err = SegmentWriter::start(out, b"ERR", delimiters);
        err.empty(2).components(&[code, name, "HL70357"]).raw(b"E");
        if let Some(words) = words {
            // ERR-8, the user message.
            err.empty(3).text(words);
        }
        err.end();
    } else if let Some(words) = words {
        msa.text(words).end();
    } else {
        msa.end();
    }
}

/// The MSH of an answer to a payload without a usable MSH: nothing copied from the inbound.
fn minimal_msh(
    out: &mut Vec<u8>,
    (d, encoding): (Delimiters, EncodingCharacters),
    ctx: &AckContext,
) {
    let mut w = SegmentWriter::start(out, b"MSH", d);
    w.raw(encoding.as_bytes())
        .empty(4)
        .text(&timestamp(ctx))
        .empty(1)
        .raw(b"ACK");
    w.text(&control_id(ctx))
        .raw(FALLBACK_PROCESSING_ID)
        .raw(FALLBACK_VERSION)
        .end();
}

#[cfg(test)]
mod tests;
