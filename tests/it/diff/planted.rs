//! A generated set and a copy written otherwise (line ends, trailing separators, escapes,
//! order, files), with known differences planted: exactly those are found.

use super::diff;
use crate::support::adt::{traffic, Rng};
use serde_json::Value;
use std::collections::BTreeSet;
use std::ffi::OsStr;

fn s(text: &str) -> &OsStr {
    OsStr::new(text)
}

/// The same message written otherwise: CRLF, trailing empty fields and components, a letter
/// escaped, segments of another name moved.
fn rewritten(message: &str, rng: &mut Rng) -> String {
    let mut segments: Vec<String> = message
        .trim_end_matches('\r')
        .split('\r')
        .map(String::from)
        .collect();
    for seg in segments.iter_mut() {
        match rng.below(4) {
            0 => seg.push_str("|||"),
            1 => seg.push_str("^^"),
            _ => {}
        }
        if seg.starts_with("EVN") {
            // `\X41\` is an A.
            *seg = seg.replacen("|A0", "|\\X41\\0", 1);
        }
    }
    // GT1 and IN1 after NK1 moved to the end: segments pair by name, not by place.
    if let Some(at) = segments.iter().position(|s| s.starts_with("NK1")) {
        let nk1 = segments.remove(at);
        segments.push(nk1);
    }
    segments.join("\r\n") + "\r\n"
}

/// A planted difference: key, path, A's value, B's.
type Planted = BTreeSet<(String, String, String, String)>;

fn findings(
    records: &[Value],
) -> (
    Planted,
    BTreeSet<String>,
    BTreeSet<String>,
    BTreeSet<String>,
) {
    let mut different = Planted::new();
    let (mut only_a, mut only_b, mut twice) = (BTreeSet::new(), BTreeSet::new(), BTreeSet::new());
    for r in records {
        let key = r["key"]["MSH-10"].as_str().unwrap_or_default().to_string();
        match r["type"].as_str().unwrap() {
            "different" => {
                for d in r["differences"].as_array().unwrap() {
                    let text = |v: &Value| v.as_str().unwrap().to_string();
                    different.insert((key.clone(), text(&d["path"]), text(&d["a"]), text(&d["b"])));
                }
            }
            "only_in_a" => drop(only_a.insert(key)),
            "only_in_b" => drop(only_b.insert(key)),
            "key_twice" => drop(twice.insert(format!("{} {key}", r["side"].as_str().unwrap()))),
            "summary" => {}
            other => panic!("record {other}"),
        }
    }
    (different, only_a, only_b, twice)
}

