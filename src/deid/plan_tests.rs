//! The resolved plan against the rules held against each value one by one: the same bytes
//! and the same counts for any policy (rules of every depth, occurrences, repetitions,
//! conditions, every method) over generated messages.

use super::{Deidentifier, Key, Policy, RawPolicy};
use proptest::prelude::*;

/// A site's rules: paths of every kind a policy may write, on top of the standard ones or not.
fn policy() -> impl Strategy<Value = Policy> {
    let path = prop::sample::select(vec![
        "PID-3",
        "PID-3.1",
        "PID-3.2",
        "PID-3(2)",
        "PID-3(*).1",
        "PID(2)-3",
        "PID-3.1.2",
        "PID-5",
        "PID-5.1",
        "PID-5.3",
        "PID-11",
        "PID-11.3",
        "PID-11.4",
        "PID-13",
        "NK1-2",
        "NK1(*)-4.1",
        "PV1-7.2",
        "ZXX-1",
        "ZXX-2",
        "ZXX-2.2",
        "ZXX-3.1.1",
        "OBX-5",
        "OBX-5.1",
        "OBX(2)-5",
        "EVN-2",
        "MSH-4",
        "MSH-7",
        "NTE-3",
    ]);
    let method = prop::sample::select(vec!["hash", "name", "shift-date", "blank", "keep"]);
    let when = prop::option::of(prop::sample::select(vec!["TX", "NM", "ED"]));
    let rule = (path, method, when).prop_map(|(path, method, when)| {
        let rule = match (when, path.starts_with("OBX")) {
            (Some(value), true) => {
                serde_json::json!({ "method": method, "when": { "OBX-2": [value] } })
            }
            _ => serde_json::json!(method),
        };
        (path.to_string(), rule)
    });
    (any::<bool>(), prop::collection::vec(rule, 0..6)).prop_map(|(standard, rules)| {
        let paths: serde_json::Map<String, serde_json::Value> = rules.into_iter().collect();
        let raw: RawPolicy =
            serde_json::from_value(serde_json::json!({ "standard": standard, "paths": paths }))
                .unwrap();
        Policy::from_raw(raw).unwrap()
    })
}

fn message() -> impl Strategy<Value = Vec<u8>> {
    prop_oneof![
        super::model_tests::message(),
        prop::collection::vec(super::tests::segment(), 1..6).prop_map(|segments| {
            let mut text = String::from("MSH|^~\\&|A|B|C|D|20240101||ADT^A01|C1|P|2.5");
            for s in segments {
                text.push('\r');
                text.push_str(&s);
            }
            text.push('\r');
            text.into_bytes()
        }),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(128))]

    #[test]
    fn the_plan_replaces_what_each_rule_held_against_each_value_does(
        policy in policy(),
        messages in prop::collection::vec(message(), 1..4),
        key in any::<u8>(),
    ) {
        let key = Key::from_bytes([key; 32]);
        let planned = Deidentifier::new(&key, policy.clone());
        let reference = Deidentifier::new(&key, policy).held_against_each_value();
        let (mut fast, mut slow) = (planned.session(), reference.session_remembering(0));
        for message in &messages {
            let (mut a, mut b) = (Vec::new(), Vec::new());
            fast.apply(message, &mut a);
            slow.apply(message, &mut b);
            prop_assert_eq!(a, b);
        }
        let counts = |s: &super::Session<'_>| {
            s.report().counts().map(|(p, n)| (p.to_string(), n)).collect::<Vec<_>>()
        };
        prop_assert_eq!(counts(&fast), counts(&slow));
    }
}
