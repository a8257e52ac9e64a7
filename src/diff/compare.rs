//! Two messages compared field by field: segments paired by name and occurrence, values
//! compared after decoding escapes, with trailing empty fields, repetitions, components and
//! subcomponents equal to absent ones; each difference told at the depth where it lies.

use super::ignore::Ignore;
use crate::hl7::{Charset, Depth, Message, Place, Segment, Value};
use std::fmt::Write;

/// One place where two messages differ, with each side's value as text (escapes decoded, in
/// the message's character set; empty where the side has nothing).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Difference {
    /// Where: `PID-5.2`, `OBX(2)-5`, `PID-3(2).1` (an occurrence or repetition is numbered
    /// when either side has more than one).
    pub path: String,
    /// Side A's value.
    pub a: String,
    /// Side B's value.
    pub b: String,
}

/// One side of a comparison.
#[derive(Clone, Copy)]
struct Side<'m> {
    message: Message<'m>,
    charset: Charset,
}

impl<'m> Side<'m> {
    fn new(bytes: &'m [u8], chosen: Option<Charset>) -> Side<'m> {
        let message = Message::new(bytes);
        let charset = Charset::for_message(&message, chosen).unwrap_or(Charset::UTF_8);
        Side { message, charset }
    }

    fn text(&self, value: Option<Value<'_>>) -> String {
        value.map_or_else(String::new, |v| v.text(self.charset).into_string())
    }
}

/// Compares messages under what is ignored.
#[derive(Debug, Clone, Default)]
pub struct Comparer {
    ignore: Ignore,
    charset: Option<Charset>,
}

/// A level of a value's structure, and the next one down.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Level {
    Field,
    Repetition,
    Component,
    Subcomponent,
}

impl Level {
    fn parts<'a>(self, value: Value<'a>) -> crate::hl7::Parts<'a> {
        match self {
            Level::Field => value.repetitions(),
            Level::Repetition => value.components(),
            Level::Component | Level::Subcomponent => value.subcomponents(),
        }
    }

    fn below(self) -> Level {
        match self {
            Level::Field => Level::Repetition,
            Level::Repetition => Level::Component,
            Level::Component | Level::Subcomponent => Level::Subcomponent,
        }
    }
}