#[test]
fn planted_differences_are_found_and_nothing_else() {
    let dir = tempfile::tempdir().unwrap();
    let (_, messages) = traffic(17, 60);
    let mut rng = Rng::new(99);
    let mut a = String::new();
    let (b_dir, mut b_one, mut b_two) = (dir.path().join("b"), String::new(), String::new());
    let mut planted = Planted::new();
    let (mut only_a, mut only_b) = (BTreeSet::new(), BTreeSet::new());
    for (i, (_, m)) in messages.iter().enumerate() {
        a.push_str(m);
        let id = format!("MSG{:08}", i + 1);
        let mut copy = m.clone();
        match i % 10 {
            // A given name changed.
            3 => {
                let given = crate::deid::get(m.as_bytes(), "PID-5.2");
                copy = copy.replacen(&format!("^{given}^Q"), "^CHANGED^Q", 1);
                planted.insert((id.clone(), "PID-5.2".into(), given, "CHANGED".into()));
            }
            // The bed, a component of PV1-3.
            5 => {
                let bed = crate::deid::get(m.as_bytes(), "PV1-3.2");
                copy = copy.replacen(&format!("|W^{bed}^1|"), "|W^999^1|", 1);
                planted.insert((id.clone(), "PV1-3.2".into(), bed, "999".into()));
            }
            // A field the other engine leaves empty, and one it adds.
            6 => {
                copy = copy.replacen("|F|||", "||||", 1).replacen(
                    "\rPV1|1|",
                    "\rZXX|extra\rPV1|1|",
                    1,
                );
                planted.insert((id.clone(), "PID-8".into(), "F".into(), String::new()));
                planted.insert((id.clone(), "ZXX-1".into(), String::new(), "extra".into()));
            }
            // Gone from B.
            7 => {
                only_a.insert(id);
                continue;
            }
            _ => {}
        }
        let copy = rewritten(&copy, &mut rng);
        if i % 2 == 0 {
            b_two.push_str(&copy)
        } else {
            b_one.push_str(&copy)
        }
    }
    // New in B, and one key twice in B.
    let extra = messages[0].1.replace("MSG00000001", "MSG99999999");
    b_two.push_str(&extra);
    only_b.insert("MSG99999999".to_string());
    b_two.push_str(&messages[1].1);
    only_b.insert("MSG00000002".to_string());
    let a_file = dir.path().join("a.hl7");
    std::fs::write(&a_file, &a).unwrap();
    std::fs::create_dir_all(&b_dir).unwrap();
    std::fs::write(b_dir.join("one.hl7"), b_one).unwrap();
    std::fs::write(b_dir.join("two.hl7"), b_two).unwrap();

    let run = diff(&[a_file.as_os_str(), b_dir.as_os_str(), s("--json")]);
    assert_eq!(run.code, 1, "{}", run.stderr);
    let records = run.records();
    let (different, found_a, found_b, twice) = findings(&records);
    assert_eq!(different, planted);
    assert_eq!(found_a, only_a);
    assert_eq!(found_b, only_b);
    assert_eq!(twice, BTreeSet::from(["b MSG00000002".to_string()]));
    let summary = &records[records.len() - 1];
    assert_eq!(summary["type"], "summary");
    assert_eq!(summary["different"], 72);
    assert_eq!(summary["same"], 240 - 72 - 24);
    assert_eq!(
        (summary["only_in_a"].as_u64(), summary["only_in_b"].as_u64()),
        (Some(24), Some(2))
    );
    assert_eq!(summary["exit_code"], 1);

    // The other way round: the same findings, sides swapped; B indexed as the smaller side.
    let run = diff(&[b_dir.as_os_str(), a_file.as_os_str(), s("--json")]);
    let (swapped, found_a, found_b, _) = findings(&run.records());
    let back: Planted = swapped
        .into_iter()
        .map(|(k, p, a, b)| (k, p, b, a))
        .collect();
    assert_eq!(back, planted);
    assert_eq!((found_a, found_b), (only_b, only_a));

    // Only the planted paths left out: the same sets, apart from what was gone or new.
    let run = diff(&[
        a_file.as_os_str(),
        b_dir.as_os_str(),
        s("--ignore"),
        s("PID-5.2"),
        s("--ignore"),
        s("PV1-3"),
        s("--ignore"),
        s("PID-8"),
        s("--ignore"),
        s("ZXX"),
        s("--json"),
    ]);
    let summary = run.summary();
    assert_eq!(
        (summary["different"].as_u64(), summary["same"].as_u64()),
        (Some(0), Some(240 - 24))
    );

    // A set against itself written otherwise: the same, exit 0.
    let same = dir.path().join("same.hl7");
    let mut rng = Rng::new(5);
    std::fs::write(
        &same,
        messages
            .iter()
            .map(|(_, m)| rewritten(m, &mut rng))
            .collect::<String>(),
    )
    .unwrap();
    let run = diff(&[a_file.as_os_str(), same.as_os_str()]);
    assert_eq!(run.code, 0, "{}\n{}", run.stdout, run.stderr);
    assert!(run.stdout.is_empty(), "{}", run.stdout);
    assert!(
        run.stderr
            .contains("240 pairs the same, 0 different, 0 only in A, 0 only in B"),
        "{}",
        run.stderr
    );
}

