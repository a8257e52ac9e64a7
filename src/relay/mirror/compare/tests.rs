use super::*;
use proptest::prelude::*;

const AA: &[u8] = b"MSH|^~\\&|UP|F|RELAY|F|20240101120000||ACK^A01|U1|P|2.5\rMSA|AA|C1|fine\r";

fn ack(msh7: &str, msh10: &str, msa: &str, rest: &str) -> Vec<u8> {
    format!("MSH|^~\\&|UP|F|RELAY|F|{msh7}||ACK^A01|{msh10}|P|2.5\rMSA|{msa}\r{rest}").into_bytes()
}

fn answer(a: &[u8], b: &[u8]) -> Vec<String> {
    differences(Some(a), Some(b), &Compare::Answer)
}

#[test]
fn the_same_answer_from_another_engine_is_the_same() {
    let other = ack("20990101", "S9", "AA|C1|fine", "");
    assert!(answer(AA, &other).is_empty());
    let whole = Compare::Ack { ignore: vec![] };
    assert!(differences(Some(AA), Some(&other), &whole).is_empty());
}

#[test]
fn each_planted_difference_is_found_by_its_path_and_nothing_else() {
    let code = ack("1", "1", "AE|C1|fine", "");
    assert_eq!(answer(AA, &code), ["MSA-1"]);
    let text = ack("1", "1", "AA|C1|other", "");
    assert_eq!(answer(AA, &text), ["MSA-3"]);
    let err = ack(
        "1",
        "1",
        "AA|C1|fine",
        "ERR|||207^Application error^HL70357|E\r",
    );
    assert_eq!(answer(AA, &err), ["ERR-3", "ERR-4"]);
    let two = ack("1", "1", "AA|C1|fine", "ERR|||207|E\r");
    let three = ack("1", "1", "AA|C1|fine", "ERR|||207|E\rERR|||101|W\r");
    assert_eq!(answer(&two, &three), ["ERR(2)-3", "ERR(2)-4"]);
    // Outside the default's scope: the sending application.
    let app = b"MSH|^~\\&|OTHER|F|RELAY|F|1||ACK^A01|U1|P|2.5\rMSA|AA|C1|fine\r";
    assert!(answer(AA, app).is_empty());
    let whole = Compare::Ack { ignore: vec![] };
    assert_eq!(differences(Some(AA), Some(app), &whole), ["MSH-3"]);
}

#[test]
fn empty_is_absent_and_escapes_are_decoded() {
    let trailing = ack("1", "1", "AA|C1|fine|||", "");
    assert!(answer(AA, &trailing).is_empty());
    let escaped = ack("1", "1", "AA|C1|fi\\X6E\\e", "");
    assert!(answer(AA, &escaped).is_empty(), "\\X6E\\ is n");
    let components = ack("1", "1", "AA|C1|fine^^", "");
    assert!(answer(AA, &components).is_empty());
}

#[test]
fn no_answer_differs_from_any_answer_and_equals_none() {
    assert_eq!(
        differences(None, Some(AA), &Compare::Answer),
        ["MSA-1", "MSA-3"]
    );
    assert!(differences(None, None, &Compare::Answer).is_empty());
}

#[test]
fn ignored_paths_are_left_out_at_their_depth() {
    let a = ack(
        "1",
        "1",
        "AA|C1|fine",
        "ERR|||207^x^HL70357~1^y|E\rZZZ|1|2\r",
    );
    let b = ack(
        "1",
        "1",
        "AA|C1|fine",
        "ERR|||207^z^HL70357~2^y|E\rZZZ|1|3\r",
    );
    let with = |paths: &[&str]| Compare::Ack {
        ignore: paths.iter().map(|p| p.parse().unwrap()).collect(),
    };
    assert_eq!(
        differences(Some(&a), Some(&b), &with(&[])),
        ["ERR-3", "ZZZ-2"]
    );
    assert_eq!(
        differences(Some(&a), Some(&b), &with(&["ERR-3", "ZZZ-2"])),
        Vec::<String>::new()
    );
    assert_eq!(
        differences(Some(&a), Some(&b), &with(&["ERR-3.2"])),
        ["ERR-3", "ZZZ-2"],
        "the second repetition's first component still differs"
    );
    assert_eq!(
        differences(
            Some(&a),
            Some(&b),
            &with(&["ERR-3(*).2", "ERR-3(2)", "ZZZ(*)-2"])
        ),
        Vec::<String>::new()
    );
    assert_eq!(
        differences(Some(&a), Some(&b), &with(&["ERR", "ZZZ"])),
        Vec::<String>::new()
    );
    assert_eq!(differences(Some(&a), Some(&b), &with(&["ZZZ"])), ["ERR-3"]);
}

