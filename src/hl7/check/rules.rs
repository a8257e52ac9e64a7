//! The rules every message is held to: MSH first with usable delimiters, segment IDs, the
//! header's required fields, the types of the common segments' fields, OBX-5 under OBX-2 `NM`,
//! control bytes, and text in a character set that is known.

use super::syntax::{is_date, is_number, is_sequence_id, is_timestamp};
use super::{field_at, finding, Code, Finding, Severity};
use crate::hl7::fields::{field_def, FieldType};
use crate::hl7::{Charset, Message, Path, Segment, Value};
use std::collections::HashMap;

/// The versions MSH-12 may name.
const VERSIONS: &[&[u8]] = &[
    b"2.1", b"2.2", b"2.3", b"2.3.1", b"2.4", b"2.5", b"2.5.1", b"2.6", b"2.7", b"2.7.1", b"2.8",
    b"2.8.1", b"2.8.2", b"2.9", b"2.9.1",
];

const TIMESTAMP: &str = "not an HL7 timestamp (YYYY[MM[DD[HH[MM[SS[.S[S[S[S]]]]]]]]][+/-ZZZZ])";

/// Check one message into `findings`; false when it has no header to read further by.
pub(super) fn check(payload: &[u8], findings: &mut Vec<Finding>) -> bool {
    control_bytes(payload, findings);
    let message = Message::new(payload);
    let Some(header) = message
        .segments()
        .next()
        .filter(|s| s.name() == b"MSH" && s.is_header())
    else {
        findings.push(finding(
            Code::MshNotFirst,
            Severity::Error,
            "segment 1",
            "the message does not start with an MSH segment",
            None,
        ));
        return false;
    };
    delimiters(&header, findings);
    segment_ids(&message, findings);
    let get = |p: &str| message.get(&path(p));
    let version = get("MSH-12.1").raw();
    header_fields(&message, version, findings);
    typed_fields(&message, version, findings);
    observations(&message, findings);
    match Charset::for_message(&message, None) {
        Ok(charset) => undecodable(&message, charset, findings),
        Err(_) => findings.push(finding(
            Code::CharsetUnknown,
            Severity::Warning,
            "MSH-18",
            "MSH-18 names a character set this check does not know",
            Some(get("MSH-18").raw()),
        )),
    }
    true
}

fn path(text: &str) -> Path {
    text.parse()
        .unwrap_or_else(|e| unreachable!("a built-in path: {e}"))
}

/// MSH-1 one separator, MSH-2 four encoding characters (five with a truncation character),
/// all distinct, none a letter, digit, space or line end.
fn delimiters(header: &Segment<'_>, findings: &mut Vec<Finding>) {
    let separator = header.bytes()[3];
    let encoding = header.field(2).map(|v| v.raw()).unwrap_or_default();
    let usable = |b: u8| b.is_ascii_graphic() && !b.is_ascii_alphanumeric();
    let mut all = vec![separator];
    all.extend_from_slice(encoding);
    let mut seen = all.clone();
    seen.sort_unstable();
    seen.dedup();
    let ok = matches!(encoding.len(), 4 | 5)
        && all.iter().all(|&b| usable(b))
        && seen.len() == all.len();
    if !ok {
        findings.push(finding(
            Code::DelimitersInvalid,
            Severity::Error,
            "MSH-2",
            "MSH-1 and MSH-2 must be five distinct delimiters (six with a truncation character), \
             none a letter, digit, space or line end",
            Some(header.bytes().get(..4 + encoding.len()).unwrap_or_default()),
        ));
    }
}

fn segment_ids(message: &Message<'_>, findings: &mut Vec<Finding>) {
    for (i, segment) in message.segments().enumerate() {
        let name = segment.name();
        if !is_segment_id(name) {
            findings.push(finding(
                Code::SegmentIdInvalid,
                Severity::Error,
                format!("segment {}", i + 1),
                "a segment ID is three upper-case letters or digits",
                Some(name),
            ));
        }
    }
}

