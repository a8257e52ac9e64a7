//! Pairing checked against a model: the same counts and findings whichever side is indexed.

use super::*;
use crate::hl7::Filters;
use crate::input::{InputError, Message as InputMessage};
use bytes::Bytes;
use proptest::prelude::*;
use std::collections::BTreeMap;
use std::sync::Arc;

fn message(source: &str, index: u64, key: &str, value: u8) -> Result<InputMessage, InputError> {
    let payload = format!("MSH|^~\\&|X||||20240101||ADT^A01|{key}|P|2.5\rPID|1||{value}\r");
    Ok(InputMessage {
        source: Arc::from(source),
        index,
        line: 1,
        offset: 0,
        payload: Bytes::from(payload),
        original_control_id: None,
    })
}

fn side(source: &str, items: &[(u8, u8)]) -> Vec<Result<InputMessage, InputError>> {
    items
        .iter()
        .enumerate()
        .map(|(i, (k, v))| message(source, i as u64 + 1, &format!("K{k}"), *v))
        .collect()
}

/// What a run said: the summary and each finding as text, sorted.
fn run(a: &[(u8, u8)], b: &[(u8, u8)], indexed: Side) -> (Summary, Vec<String>) {
    let pairing = Pairing {
        keys: KeyPaths::new(Vec::new()),
        comparer: Comparer::default(),
        filters: Filters::default(),
    };
    let mut said = Vec::new();
    let tell = |e: &Event<'_>| {
        said.push(match e {
            Event::Different {
                key,
                a,
                b,
                differences,
            } => {
                format!("different {:?} {a} {b} {}", key.values(), differences.len())
            }
            Event::Only { side, key, label } => format!("only {side:?} {:?} {label}", key.values()),
            Event::Twice { side, key, .. } => format!("twice {side:?} {:?}", key.values()),
        });
        true
    };
    let (sa, sb) = (side("a", a), side("b", b));
    let summary = match indexed {
        Side::A => pairing.run((Side::A, sa), (Side::B, sb), tell),
        Side::B => pairing.run((Side::B, sb), (Side::A, sa), tell),
    };
    said.sort();
    (summary.unwrap(), said)
}

/// The model: group each side by key, pair the n-th with the n-th.
fn model(a: &[(u8, u8)], b: &[(u8, u8)]) -> (Summary, Vec<String>) {
    let group = |items: &[(u8, u8)]| {
        let mut g: BTreeMap<u8, Vec<(usize, u8)>> = BTreeMap::new();
        for (i, (k, v)) in items.iter().enumerate() {
            g.entry(*k).or_default().push((i + 1, *v));
        }
        g
    };
    let (ga, gb) = (group(a), group(b));
    let mut s = Summary::default();
    let mut said = Vec::new();
    let keys: std::collections::BTreeSet<u8> = ga.keys().chain(gb.keys()).copied().collect();
    for k in keys {
        let (la, lb) = (
            ga.get(&k).cloned().unwrap_or_default(),
            gb.get(&k).cloned().unwrap_or_default(),
        );
        let name = format!("[\"K{k}\"]");
        if la.len() > 1 {
            s.keys_twice_in_a += 1;
            said.push(format!("twice A {name}"));
        }
        if lb.len() > 1 {
            s.keys_twice_in_b += 1;
            said.push(format!("twice B {name}"));
        }
        for i in 0..la.len().max(lb.len()) {
            match (la.get(i), lb.get(i)) {
                (Some((ia, va)), Some((ib, vb))) if va == vb => {
                    let _ = (ia, ib);
                    s.same += 1;
                }
                (Some((ia, _)), Some((ib, _))) => {
                    s.different += 1;
                    said.push(format!("different {name} a#{ia} b#{ib} 1"));
                }
                (Some((ia, _)), None) => {
                    s.only_in_a += 1;
                    said.push(format!("only A {name} a#{ia}"));
                }
                (None, Some((ib, _))) => {
                    s.only_in_b += 1;
                    said.push(format!("only B {name} b#{ib}"));
                }
                (None, None) => unreachable!(),
            }
        }
    }
    said.sort();
    (s, said)
}

#[test]
fn pairs_by_key_in_order_and_tells_the_rest() {
    let a = [(1, 1), (2, 2), (3, 3), (3, 4), (5, 5)];
    let b = [(2, 2), (1, 9), (3, 3), (4, 4), (4, 4)];
    let (summary, said) = run(&a, &b, Side::A);
    assert_eq!(
        summary,
        Summary {
            same: 2,
            different: 1,
            only_in_a: 2,
            only_in_b: 2,
            keys_twice_in_a: 1,
            keys_twice_in_b: 1,
            ..Default::default()
        }
    );
    assert!(
        said.contains(&"different [\"K1\"] a#1 b#2 1".to_string()),
        "{said:?}"
    );
    assert!(
        said.contains(&"only A [\"K3\"] a#4".to_string()),
        "{said:?}"
    );
    assert_eq!((summary, said.clone()), model(&a, &b));
    assert_eq!(run(&a, &b, Side::B), (summary, said));
}

#[test]
fn filters_leave_messages_out_and_count_them() {
    let pairing = Pairing {
        keys: KeyPaths::new(vec!["PID-3".parse().unwrap()]),
        comparer: Comparer::new(Ignore::new(vec!["MSH-10".parse().unwrap()])),
        filters: Filters {
            filters: vec!["PID-3!=7".parse().unwrap()],
            charset: None,
        },
    };
    let a = side("a", &[(1, 7), (2, 8)]);
    let b = side("b", &[(3, 7), (4, 8)]);
    let summary = pairing.run((Side::A, a), (Side::B, b), |_| true).unwrap();
    assert_eq!(summary.filtered_out_a, 1);
    assert_eq!(summary.filtered_out_b, 1);
    assert_eq!(summary.same, 1);
    assert!(summary.is_same());
}

proptest! {
    #[test]
    fn agrees_with_the_model_whichever_side_is_indexed(
        a in prop::collection::vec((0u8..8, 0u8..3), 0..30),
        b in prop::collection::vec((0u8..8, 0u8..3), 0..30),
    ) {
        let expected = model(&a, &b);
        prop_assert_eq!(run(&a, &b, Side::A), expected.clone());
        prop_assert_eq!(run(&a, &b, Side::B), expected);
    }
}
