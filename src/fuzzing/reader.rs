//! HL7 reader target: any bytes in, read as `show`, `check` and `--where` read them, and the
//! reader's promises checked: every part is a piece of the message as written, the parts of a
//! value put back together are the value, decoding never adds bytes, a path gives what walking
//! the parts by hand gives, and a check finding's value is the message's own bytes.

use crate::hl7::check::Checker;
use crate::hl7::{Charset, Filter, Message, Occurrence, Path, Value};

/// Paths tried on every input, beside the one the input may carry.
const PATHS: &[&str] = &[
    "MSH-1",
    "MSH-2",
    "MSH-9.2",
    "MSH-10",
    "MSH-18",
    "PID-3(2).1",
    "PID-5.1.2",
    "OBX(*)-5",
    "PID-3(*).1",
    "NTE(2)-3",
];

/// Read `data` as a message. Bytes before a first NUL, when there is one, are a path or a
/// filter (`PID-3.1=X`) to try as well; the rest is the message.
pub fn read_message(data: &[u8]) {
    let (text, payload) = match memchr::memchr(0, data) {
        Some(at) => (String::from_utf8_lossy(&data[..at]), &data[at + 1..]),
        None => (Default::default(), data),
    };
    let message = Message::new(payload);
    for segment in message.segments() {
        let bytes = segment.bytes();
        assert_eq!(&payload[segment.offset()..][..bytes.len()], bytes);
        assert!(memchr::memchr2(b'\r', b'\n', bytes).is_none());
        for (_, field) in segment.fields() {
            within(field.raw(), bytes);
            parts(field);
        }
    }
    let charset = Charset::for_message(&message, None).unwrap_or(Charset::UTF_8);
    for text in PATHS.iter().copied().chain([text.as_ref()]) {
        if let Ok(path) = text.parse::<Path>() {
            by_hand(&message, &path);
            for value in message.values(&path) {
                within(value.raw(), payload);
                let _ = value.text(charset).as_str();
            }
        }
        if let Ok(filter) = text.parse::<Filter>() {
            let _ = filter.matches(&message, charset);
        }
    }
    for finding in Checker::default().check(payload) {
        if let Some(value) = &finding.value {
            assert!(
                memchr::memmem::find(payload, value).is_some(),
                "a finding's value is the message's own bytes"
            );
        }
    }
    let decoded = charset.decode(payload);
    if charset == Charset::UTF_8 && std::str::from_utf8(payload).is_ok() {
        assert_eq!(decoded.undecodable(), 0);
    }
}

/// `part` is a piece of `whole`.
fn within(part: &[u8], whole: &[u8]) {
    let (start, end) = (
        whole.as_ptr() as usize,
        whole.as_ptr() as usize + whole.len(),
    );
    let at = part.as_ptr() as usize;
    assert!(part.is_empty() || (start <= at && at + part.len() <= end));
}

/// The repetitions of a field, the components of each and their subcomponents, each joined by
/// its separator again, are what they were split from; decoding never makes a value longer.
fn parts(field: Value<'_>) {
    let d = field.delimiters();
    let joined = |values: Vec<Value<'_>>, sep: u8| -> Vec<u8> {
        values
            .iter()
            .map(|v| v.raw())
            .collect::<Vec<_>>()
            .join(&[sep][..])
    };
    let repetitions: Vec<_> = field.repetitions().collect();
    assert_eq!(joined(repetitions.clone(), d.repetition), field.raw());
    for repetition in repetitions {
        let components: Vec<_> = repetition.components().collect();
        assert_eq!(joined(components.clone(), d.component), repetition.raw());
        for component in components {
            let subs: Vec<_> = component.subcomponents().collect();
            assert_eq!(joined(subs, d.subcomponent), component.raw());
            assert!(component.decoded().len() <= component.raw().len());
        }
    }
}

/// The first value `path` gives is the one walked to part by part.
fn by_hand(message: &Message<'_>, path: &Path) {
    let nth = |o: Occurrence| match o {
        Occurrence::Nth(n) => n,
        Occurrence::Every => 1,
    };
    let segment = match path.occurrence() {
        Occurrence::Nth(n) => message.segment(path.segment(), n),
        Occurrence::Every => message.segment(path.segment(), 1),
    };
    let walked = segment
        .and_then(|s| s.field(path.field()))
        .and_then(|f| match path.repetition() {
            // MSH-1 and MSH-2 are not split.
            _ if path.segment() == b"MSH" && path.field() <= 2 => Some(f),
            r => f.repetition(nth(r)),
        })
        .and_then(|v| match path.component() {
            Some(c) => v.component(c),
            None => Some(v),
        })
        .and_then(|v| match path.subcomponent() {
            Some(s) => v.subcomponent(s),
            None => Some(v),
        })
        .map_or(&b""[..], |v| v.raw());
    assert_eq!(message.get(path).raw(), walked, "{path:?}");
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    fn hl7ish() -> impl Strategy<Value = Vec<u8>> {
        let byte = prop::sample::select(
            b"MSHPIDOBXNTE|^~\\&#*!\r\n\0 0123ABX.brFSTRE\xc3\xff\x01".to_vec(),
        );
        prop::collection::vec(byte, 0..160)
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 2048, ..ProptestConfig::default() })]

        #[test]
        fn the_readers_promises_hold_on_hl7_like_bytes(tail in hl7ish(), path in 0usize..4) {
            let header = b"MSH|^~\\&|A|B|C|D|2024||ADT^A01|1|P|2.5\r";
            let prefix: &[u8] = [&b""[..], b"PID-3(*).2.1\0", b"OBX(2)-5~^1\0", b"MSH-2.1\0"][path];
            let mut data = prefix.to_vec();
            data.extend_from_slice(header);
            data.extend_from_slice(&tail);
            super::read_message(&data);
            super::read_message(&tail);
        }
    }
}