/// MSH-7, MSH-9, MSH-10, MSH-11 and MSH-12.
fn header_fields(message: &Message<'_>, version: &[u8], findings: &mut Vec<Finding>) {
    let get = |p: &str| message.get(&path(p));
    let missing = |findings: &mut Vec<Finding>, at: &str, what: &str| {
        findings.push(finding(
            Code::RequiredFieldMissing,
            Severity::Error,
            at,
            format!("{what} is required"),
            None,
        ));
    };
    let time = get("MSH-7.1");
    if time.is_empty() {
        missing(
            findings,
            "MSH-7",
            "MSH-7, the date and time of the message,",
        );
    } else if !is_timestamp(time.raw()) {
        findings.push(finding(
            Code::TimestampInvalid,
            Severity::Error,
            "MSH-7",
            TIMESTAMP,
            Some(time.raw()),
        ));
    }
    let (code, trigger) = (get("MSH-9.1"), get("MSH-9.2"));
    if get("MSH-9").is_empty() {
        missing(findings, "MSH-9", "MSH-9, the message type,");
    } else if code.is_empty() || trigger.is_empty() {
        // An ACK without a trigger is the habit of older versions: worth knowing only.
        let severity = match code.raw() {
            b"ACK" => Severity::Warning,
            _ => Severity::Error,
        };
        findings.push(finding(
            Code::MessageTypeInvalid,
            severity,
            "MSH-9",
            "MSH-9 has a message code and a trigger event (ADT^A01)",
            Some(get("MSH-9").raw()),
        ));
    }
    if get("MSH-10").is_empty() {
        missing(findings, "MSH-10", "MSH-10, the message control ID,");
    }
    let (processing, mode) = (get("MSH-11.1"), get("MSH-11.2"));
    if get("MSH-11").is_empty() {
        missing(findings, "MSH-11", "MSH-11, the processing ID,");
    } else if !matches!(processing.raw(), b"P" | b"D" | b"T")
        || !matches!(mode.raw(), b"" | b"A" | b"I" | b"R" | b"T")
    {
        findings.push(finding(
            Code::ProcessingIdInvalid,
            Severity::Error,
            "MSH-11",
            "MSH-11 is P, D or T, with an optional mode A, I, R or T",
            Some(get("MSH-11").raw()),
        ));
    }
    if version.is_empty() {
        missing(findings, "MSH-12", "MSH-12, the version ID,");
    } else if !VERSIONS.contains(&version) {
        findings.push(finding(
            Code::VersionUnknown,
            Severity::Error,
            "MSH-12",
            "MSH-12 names an HL7 v2 version (2.1 to 2.9.1)",
            Some(version),
        ));
    }
}

/// The TS, DT, SI and NM fields of the segments the field table names, each repetition.
fn typed_fields(message: &Message<'_>, version: &[u8], findings: &mut Vec<Finding>) {
    let mut seen: HashMap<&[u8], usize> = HashMap::new();
    for segment in message.segments() {
        let name = segment.name();
        let occurrence = seen.entry(name).or_default();
        *occurrence += 1;
        for (n, field) in segment.fields() {
            let Some(def) = field_def(name, n, version) else {
                continue;
            };
            if def.kind == FieldType::Other || (name == b"MSH" && n == 7) {
                continue;
            }
            for (r, repetition) in field.repetitions().enumerate() {
                // Only a timestamp's first component is the time (the second, in older
                // versions, its precision).
                let value = match def.kind {
                    FieldType::Timestamp => repetition.component(1).unwrap_or(repetition),
                    _ => repetition,
                };
                let at = || field_at(name, *occurrence, n, r + 1);
                if let Some(f) = typed(def.kind, value, at) {
                    findings.push(f);
                }
            }
        }
    }
}

