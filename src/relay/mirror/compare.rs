//! Comparing what the upstream and the shadow answered one message, through the library's HL7
//! reader: by default MSA-1, MSA-3 and every ERR segment; or the whole ACK but MSH-7 and
//! MSH-10 (which differ between any two engines), less what the caller ignores. Values are
//! compared decoded, down to subcomponents, and an empty value is the same as an absent one.
//! The answer is the paths that differ, at field level (`MSA-3`, `ERR(2)-3`): never a value.

use crate::hl7::{Delimiters, Message, Occurrence, Path};
use std::borrow::Cow;
use std::collections::{BTreeMap, BTreeSet};

/// What of two answers is compared.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum Compare {
    /// MSA-1 (the code), MSA-3 (the text) and every ERR segment.
    #[default]
    Answer,
    /// Every field of the ACK except MSH-7, MSH-10 and those left out.
    Ack {
        /// What is left out.
        ignore: Vec<Ignore>,
    },
}

/// What a comparison leaves out: a whole segment (`ERR`), or what a path names (a field, a
/// component, a repetition, every occurrence with `*`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ignore {
    /// Every occurrence of the segment of this name.
    Segment([u8; 3]),
    /// What the path names.
    Path(Path),
}

impl std::str::FromStr for Ignore {
    type Err = crate::hl7::PathError;

    /// A segment's name alone (three upper-case letters or digits), or a field path.
    fn from_str(text: &str) -> Result<Ignore, Self::Err> {
        let name: Option<[u8; 3]> = text.as_bytes().try_into().ok();
        match name {
            Some(name)
                if name
                    .iter()
                    .all(|b| b.is_ascii_uppercase() || b.is_ascii_digit()) =>
            {
                Ok(Ignore::Segment(name))
            }
            _ => text.parse().map(Ignore::Path),
        }
    }
}

impl std::fmt::Display for Ignore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Ignore::Segment(name) => f.write_str(&String::from_utf8_lossy(name)),
            Ignore::Path(path) => path.fmt(f),
        }
    }
}

/// Where one leaf value lies: segment name, its occurrence, field, repetition, component,
/// subcomponent (all from 1).
type Leaf = (Vec<u8>, usize, usize, usize, usize, usize);

/// The field-level paths where `upstream` and `shadow` differ under `compare`, in message
/// order; empty when they agree. `None` stands for no answer, which differs from any answer
/// that says something.
pub(crate) fn differences(
    upstream: Option<&[u8]>,
    shadow: Option<&[u8]>,
    compare: &Compare,
) -> Vec<String> {
    // Two engines that agree mostly answer with the same MSA and ERR bytes: no decoding then.
    if let (Compare::Answer, Some(a), Some(b)) = (compare, upstream, shadow) {
        if same_answer_bytes(a, b) {
            return Vec::new();
        }
    }
    decoded_differences(upstream, shadow, compare)
}

/// [`differences`] by the decoded values alone.
fn decoded_differences(
    upstream: Option<&[u8]>,
    shadow: Option<&[u8]>,
    compare: &Compare,
) -> Vec<String> {
    let a = leaves(upstream.unwrap_or_default(), compare);
    let b = leaves(shadow.unwrap_or_default(), compare);
    let mut paths = BTreeSet::new();
    for (leaf, value) in &a {
        if b.get(leaf) != Some(value) {
            paths.insert(field_of(leaf));
        }
    }
    for leaf in b.keys().filter(|leaf| !a.contains_key(*leaf)) {
        paths.insert(field_of(leaf));
    }
    paths
        .into_iter()
        .map(|(name, occurrence, field)| {
            let name = String::from_utf8_lossy(&name).into_owned();
            match occurrence {
                1 => format!("{name}-{field}"),
                n => format!("{name}({n})-{field}"),
            }
        })
        .collect()
}