/// The parts of `value` at `level`, trailing empty ones left off.
fn trimmed(value: Value<'_>, level: Level) -> Vec<Value<'_>> {
    let mut parts: Vec<Value<'_>> = level.parts(value).collect();
    while parts.last().is_some_and(|p| is_empty(*p, level.below())) {
        parts.pop();
    }
    parts
}

/// No value below: nothing but separators.
fn is_empty(value: Value<'_>, level: Level) -> bool {
    let d = value.delimiters();
    value.raw().iter().all(|&b| match level {
        Level::Field => false,
        Level::Repetition => b == d.component || b == d.subcomponent,
        Level::Component => b == d.subcomponent,
        Level::Subcomponent => false,
    })
}

/// Equal as the comparison reads values: decoded, trailing empties as absent.
fn equal(a: Value<'_>, b: Value<'_>, level: Level) -> bool {
    if a.raw() == b.raw() && a.delimiters() == b.delimiters() {
        return true;
    }
    if level == Level::Subcomponent {
        return a.decoded() == b.decoded();
    }
    let (pa, pb) = (trimmed(a, level), trimmed(b, level));
    let empty = |v: &Value<'_>| Value::empty(v.delimiters());
    (0..pa.len().max(pb.len())).all(|i| {
        let x = pa.get(i).copied().unwrap_or_else(|| empty(&a));
        let y = pb.get(i).copied().unwrap_or_else(|| empty(&b));
        equal(x, y, level.below())
    })
}

/// The segments of a message grouped by name, in order of first appearance.
fn by_name<'m>(message: &Message<'m>) -> Vec<(&'m [u8], Vec<Segment<'m>>)> {
    let mut groups: Vec<(&[u8], Vec<Segment<'m>>)> = Vec::new();
    for segment in message.segments() {
        let name = segment.name();
        match groups.iter_mut().find(|(n, _)| *n == name) {
            Some((_, list)) => list.push(segment),
            None => groups.push((name, vec![segment])),
        }
    }
    groups
}

impl Comparer {
    /// Compare leaving out what `ignore` names.
    pub fn new(ignore: Ignore) -> Comparer {
        Comparer {
            ignore,
            charset: None,
        }
    }

    /// Values shown as text in `charset`, whatever MSH-18 says.
    pub fn in_charset(self, charset: Option<Charset>) -> Comparer {
        Comparer { charset, ..self }
    }

    /// The differences between `a` and `b`, in the order of A's segments (then B's own), into
    /// `out`; none when they are the same.
    pub fn compare(&self, a: &[u8], b: &[u8], out: &mut Vec<Difference>) {
        let (sa, sb) = (Side::new(a, self.charset), Side::new(b, self.charset));
        if a == b {
            return;
        }
        let (ga, mut gb) = (by_name(&sa.message), by_name(&sb.message));
        let mut pairs: Vec<(&[u8], Vec<Segment<'_>>, Vec<Segment<'_>>)> = Vec::new();
        for (name, list) in ga {
            let other = gb
                .iter()
                .position(|(n, _)| *n == name)
                .map(|i| gb.remove(i).1)
                .unwrap_or_default();
            pairs.push((name, list, other));
        }
        pairs.extend(gb.into_iter().map(|(n, list)| (n, Vec::new(), list)));
        for (name, la, lb) in pairs {
            if self.ignore.segment(name) {
                continue;
            }
            let count = la.len().max(lb.len());
            for i in 0..count {
                let at = Tell {
                    sides: (sa, sb),
                    name,
                    occurrence: i + 1,
                    numbered: count > 1,
                };
                self.segment(&at, la.get(i).copied(), lb.get(i).copied(), out);
            }
        }
    }

    fn segment<'m>(
        &self,
        at: &Tell<'_, 'm>,
        a: Option<Segment<'m>>,
        b: Option<Segment<'m>>,
        out: &mut Vec<Difference>,
    ) {
        let same_delimiters = at.sides.0.message.delimiters() == at.sides.1.message.delimiters();
        if let (Some(x), Some(y)) = (a, b) {
            if same_delimiters && x.bytes() == y.bytes() {
                return;
            }
        }
        let (fa, fb) = (fields_of(a), fields_of(b));
        let header = a.or(b).is_some_and(|s| s.is_header());
        for n in 1..=fa.len().max(fb.len()) {
            let (x, y) = (fa.get(n - 1).copied(), fb.get(n - 1).copied());
            let place = Place::field(at.name, at.occurrence, n);
            if self.ignore.covers(&place) {
                continue;
            }
            if header && n <= 2 {
                // The delimiters themselves: compared as written.
                if raw(x) != raw(y) {
                    let text = |v| String::from_utf8_lossy(raw(v)).into_owned();
                    out.push(at.difference(at.field_path(n), text(x), text(y)));
                }
                continue;
            }
            let empty = Value::empty(at.sides.0.message.delimiters());
            let (x, y) = (x.unwrap_or(empty), y.unwrap_or(empty));
            if equal(x, y, Level::Field) {
                continue;
            }
            let depth = self.ignore.depth_in(at.name, at.occurrence, n);
            let mut walk = Walk {
                comparer: self,
                at,
                depth,
                place,
                out,
            };
            walk.field(at.field_path(n), x, y);
        }
    }
}

/// Where a segment lies, for telling its differences.
struct Tell<'s, 'm> {
    sides: (Side<'m>, Side<'m>),
    name: &'s [u8],
    occurrence: usize,
    /// Either side has more than one segment of this name: the occurrence is written.
    numbered: bool,
}

impl Tell<'_, '_> {
    fn field_path(&self, field: usize) -> String {
        let mut path = String::from_utf8_lossy(self.name).into_owned();
        if self.numbered {
            let _ = write!(path, "({})", self.occurrence);
        }
        let _ = write!(path, "-{field}");
        path
    }

    fn difference(&self, path: String, a: String, b: String) -> Difference {
        Difference { path, a, b }
    }
}

/// One differing field told down to where its differences lie.
struct Walk<'c, 't, 's, 'm, 'o> {
    comparer: &'c Comparer,
    at: &'t Tell<'s, 'm>,
    /// The ignored paths in this field reach this deep: differences are told at least so.
    depth: Depth,
    place: Place<'s>,
    out: &'o mut Vec<Difference>,
}

