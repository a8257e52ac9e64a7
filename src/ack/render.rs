//! Writing acknowledgements: the swapped MSH under the inbound's own delimiters, MSA with the
//! inbound MSH-10 byte for byte, and MSA-3 plus ERR on a negative answer.

use super::policy::Decision;
use super::AckContext;
use crate::hl7::{Delimiters, Msh};

/// HL7 version written when the inbound gave none we can copy.
const FALLBACK_VERSION: &[u8] = b"2.5";

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

/// `text` as it is written under `delimiters`.
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

/// The MSH-2 to write: the inbound's own when it declares all four characters, else the
/// characters in effect, cut before any default that would collide with the field separator (a
/// reader falls back to the same default for what is left out).
pub(crate) fn encoding_characters<'a>(msh: &Msh<'a>, effective: &'a [u8; 4]) -> &'a [u8] {
    if msh.encoding_characters.len() >= 4 {
        return msh.encoding_characters;
    }
    let field = msh.delimiters.field;
    let end = effective.iter().position(|&b| b == field).unwrap_or(4);
    &effective[..end]
}

/// Write the MSH of an answer to `msh`: sender and receiver swapped, MSH-11, MSH-12 and MSH-18
/// copied, trailing empty fields left out.
pub(crate) fn answer_msh(
    out: &mut Vec<u8>,
    msh: &Msh<'_>,
    trigger: Option<&[u8]>,
    ctx: &AckContext,
) {
    let d = msh.delimiters;
    let effective = d.encoding_characters();
    let field = |n| msh.field(n).unwrap_or_default();
    let mut w = SegmentWriter::start(out, b"MSH", d);
    w.out.push(d.field);
    w.out
        .extend_from_slice(encoding_characters(msh, &effective));
    w.raw(field(5)).raw(field(6)).raw(field(3)).raw(field(4));
    w.text(&ctx.timestamp).empty(1);
    w.out.push(d.field);
    w.out.extend_from_slice(b"ACK");
    if let Some(trigger) = trigger.filter(|t| !t.is_empty()) {
        if d.component != d.field && !d.component.is_ascii_alphanumeric() {
            w.out.push(d.component);
            w.out.extend_from_slice(trigger);
        }
    }
    w.text(&ctx.control_id);
    let tail: [&[u8]; 8] = [field(11), field(12), &[], &[], &[], &[], &[], field(18)];
    let used = tail
        .iter()
        .rposition(|f| !f.is_empty())
        .map_or(0, |i| i + 1);
    for f in &tail[..used] {
        w.raw(f);
    }
    w.end();
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
            answer_msh(out, msh, msh.component(9, 2), ctx);
            (msh.delimiters, msh.control_id().unwrap_or_default())
        }
        _ => {
            minimal_msh(out, ctx);
            (Delimiters::default(), &[][..])
        }
    };
    let mut msa = SegmentWriter::start(out, b"MSA", delimiters);
    msa.raw(decision.code.as_str().as_bytes()).raw(control_id);
    if let Some(cause) = decision.negative {
        msa.text(ctx.text.as_deref().unwrap_or(cause.text())).end();
        let (code, name) = cause.error();
        SegmentWriter::start(out, b"ERR", delimiters)
            .empty(2)
            .components(&[code, name, "HL70357"])
            .raw(b"E")
            .end();
    } else {
        msa.end();
    }
}

/// The MSH of an answer to a payload without a usable MSH: default delimiters, nothing copied.
fn minimal_msh(out: &mut Vec<u8>, ctx: &AckContext) {
    let mut w = SegmentWriter::start(out, b"MSH", Delimiters::default());
    w.raw(b"^~\\&")
        .empty(4)
        .text(&ctx.timestamp)
        .empty(1)
        .raw(b"ACK");
    w.text(&ctx.control_id).empty(1).raw(FALLBACK_VERSION).end();
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ack::{AckCode, Disposition};
    use proptest::prelude::*;

    /// The escape without its plain-text shortcut, which must never change the output.
    fn reference_escape(text: &[u8], d: &Delimiters) -> Vec<u8> {
        let mut out = Vec::new();
        escape_each(&mut out, text, d);
        out
    }

    /// HL7-looking payloads: header, batch and other segments with fields from a small
    /// alphabet (delimiters, letters, digits, the MSH-15/16 codes), CR or LF between them.
    fn payload() -> impl Strategy<Value = Vec<u8>> {
        let name = prop_oneof![
            4 => Just(&b"MSH"[..]),
            2 => Just(&b"PID"[..]),
            1 => Just(&b"BHS"[..]),
            1 => Just(&b"EVN"[..]),
        ];
        let field = prop_oneof![
            Just(b"AL".to_vec()),
            Just(b"SU".to_vec()),
            Just(b"ACK^A01".to_vec()),
            Just(b"^~\\&".to_vec()),
            proptest::collection::vec(proptest::sample::select(b"|^~\\&#AB1 ".to_vec()), 0..6),
        ];
        let segment = (name, proptest::collection::vec(field, 0..20), any::<bool>()).prop_map(
            |(name, fields, lf)| {
                let mut out = name.to_vec();
                for f in fields {
                    out.push(b'|');
                    out.extend(f);
                }
                out.push(if lf { b'\n' } else { b'\r' });
                out
            },
        );
        proptest::collection::vec(segment, 0..4).prop_map(|s| s.concat())
    }

    proptest! {
        /// The server's path (its own scan, a reused and dirty buffer) writes exactly what
        /// `build_ack` and `build_application_ack` write.
        #[test]
        fn the_scanned_path_writes_the_same_bytes(
            inbound in payload(),
            disposition in prop_oneof![
                Just(Disposition::Committed),
                Just(Disposition::CommitFailed),
                Just(Disposition::Rejected),
            ],
            damaged in any::<bool>(),
            forced in proptest::option::of(proptest::sample::select(vec![
                AckCode::AA, AckCode::AE, AckCode::CA, AckCode::CR,
            ])),
        ) {
            let ctx = AckContext {
                control_id: "1700000000000042".into(),
                timestamp: "20240101120000".into(),
                text: None,
                forced,
            };
            let scan = crate::hl7::scan(&inbound);
            let dirty = b"left over from the last ACK".to_vec();
            prop_assert_eq!(
                super::super::answer(&scan, disposition, damaged, &ctx, dirty.clone()),
                super::super::build_ack(&inbound, disposition, damaged, &ctx)
            );
            prop_assert_eq!(
                super::super::application_answer(&scan, disposition, damaged, &ctx, dirty),
                super::super::build_application_ack(&inbound, disposition, damaged, &ctx)
            );
        }

        #[test]
        fn escaping_matches_the_byte_by_byte_rules(
            text in "[A-Za-z0-9|^~\\\\&# \r\n-]{0,24}",
            field in any::<u8>(),
            encoding in proptest::collection::vec(any::<u8>(), 0..5),
        ) {
            let d = Delimiters::from_header(field, &encoding);
            prop_assert_eq!(escaped(&text, &d), reference_escape(text.as_bytes(), &d));
        }
    }
}
