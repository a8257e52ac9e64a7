//! The messages' control IDs (MSH-10) before anything is sent: an empty one is found at the
//! check (no ACK could name the message), fresh unique ones are given when the run asks, and
//! IDs shared by several messages are counted for the dry run.

use super::header::control_id_of_segment;
use super::message::Message;
use crate::hl7::{segments, Msh};
use bytes::{Bytes, BytesMut};
use std::collections::HashMap;
use std::sync::Arc;

/// How a run treats the messages' MSH-10.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ControlIds {
    /// As the input has them; a message whose MSH-10 is empty is refused at the check.
    #[default]
    AsGiven,
    /// Every MSH segment gets a fresh MSH-10: `run` in base 36, then the segment's place in
    /// the run (1-based, at least 6 digits). Runs started at different milliseconds never
    /// share one, so a receiver that de-duplicates on MSH-10 keeps every message of a rerun.
    Fresh {
        /// What tells this run's IDs from other runs': milliseconds since the Unix epoch
        /// for [`ControlIds::fresh_now`].
        run: u64,
    },
}

impl ControlIds {
    /// Fresh IDs stamped with the current time.
    pub fn fresh_now() -> ControlIds {
        let run = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_millis() as u64);
        ControlIds::Fresh { run }
    }
}

/// Whether some MSH segment of `payload` has an empty or absent MSH-10.
pub fn lacks_control_id(payload: &[u8]) -> bool {
    // Each header's MSH-10 read in one pass, without the header's whole field index.
    segments(payload)
        .filter(|(_, s)| s.starts_with(b"MSH"))
        .any(|(_, s)| header_lacks_control_id(s))
}

/// Whether the header `segment` (no CR or LF in it) has an empty or absent MSH-10.
pub(crate) fn header_lacks_control_id(segment: &[u8]) -> bool {
    control_id_of_segment(segment).is_none_or(<[u8]>::is_empty)
}

fn headers(payload: &[u8]) -> impl Iterator<Item = (usize, Msh<'_>)> {
    segments(payload)
        .filter(|(_, s)| s.starts_with(b"MSH"))
        .filter_map(|(at, s)| Some((at, Msh::parse(s)?)))
}

/// Gives messages fresh control IDs, in the order they are read.
#[derive(Debug)]
pub(crate) struct Renamer {
    run: String,
    next: u64,
}

impl Renamer {
    pub(crate) fn new(run: u64) -> Renamer {
        Renamer {
            run: base36(run),
            next: 0,
        }
    }

    /// `message` with every MSH-10 replaced; the first one it had is kept beside it.
    pub(crate) fn rename(&mut self, mut message: Message) -> Message {
        let payload = &message.payload;
        let original = headers(payload)
            .next()
            .and_then(|(_, msh)| msh.control_id())
            .map(|id| Arc::from(String::from_utf8_lossy(id).as_ref()));
        let mut out = BytesMut::with_capacity(payload.len() + 32);
        let mut copied = 0;
        for (at, msh) in headers(payload) {
            self.next += 1;
            let id = format!("{}{:06}", self.run, self.next);
            let segment = &payload[at..at + msh_len(payload, at)];
            let (start, end, pad) = field_span(segment, &msh);
            out.extend_from_slice(&payload[copied..at + start]);
            out.extend(std::iter::repeat_n(msh.delimiters.field, pad));
            out.extend_from_slice(id.as_bytes());
            copied = at + end;
        }
        out.extend_from_slice(&payload[copied..]);
        message.payload = Bytes::from(out);
        message.original_control_id = Some(original.unwrap_or_else(|| Arc::from("")));
        message
    }
}

fn msh_len(payload: &[u8], at: usize) -> usize {
    memchr::memchr2(b'\r', b'\n', &payload[at..]).unwrap_or(payload.len() - at)
}

/// Where MSH-10 lies in `segment` (start, end), and how many field separators must come before
/// it when the segment stops short of it.
fn field_span(segment: &[u8], msh: &Msh<'_>) -> (usize, usize, usize) {
    let offset = |field: &[u8]| field.as_ptr() as usize - segment.as_ptr() as usize;
    if let Some(field) = msh.field(10) {
        let start = offset(field);
        return (start, start + field.len(), 0);
    }
    // The last field it has ends the segment; MSH-1 is the separator itself.
    let have = (2..10).rev().find(|&n| msh.field(n).is_some()).unwrap_or(1);
    (segment.len(), segment.len(), 10 - have)
}

fn base36(mut n: u64) -> String {
    const DIGITS: &[u8; 36] = b"0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ";
    let mut out = Vec::new();
    loop {
        out.push(DIGITS[(n % 36) as usize]);
        n /= 36;
        if n == 0 {
            break;
        }
    }
    out.reverse();
    String::from_utf8(out).unwrap_or_default()
}

/// A control ID more than one message of the input has.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SharedControlId {
    /// The MSH-10 value they share (not validated as UTF-8: invalid bytes are replaced).
    pub control_id: String,
    /// How many messages have it.
    pub messages: u64,
    /// The first few of them (`file#n`), in input order.
    pub first: Vec<String>,
}

/// How many of the messages sharing an ID are named.
pub(crate) const NAMED: usize = 3;