impl Walk<'_, '_, '_, '_, '_> {
    fn report(
        &mut self,
        place: Place<'_>,
        path: String,
        a: Option<Value<'_>>,
        b: Option<Value<'_>>,
    ) {
        if self.comparer.ignore.covers(&place) {
            return;
        }
        let (sa, sb) = self.at.sides;
        let d = self.at.difference(path, sa.text(a), sb.text(b));
        self.out.push(d);
    }

    fn field(&mut self, path: String, a: Value<'_>, b: Value<'_>) {
        let (ra, rb) = (trimmed(a, Level::Field), trimmed(b, Level::Field));
        let count = ra.len().max(rb.len());
        for r in 0..count {
            let (x, y) = (ra.get(r).copied(), rb.get(r).copied());
            let e = Value::empty(a.delimiters());
            if equal(x.unwrap_or(e), y.unwrap_or(e), Level::Repetition) {
                continue;
            }
            let place = Place {
                repetition: Some(r + 1),
                ..self.place
            };
            if self.comparer.ignore.covers(&place) {
                continue;
            }
            let path = match count > 1 {
                true => format!("{path}({})", r + 1),
                false => path.clone(),
            };
            self.repetition(place, path, x.unwrap_or(e), y.unwrap_or(e));
        }
    }

    fn repetition(&mut self, place: Place<'_>, path: String, a: Value<'_>, b: Value<'_>) {
        let (ca, cb) = (trimmed(a, Level::Repetition), trimmed(b, Level::Repetition));
        let simple = |parts: &[Value<'_>]| {
            parts.len() <= 1
                && parts
                    .first()
                    .is_none_or(|c| trimmed(*c, Level::Component).len() <= 1)
        };
        if simple(&ca) && simple(&cb) && self.depth < Depth::Component {
            return self.report(place, path, leaf_of(&ca), leaf_of(&cb));
        }
        let e = Value::empty(a.delimiters());
        for c in 0..ca.len().max(cb.len()) {
            let (x, y) = (
                ca.get(c).copied().unwrap_or(e),
                cb.get(c).copied().unwrap_or(e),
            );
            if equal(x, y, Level::Component) {
                continue;
            }
            let place = Place {
                component: Some(c + 1),
                ..place
            };
            self.component(place, format!("{path}.{}", c + 1), x, y);
        }
    }

    fn component(&mut self, place: Place<'_>, path: String, a: Value<'_>, b: Value<'_>) {
        let (sa, sb) = (trimmed(a, Level::Component), trimmed(b, Level::Component));
        if sa.len() <= 1 && sb.len() <= 1 && self.depth < Depth::Subcomponent {
            return self.report(place, path, sa.first().copied(), sb.first().copied());
        }
        let e = Value::empty(a.delimiters());
        for s in 0..sa.len().max(sb.len()) {
            let (x, y) = (
                sa.get(s).copied().unwrap_or(e),
                sb.get(s).copied().unwrap_or(e),
            );
            if equal(x, y, Level::Subcomponent) {
                continue;
            }
            let place = Place {
                subcomponent: Some(s + 1),
                ..place
            };
            self.report(place, format!("{path}.{}", s + 1), Some(x), Some(y));
        }
    }
}

/// A segment's fields from 1 (none for a segment the side lacks).
fn fields_of<'m>(segment: Option<Segment<'m>>) -> Vec<Value<'m>> {
    segment
        .map(|s| s.fields().map(|(_, v)| v).collect())
        .unwrap_or_default()
}

/// A value's bytes as written (none for a value the side lacks).
fn raw<'m>(value: Option<Value<'m>>) -> &'m [u8] {
    value.map(|v| v.raw()).unwrap_or_default()
}