/// A model of the default comparison: split by the default separators, trailing empties cut,
/// no escapes (the alphabet has none).
fn model(a: &str, b: &str) -> Vec<String> {
    fn fields(ack: &str) -> BTreeMap<(String, usize, usize), String> {
        let mut out = BTreeMap::new();
        let mut seen: BTreeMap<String, usize> = BTreeMap::new();
        for segment in ack.split('\r').filter(|s| !s.is_empty()) {
            let mut parts = segment.split('|');
            let name = parts.next().unwrap().to_string();
            let n = *seen
                .entry(name.clone())
                .and_modify(|n| *n += 1)
                .or_insert(1);
            for (i, f) in parts.enumerate() {
                let field = i + 1;
                let keep = match name.as_str() {
                    "MSA" => n == 1 && (field == 1 || field == 3),
                    "ERR" => true,
                    _ => false,
                };
                // Empty components and repetitions carry nothing.
                let meaningful: String = f.split(['~', '^', '&']).collect::<Vec<_>>().join("\u{1}");
                let meaningful = meaningful.trim_end_matches('\u{1}').to_string();
                if keep && !meaningful.replace('\u{1}', "").is_empty() {
                    out.insert((name.clone(), n, field), f.to_string());
                }
            }
        }
        out
    }
    let (a, b) = (fields(a), fields(b));
    let keys: BTreeSet<_> = a.keys().chain(b.keys()).collect();
    keys.into_iter()
        .filter(|k| {
            let norm = |v: Option<&String>| -> Vec<Vec<String>> {
                v.map(|v| {
                    v.split('~')
                        .map(|r| {
                            let mut c: Vec<String> = r
                                .split('^')
                                .map(|c| c.trim_end_matches('&').to_string())
                                .collect();
                            while c.last().is_some_and(|c| c.is_empty()) {
                                c.pop();
                            }
                            c
                        })
                        .collect()
                })
                .map(|mut r: Vec<Vec<String>>| {
                    while r.last().is_some_and(|r| r.is_empty()) {
                        r.pop();
                    }
                    r
                })
                .unwrap_or_default()
            };
            norm(a.get(*k)) != norm(b.get(*k))
        })
        .map(|(name, n, field)| match n {
            1 => format!("{name}-{field}"),
            n => format!("{name}({n})-{field}"),
        })
        .collect()
}

fn arb_ack() -> impl Strategy<Value = String> {
    let value = "[ab]{0,2}(\\^[ab]{0,1}){0,2}";
    let msa = proptest::collection::vec(value, 1..4).prop_map(|f| format!("MSA|{}", f.join("|")));
    let err = proptest::collection::vec(value, 0..5).prop_map(|f| format!("ERR|{}", f.join("|")));
    (msa, proptest::collection::vec(err, 0..3)).prop_map(|(msa, errs)| {
        let mut s = format!("MSH|^~\\&|A|B|C|D|1||ACK|X|P|2.5\r{msa}\r");
        for e in errs {
            s.push_str(&e);
            s.push('\r');
        }
        s
    })
}

proptest! {
    #[test]
    fn the_default_comparison_agrees_with_the_model(a in arb_ack(), b in arb_ack()) {
        let mut got = answer(a.as_bytes(), b.as_bytes());
        let mut want = model(&a, &b);
        got.sort();
        want.sort();
        prop_assert_eq!(got, want);
    }
}

#[test]
fn the_same_answer_bytes_skip_the_decoding_and_other_delimiters_do_not() {
    let other = ack("20990101", "S9", "AA|C1|fine", "");
    assert!(same_answer_bytes(AA, &other));
    let other_delimiters = b"MSH|^~\\!|UP|F|RELAY|F|1||ACK^A01|U1|P|2.5\rMSA|AA|C1|fine\r";
    assert!(!same_answer_bytes(AA, other_delimiters));
    let text = ack("1", "1", "AA|C1|other", "");
    assert!(!same_answer_bytes(AA, &text));
}

/// An answer with a header of one of a few delimiter sets, its MSA and ERR segments (values
/// holding delimiters and escapes), and sometimes a second header declaring others.
fn arb_delimited_ack() -> impl Strategy<Value = Vec<u8>> {
    let header = prop_oneof![
        Just("MSH|^~\\&"),
        Just("MSH#^~\\&"),
        Just("MSH|!~\\&"),
        Just("MSH|^~/&"),
    ];
    let value = "[ab|#^!~&/\\\\]{0,4}";
    let segment = (
        prop_oneof![Just("MSA"), Just("ERR"), Just("PID")],
        proptest::collection::vec(value, 0..4),
    )
        .prop_map(|(name, fields)| format!("{name}|{}", fields.join("|")));
    let part = prop_oneof![
        4 => segment,
        1 => header.clone().prop_map(|h| format!("{h}|X|Y")),
    ];
    (header, proptest::collection::vec(part, 0..5)).prop_map(|(header, parts)| {
        let mut s = format!("{header}|A|B|C|D|1||ACK|X|P|2.5\r");
        for part in parts {
            s.push_str(&part);
            s.push('\r');
        }
        s.into_bytes()
    })
}

proptest! {
    #[test]
    fn answers_the_same_by_their_bytes_are_the_same_decoded(
        a in arb_delimited_ack(),
        b in arb_delimited_ack(),
        twin in any::<bool>(),
    ) {
        // Half the time the same answer from another engine: the case the shortcut is for.
        let b = if twin {
            let mut b = a.clone();
            b.splice(16..16, *b"Z");
            b
        } else {
            b
        };
        if same_answer_bytes(&a, &b) {
            prop_assert!(decoded_differences(Some(&a), Some(&b), &Compare::Answer).is_empty());
        }
        let both = differences(Some(&a), Some(&b), &Compare::Answer);
        prop_assert_eq!(both, decoded_differences(Some(&a), Some(&b), &Compare::Answer));
    }
}