#[test]
fn engines_that_renumber_pair_by_other_paths() {
    let dir = tempfile::tempdir().unwrap();
    let (_, messages) = traffic(23, 10);
    let a: String = messages.iter().map(|(_, m)| m.as_str()).collect();
    // The new engine numbers its own control IDs and stamps its own time.
    let b: String = messages
        .iter()
        .enumerate()
        .map(|(i, (_, m))| {
            let ts = crate::deid::get(m.as_bytes(), "MSH-7");
            m.replacen(&format!("MSG{:08}", i + 1), &format!("NEW{i}"), 1)
                .replacen(&format!("|{ts}||"), "|20991231235959||", 1)
        })
        .collect();
    let (fa, fb) = (dir.path().join("a.hl7"), dir.path().join("b.hl7"));
    std::fs::write(&fa, a).unwrap();
    std::fs::write(&fb, b).unwrap();
    let run = diff(&[fa.as_os_str(), fb.as_os_str()]);
    assert_eq!(run.code, 1);
    assert!(
        run.stderr
            .contains("0 pairs the same, 0 different, 40 only in A, 40 only in B"),
        "{}",
        run.stderr
    );
    let run = diff(&[
        fa.as_os_str(),
        fb.as_os_str(),
        s("--key"),
        s("PID-3.1"),
        s("--key"),
        s("MSH-9"),
        s("--ignore"),
        s("MSH-10"),
        s("--ignore"),
        s("MSH-7"),
    ]);
    assert_eq!(run.code, 0, "{}\n{}", run.stdout, run.stderr);
    assert!(run.stderr.contains("40 pairs the same"), "{}", run.stderr);
    // Without MSH-7 ignored: each pair differs there alone, the key shown by path.
    let run = diff(&[
        fa.as_os_str(),
        fb.as_os_str(),
        s("--key"),
        s("PID-3.1"),
        s("--key"),
        s("MSH-9"),
        s("--ignore"),
        s("MSH-10"),
    ]);
    assert_eq!(run.code, 1);
    let first = run.stdout.lines().next().unwrap();
    assert!(
        first.starts_with("PID-3.1=") && first.contains(" MSH-9=ADT^A01^ADT_A01  differs  "),
        "{first}"
    );
    assert_eq!(
        run.stdout
            .lines()
            .filter(|l| l.starts_with("  MSH-7  "))
            .count(),
        40
    );
}

#[test]
fn no_values_for_logs_and_usage_errors_named() {
    use crate::support::no_payload::MARKER;
    let dir = tempfile::tempdir().unwrap();
    let m = "MSH|^~\\&|A|B|||20240101||ADT^A01|K1|P|2.5\rPID|1||123||NAME\r";
    let (fa, fb) = (dir.path().join("a.hl7"), dir.path().join("b.hl7"));
    std::fs::write(&fa, m.replace("NAME", MARKER)).unwrap();
    std::fs::write(&fb, m).unwrap();
    for json in [false, true] {
        let mut args = vec![fa.as_os_str(), fb.as_os_str(), s("--no-values")];
        if json {
            args.push(s("--json"));
        }
        let run = diff(&args);
        assert_eq!(run.code, 1);
        assert!(!run.stdout.contains(MARKER), "{}", run.stdout);
        assert!(run.stdout.contains("PID-5"), "{}", run.stdout);
    }
    // A key of patient values (an MRN) is a value too: under --no-values only the header's
    // control ID and type are shown of a key.
    let keyed = |id: &str, name: &str| {
        format!("MSH|^~\\&|A|B|||20240101||ADT^A08|C{id}|P|2.5\rPID|1||{MARKER}{id}||{name}\r")
    };
    let (ka, kb) = (dir.path().join("ka.hl7"), dir.path().join("kb.hl7"));
    std::fs::write(&ka, keyed("1", "DOE") + &keyed("2", "ROE")).unwrap();
    std::fs::write(&kb, keyed("1", "POE")).unwrap();
    for json in [false, true] {
        let mut args = vec![ka.as_os_str(), kb.as_os_str(), s("--no-values")];
        args.extend([s("--key"), s("PID-3.1"), s("--key"), s("MSH-9")]);
        if json {
            args.push(s("--json"));
        }
        let run = diff(&args);
        assert_eq!(run.code, 1, "{}", run.stderr);
        for out in [&run.stdout, &run.stderr] {
            assert!(!out.contains(MARKER), "{out}");
        }
        assert!(run.stdout.contains("ADT^A08"), "{}", run.stdout);
        assert!(run.stdout.contains("PID-3.1"), "{}", run.stdout);
        assert_eq!(run.stdout.lines().count(), 3, "{}", run.stdout);
    }
    for (args, says) in [
        (
            vec![fa.as_os_str(), fb.as_os_str(), s("--key"), s("PID-x")],
            "`x` at character 5",
        ),
        (
            vec![fa.as_os_str(), fb.as_os_str(), s("--ignore"), s("pid")],
            "upper-case",
        ),
        (
            vec![fa.as_os_str(), dir.path().join("nope").as_os_str()],
            "side B",
        ),
        (vec![s("-"), s("-")], "only one side"),
    ] {
        let run = diff(&args);
        assert_eq!(run.code, 2, "{args:?}");
        assert!(run.stderr.contains(says), "{args:?}: {}", run.stderr);
    }
}