/// The MSH-10 of the first MSH segment, which shared IDs are counted by; `None` when it is
/// empty or absent.
pub(crate) fn counted_control_id(payload: &[u8]) -> Option<&[u8]> {
    headers(payload)
        .next()
        .and_then(|(_, msh)| msh.control_id())
        .filter(|id| !id.is_empty())
}

/// Counts the control IDs of the messages it is shown, in input order.
#[derive(Debug, Default)]
pub struct ControlIdCount {
    seen: HashMap<Bytes, usize>,
    ids: Vec<SharedControlId>,
}

impl ControlIdCount {
    /// Count the MSH-10 of `message`'s first MSH segment; an empty or absent one is not counted.
    pub fn observe(&mut self, message: &Message) {
        let Some(id) = counted_control_id(&message.payload) else {
            return;
        };
        // A copy: a slice would keep the whole message alive for the rest of the run.
        let key = Bytes::copy_from_slice(id);
        let slot = *self.seen.entry(key).or_insert_with(|| {
            self.ids.push(SharedControlId {
                control_id: String::from_utf8_lossy(id).into_owned(),
                messages: 0,
                first: Vec::new(),
            });
            self.ids.len() - 1
        });
        let entry = &mut self.ids[slot];
        entry.messages += 1;
        if entry.first.len() < NAMED {
            entry.first.push(message.label());
        }
    }

    /// The IDs more than one message had, in the order they first came.
    pub fn shared(self) -> Vec<SharedControlId> {
        self.ids.into_iter().filter(|i| i.messages > 1).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::Just;

    fn message(payload: &str) -> Message {
        Message {
            source: "a.hl7".into(),
            index: 1,
            line: 1,
            offset: 0,
            payload: Bytes::from(payload.to_string()),
            original_control_id: None,
        }
    }

    #[test]
    fn an_empty_or_absent_msh_10_is_found() {
        assert!(lacks_control_id(
            b"MSH|^~\\&|A|B|C|D|2024||ADT^A01||P|2.5\r"
        ));
        assert!(lacks_control_id(b"MSH|^~\\&|A|B\rPID|1\r"));
        assert!(!lacks_control_id(
            b"MSH|^~\\&|A|B|C|D|2024||ADT^A01|X1|P|2.5\r"
        ));
    }

    /// The rule as first written: some MSH segment's parsed MSH-10 is empty or absent.
    fn lacks_by_parse(payload: &[u8]) -> bool {
        headers(payload).any(|(_, msh)| msh.control_id().is_none_or(<[u8]>::is_empty))
    }

    proptest::proptest! {
        /// Payloads of several segments (MSH ones with odd separators, fields missing or
        /// empty, CR and LF endings): the one-pass read finds what the parse finds.
        #[test]
        fn a_missing_msh_10_is_found_as_the_parse_finds_it(
            segments in proptest::collection::vec(
                (
                    proptest::prop_oneof![
                        Just(&b"MSH"[..]), Just(&b"PID"[..]), Just(&b"MS"[..]), Just(&b""[..])
                    ],
                    proptest::collection::vec(
                        proptest::prop_oneof![
                            6 => proptest::sample::select(b"|^~\\&AB12".to_vec()),
                            1 => proptest::prelude::any::<u8>(),
                        ],
                        0..40,
                    ),
                    proptest::prop_oneof![Just(b'\r'), Just(b'\n')],
                ),
                0..5,
            )
        ) {
            let mut payload = Vec::new();
            for (name, rest, end) in &segments {
                payload.extend_from_slice(name);
                payload.extend_from_slice(rest);
                payload.push(*end);
            }
            proptest::prop_assert_eq!(lacks_control_id(&payload), lacks_by_parse(&payload));
        }
    }

    #[test]
    fn fresh_ids_replace_each_msh_10_and_keep_the_first_original() {
        let mut renamer = Renamer::new(36 * 36 + 1);
        let one = renamer.rename(message(
            "MSH|^~\\&|A|B|C|D|2024||ADT^A01|OLD|P|2.5\rPID|1\r",
        ));
        assert_eq!(
            &one.payload[..],
            b"MSH|^~\\&|A|B|C|D|2024||ADT^A01|101000001|P|2.5\rPID|1\r"
        );
        assert_eq!(one.original_control_id.as_deref(), Some("OLD"));
        let two = renamer.rename(message("MSH|^~\\&|A|B|C|D|2024||ADT^A01||P\r"));
        assert_eq!(
            &two.payload[..],
            b"MSH|^~\\&|A|B|C|D|2024||ADT^A01|101000002|P\r"
        );
        assert_eq!(two.original_control_id.as_deref(), Some(""));
        // Too short to have an MSH-10: the missing fields are added.
        let short = renamer.rename(message("MSH|^~\\&|A\rPID|1\r"));
        assert_eq!(&short.payload[..], b"MSH|^~\\&|A|||||||101000003\rPID|1\r");
        assert!(!lacks_control_id(&short.payload));
    }

    #[test]
    fn shared_ids_are_counted_in_input_order() {
        let mut count = ControlIdCount::default();
        for id in ["B", "A", "B", "C", "A", "B"] {
            count.observe(&message(&format!(
                "MSH|^~\\&|A|B|C|D|2024||ADT^A01|{id}|P\r"
            )));
        }
        let shared = count.shared();
        assert_eq!(
            shared
                .iter()
                .map(|s| (s.control_id.as_str(), s.messages))
                .collect::<Vec<_>>(),
            [("B", 3), ("A", 2)]
        );
    }
}