/// What `same_answer_bytes` compares of an answer, in order: the delimiters each header
/// segment sets for the segments after it, and the bytes of each MSA and ERR segment.
#[derive(PartialEq)]
enum AnswerPart<'a> {
    Delimiters(Delimiters),
    Segment(&'a [u8]),
}

fn answer_parts<'a>(ack: &Message<'a>) -> impl Iterator<Item = AnswerPart<'a>> + 'a {
    let start = std::iter::once(AnswerPart::Delimiters(ack.delimiters()));
    start.chain(ack.segments().filter_map(|segment| {
        if segment.is_header() {
            return Some(AnswerPart::Delimiters(Delimiters::of_header(
                segment.bytes(),
            )));
        }
        matches!(segment.name(), b"MSA" | b"ERR").then(|| AnswerPart::Segment(segment.bytes()))
    }))
}

/// Whether `a` and `b` agree on MSA-1, MSA-3 and every ERR segment by their bytes alone: under
/// the same delimiters, the same MSA and ERR segments in the same order, byte for byte, so
/// every value the decoded comparison would look at is the same. `false` says nothing.
fn same_answer_bytes(a: &[u8], b: &[u8]) -> bool {
    answer_parts(&Message::new(a)).eq(answer_parts(&Message::new(b)))
}

fn field_of(leaf: &Leaf) -> (Vec<u8>, usize, usize) {
    (leaf.0.clone(), leaf.1, leaf.2)
}

/// Every non-empty decoded leaf of `ack` in scope.
fn leaves<'a>(ack: &'a [u8], compare: &Compare) -> BTreeMap<Leaf, Cow<'a, [u8]>> {
    let mut out = BTreeMap::new();
    let mut seen: BTreeMap<&[u8], usize> = BTreeMap::new();
    for segment in Message::new(ack).segments() {
        let name = segment.name();
        let occurrence = {
            let n = seen.entry(name).or_default();
            *n += 1;
            *n
        };
        for (field, value) in segment.fields() {
            if !in_scope(name, occurrence, field, compare) {
                continue;
            }
            for (r, repetition) in value.repetitions().enumerate() {
                for (c, component) in repetition.components().enumerate() {
                    for (s, sub) in component.subcomponents().enumerate() {
                        let leaf = (name.to_vec(), occurrence, field, r + 1, c + 1, s + 1);
                        if ignored(&leaf, compare) {
                            continue;
                        }
                        let decoded = sub.decoded();
                        if !decoded.is_empty() {
                            out.insert(leaf, decoded);
                        }
                    }
                }
            }
        }
    }
    out
}

fn in_scope(name: &[u8], occurrence: usize, field: usize, compare: &Compare) -> bool {
    match compare {
        Compare::Answer => match name {
            b"MSA" => occurrence == 1 && (field == 1 || field == 3),
            b"ERR" => true,
            _ => false,
        },
        // The time of the answer and its own control ID are each engine's own.
        Compare::Ack { .. } => !(name == b"MSH" && occurrence == 1 && (field == 7 || field == 10)),
    }
}

fn ignored(leaf: &Leaf, compare: &Compare) -> bool {
    let Compare::Ack { ignore } = compare else {
        return false;
    };
    let (name, occurrence, field, repetition, component, subcomponent) = leaf;
    let matches = |o: Occurrence, n: usize| o == Occurrence::Every || o == Occurrence::Nth(n);
    ignore.iter().any(|ignore| {
        let p = match ignore {
            Ignore::Segment(segment) => return segment.as_slice() == name.as_slice(),
            Ignore::Path(p) => p,
        };
        p.segment().as_slice() == name.as_slice()
            && matches(p.occurrence(), *occurrence)
            && p.field() == *field
            // `PID-3` left out is the field however often it repeats; `PID-3(2)` its second.
            && (!p.names_repetition() || matches(p.repetition(), *repetition))
            && p.component().is_none_or(|c| c == *component)
            && p.subcomponent().is_none_or(|s| s == *subcomponent)
    })
}

#[cfg(test)]
mod tests;