/// The finding for a value of a type that does not hold, if it does not; empty values and the
/// HL7 null (`""`) hold.
fn typed(kind: FieldType, value: Value<'_>, at: impl Fn() -> String) -> Option<Finding> {
    let raw = value.raw();
    if raw.is_empty() || raw == b"\"\"" {
        return None;
    }
    let (ok, code, what) = match kind {
        FieldType::Timestamp => (is_timestamp(raw), Code::TimestampInvalid, TIMESTAMP),
        FieldType::Date => (
            is_date(raw),
            Code::DateInvalid,
            "not an HL7 date (YYYY[MM[DD]])",
        ),
        FieldType::SequenceId => (
            is_sequence_id(raw),
            Code::SetIdInvalid,
            "a set ID is a whole number",
        ),
        FieldType::Number => (
            is_number(raw),
            Code::NumberInvalid,
            "not a number (an optional sign, digits, an optional decimal point)",
        ),
        FieldType::Other => return None,
    };
    (!ok).then(|| finding(code, Severity::Error, at(), what, Some(raw)))
}

/// OBX-5 where OBX-2 says `NM`: every repetition a number.
fn observations(message: &Message<'_>, findings: &mut Vec<Finding>) {
    for (i, obx) in message
        .segments()
        .filter(|s| s.name() == b"OBX")
        .enumerate()
    {
        let kind = obx.field(2).map(|v| v.raw()).unwrap_or_default();
        if kind != b"NM" {
            continue;
        }
        let Some(value) = obx.field(5) else {
            continue;
        };
        for (r, repetition) in value.repetitions().enumerate() {
            let at = || field_at(b"OBX", i + 1, 5, r + 1);
            if let Some(f) = typed(FieldType::Number, repetition, at) {
                findings.push(f);
            }
        }
    }
}

/// A control byte (below space, or DEL) other than a line end: one finding for each segment
/// that holds one, at the field it is in.
fn control_bytes(payload: &[u8], findings: &mut Vec<Finding>) {
    let message = Message::new(payload);
    // Each segment's occurrence counted on the way, so a message of many segments is read once.
    let mut seen: HashMap<&[u8], usize> = HashMap::new();
    for (i, segment) in message.segments().enumerate() {
        let name = segment.name();
        let occurrence = seen.entry(name).or_default();
        *occurrence += 1;
        let bytes = segment.bytes();
        let Some(at) = bytes.iter().position(|&b| b < 0x20 || b == 0x7f) else {
            continue;
        };
        let field = segment
            .fields()
            .find(|(_, v)| {
                let start = v.raw().as_ptr() as usize - bytes.as_ptr() as usize;
                (start..=start + v.raw().len()).contains(&at)
            })
            .map(|(n, _)| n);
        let place = match field {
            Some(n) if is_segment_id(name) => field_at(name, *occurrence, n, 1),
            _ => format!("segment {}", i + 1),
        };
        findings.push(finding(
            Code::ControlByte,
            Severity::Error,
            place,
            format!("a control byte 0x{:02X}: only CR ends a segment", bytes[at]),
            None,
        ));
    }
}

/// Three upper-case letters or digits.
fn is_segment_id(name: &[u8]) -> bool {
    name.len() == 3
        && name
            .iter()
            .all(|b| b.is_ascii_uppercase() || b.is_ascii_digit())
}

/// Each field that holds bytes `charset` cannot decode: a warning at the field, without them.
fn undecodable(message: &Message<'_>, charset: Charset, findings: &mut Vec<Finding>) {
    let mut seen: HashMap<&[u8], usize> = HashMap::new();
    for (i, segment) in message.segments().enumerate() {
        let name = segment.name();
        let occurrence = seen.entry(name).or_default();
        *occurrence += 1;
        if charset.decode(segment.bytes()).undecodable() == 0 {
            continue;
        }
        for (n, field) in segment.fields() {
            if charset.decode(field.raw()).undecodable() == 0 {
                continue;
            }
            let place = match is_segment_id(name) {
                true => field_at(name, *occurrence, n, 1),
                false => format!("segment {}", i + 1),
            };
            findings.push(finding(
                Code::TextNotInCharset,
                Severity::Warning,
                place,
                format!(
                    "bytes that are not text in {} (MSH-18's character set, UTF-8 when empty)",
                    charset.name()
                ),
                None,
            ));
        }
    }
}