/// The one leaf of a repetition with at most one component of at most one subcomponent.
fn leaf_of<'a>(components: &[Value<'a>]) -> Option<Value<'a>> {
    let first = components.first()?;
    trimmed(*first, Level::Component).first().copied()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::diff::Ignored;

    const A: &str = "MSH|^~\\&|ENG|H|||20240101||ADT^A01|C1|P|2.5\rPID|1||123^^^H~456^^^S||DOE^JANE^Q||19800101\rOBX|1|NM|GLU||5.4\rOBX|2|NM|NA||140\r";

    fn diff(a: &str, b: &str, ignore: &[&str]) -> Vec<(String, String, String)> {
        let ignore = Ignore::new(
            ignore
                .iter()
                .map(|i| i.parse::<Ignored>().unwrap())
                .collect(),
        );
        let mut out = Vec::new();
        Comparer::new(ignore).compare(a.as_bytes(), b.as_bytes(), &mut out);
        out.into_iter().map(|d| (d.path, d.a, d.b)).collect()
    }

    fn t(p: &str, a: &str, b: &str) -> (String, String, String) {
        (p.into(), a.into(), b.into())
    }

    #[test]
    fn the_same_message_written_otherwise_is_the_same() {
        assert!(diff(A, A, &[]).is_empty());
        // Trailing empty fields, components and repetitions; escapes; other delimiters; LF.
        let b = A
            .replace("DOE^JANE^Q|", "DOE^JANE^Q^^&|")
            .replace("19800101", "19800101|||")
            .replace("5.4", "5.4^~");
        assert!(diff(A, &b, &[]).is_empty(), "{:?}", diff(A, &b, &[]));
        let b = A.replace("JANE", "J\\X41\\NE");
        assert!(diff(A, &b, &[]).is_empty());
        // Other delimiters: only the delimiters themselves differ.
        let odd = A.replace('|', "#").replace('^', "*");
        let paths: Vec<_> = diff(A, &odd, &[]).into_iter().map(|d| d.0).collect();
        assert_eq!(paths, ["MSH-1", "MSH-2"]);
        assert!(diff(A, &A.replace('\r', "\n"), &[]).is_empty());
    }

    #[test]
    fn each_difference_is_told_where_it_lies() {
        let b = A
            .replace("DOE^JANE", "DOE^JAYNE")
            .replace("456^^^S", "457^^^S")
            .replace("140", "141");
        assert_eq!(
            diff(A, &b, &[]),
            [
                t("PID-3(2).1", "456", "457"),
                t("PID-5.2", "JANE", "JAYNE"),
                t("OBX(2)-5", "140", "141")
            ]
        );
        let b = A.replace("|19800101", "|19800102");
        assert_eq!(diff(A, &b, &[]), [t("PID-7", "19800101", "19800102")]);
        // A segment one side lacks: each of its values against nothing.
        let b = A.replace("OBX|2|NM|NA||140\r", "");
        assert_eq!(
            diff(A, &b, &[]),
            [
                t("OBX(2)-1", "2", ""),
                t("OBX(2)-2", "NM", ""),
                t("OBX(2)-3", "NA", ""),
                t("OBX(2)-5", "140", "")
            ]
        );
        let b = A.to_string() + "ZXX|1\r";
        assert_eq!(diff(A, &b, &[]), [t("ZXX-1", "", "1")]);
        let b = A.replace("2.5", "2.5.1").replace("^~\\&", "^~\\&#");
        assert_eq!(
            diff(A, &b, &[]),
            [t("MSH-2", "^~\\&", "^~\\&#"), t("MSH-12", "2.5", "2.5.1")]
        );
    }

    #[test]
    fn ignored_paths_and_segments_are_left_out() {
        let b = A
            .replace("20240101", "20240102")
            .replace("C1", "C2")
            .replace("123^^^H", "124^^^X");
        assert_eq!(
            diff(A, &b, &["MSH-7", "MSH-10", "PID-3.1"]),
            [t("PID-3(1).4", "H", "X")]
        );
        assert!(diff(A, &b, &["MSH-7", "MSH-10", "PID-3"]).is_empty());
        assert_eq!(diff(A, &b, &["MSH-7", "MSH-10", "PID-3(2)"]).len(), 2);
        let b = A.replace("140", "141") + "ZXX|1\r";
        assert!(diff(A, &b, &["OBX-5", "ZXX"]).is_empty());
        assert_eq!(
            diff(A, &b, &["OBX(1)-5", "ZXX"]),
            [t("OBX(2)-5", "140", "141")]
        );
    }
}
