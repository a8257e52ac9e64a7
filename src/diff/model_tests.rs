//! The comparison checked against a model: a message as a tree of segments, fields,
//! repetitions, components and subcomponents of text, written out in any of the ways that mean
//! the same (trailing empty parts, escapes, line ends). Two writings of one tree never differ;
//! two trees differ exactly when, trailing empties trimmed, they are not equal; one leaf
//! changed is one difference, with both values.

use super::{Comparer, Difference};
use proptest::prelude::*;

type Leaf = String;
type Comp = Vec<Leaf>;
type Rep = Vec<Comp>;
type Field = Vec<Rep>;
type Seg = (String, Vec<Field>);

/// How a tree is written: extra empty parts at the end of each level, letters as hexadecimal
/// escapes, CRLF for CR.
#[derive(Debug, Clone, Copy)]
struct Style {
    pad: u8,
    hex: bool,
    crlf: bool,
}

fn escaped(text: &str, hex: bool) -> String {
    let mut out = String::new();
    for c in text.chars() {
        match c {
            '|' => out.push_str("\\F\\"),
            '^' => out.push_str("\\S\\"),
            '~' => out.push_str("\\R\\"),
            '&' => out.push_str("\\T\\"),
            '\\' => out.push_str("\\E\\"),
            'A' if hex => out.push_str("\\X41\\"),
            c => out.push(c),
        }
    }
    out
}

fn write(message: &[Seg], style: Style) -> Vec<u8> {
    let pad = |sep: &str, level: u8| {
        if style.pad & level != 0 {
            sep.repeat(2)
        } else {
            String::new()
        }
    };
    let mut text = String::from("MSH|^~\\&|MODEL");
    for (name, fields) in message {
        text.push_str(if style.crlf { "\r\n" } else { "\r" });
        text.push_str(name);
        for field in fields {
            text.push('|');
            let reps: Vec<String> = field
                .iter()
                .map(|rep| {
                    let comps: Vec<String> = rep
                        .iter()
                        .map(|comp| {
                            let subs: Vec<String> =
                                comp.iter().map(|l| escaped(l, style.hex)).collect();
                            subs.join("&") + &pad("&", 1)
                        })
                        .collect();
                    comps.join("^") + &pad("^", 2)
                })
                .collect();
            text.push_str(&(reps.join("~") + &pad("~", 4)));
        }
        text.push_str(&pad("|", 8));
    }
    text.push('\r');
    text.into_bytes()
}

/// The tree with trailing empty parts trimmed at every level.
fn trimmed(message: &[Seg]) -> Vec<Seg> {
    fn trim<T>(mut v: Vec<T>, empty: impl Fn(&T) -> bool) -> Vec<T> {
        while v.last().is_some_and(&empty) {
            v.pop();
        }
        v
    }
    message
        .iter()
        .map(|(name, fields)| {
            let fields = fields
                .iter()
                .map(|f| {
                    let reps = f
                        .iter()
                        .map(|r| {
                            let comps = r
                                .iter()
                                .map(|c| trim(c.clone(), |l| l.is_empty()))
                                .collect();
                            trim(comps, |c: &Comp| c.is_empty())
                        })
                        .collect();
                    trim(reps, |r: &Rep| r.is_empty())
                })
                .collect();
            (name.clone(), trim(fields, |f: &Field| f.is_empty()))
        })
        .collect()
}

/// Same as the comparison reads messages: segments by name and occurrence, trimmed.
fn same(a: &[Seg], b: &[Seg]) -> bool {
    let groups = |m: &[Seg]| {
        let mut g: std::collections::BTreeMap<String, Vec<Vec<Field>>> = Default::default();
        for (name, fields) in trimmed(m) {
            g.entry(name).or_default().push(fields);
        }
        // A segment with no value is the same as none: trailing ones dropped.
        for list in g.values_mut() {
            while list.last().is_some_and(|f| f.is_empty()) {
                list.pop();
            }
        }
        g.retain(|_, list| !list.is_empty());
        g
    };
    groups(a) == groups(b)
}

fn leaf() -> impl Strategy<Value = Leaf> {
    prop_oneof![
        3 => "[AB1]{1,3}",
        1 => Just(String::new()),
        1 => "[A|^~&\\\\]{1,2}",
    ]
}

fn segment() -> impl Strategy<Value = Seg> {
    let comp = prop::collection::vec(leaf(), 1..3);
    let rep = prop::collection::vec(comp, 1..3);
    let field = prop::collection::vec(rep, 1..3);
    (
        prop_oneof![Just("AAA"), Just("BBB"), Just("ZZZ")],
        prop::collection::vec(field, 0..4),
    )
        .prop_map(|(n, f)| (n.to_string(), f))
}

fn style() -> impl Strategy<Value = Style> {
    (any::<u8>(), any::<bool>(), any::<bool>()).prop_map(|(pad, hex, crlf)| Style {
        pad,
        hex,
        crlf,
    })
}

fn compare(a: &[u8], b: &[u8]) -> Vec<Difference> {
    let mut out = Vec::new();
    Comparer::default().compare(a, b, &mut out);
    out
}

proptest! {
    #[test]
    fn two_writings_of_one_message_are_the_same(
        m in prop::collection::vec(segment(), 0..5), s1 in style(), s2 in style(),
    ) {
        let d = compare(&write(&m, s1), &write(&m, s2));
        prop_assert!(d.is_empty(), "{:?}", d);
    }

    #[test]
    fn messages_differ_exactly_when_the_model_says(
        a in prop::collection::vec(segment(), 0..4), b in prop::collection::vec(segment(), 0..4),
        s1 in style(), s2 in style(),
    ) {
        let d = compare(&write(&a, s1), &write(&b, s2));
        prop_assert_eq!(d.is_empty(), same(&a, &b), "{:?}", d);
    }

    #[test]
    fn one_leaf_changed_is_one_difference_with_both_values(
        m in prop::collection::vec(segment(), 1..4), at in any::<prop::sample::Index>(),
        new in "[C2]{1,3}", s1 in style(), s2 in style(),
    ) {
        // Every leaf, by place.
        let mut places = Vec::new();
        for (s, (_, fields)) in m.iter().enumerate() {
            for (f, field) in fields.iter().enumerate() {
                for (r, rep) in field.iter().enumerate() {
                    for (c, comp) in rep.iter().enumerate() {
                        for l in 0..comp.len() {
                            places.push((s, f, r, c, l));
                        }
                    }
                }
            }
        }
        prop_assume!(!places.is_empty());
        let (s, f, r, c, l) = places[at.index(places.len())];
        let mut changed = m.clone();
        let old = std::mem::replace(&mut changed[s].1[f][r][c][l], new.clone());
        let d = compare(&write(&m, s1), &write(&changed, s2));
        prop_assert_eq!(d.len(), 1, "{:?}", d);
        prop_assert_eq!(&d[0].a, &old);
        prop_assert_eq!(&d[0].b, &new);
        let name = &m[s].0;
        let field = format!("-{}", f + 1);
        prop_assert!(d[0].path.starts_with(name.as_str()), "{}", d[0].path);
        prop_assert!(d[0].path.contains(&field), "{} {}", d[0].path, field);
    }
}
