//! What a run replaces: no original identifier left, one person per patient under one key,
//! dates moved alike, well-formed messages staying well formed.

use super::{deid, get, messages, new_key, write_traffic};
use mllp::hl7::check::{Checker, Severity};
use std::collections::BTreeMap;
use std::ffi::OsStr;

fn errors(message: &[u8]) -> Vec<String> {
    Checker::default()
        .check(message)
        .into_iter()
        .filter(|f| f.severity == Severity::Error)
        .map(|f| format!("{} {}", f.code.as_str(), f.at))
        .collect()
}

/// Every output file's messages, by control ID.
fn by_control_id(dir: &std::path::Path) -> BTreeMap<String, Vec<u8>> {
    let mut all = BTreeMap::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let bytes = std::fs::read(entry.unwrap().path()).unwrap();
        for m in messages(&bytes) {
            all.insert(get(&m, "MSH-10"), m);
        }
    }
    all
}

#[test]
fn no_original_identifier_is_left_and_the_rest_stays() {
    let dir = tempfile::tempdir().unwrap();
    let (patients, input) = write_traffic(dir.path(), 43, 25);
    let key = new_key(dir.path(), "site.key");
    let out = dir.path().join("out");
    let run = deid(&[
        input.as_os_str(),
        OsStr::new("-r"),
        OsStr::new("--key-file"),
        key.as_os_str(),
        OsStr::new("--out"),
        out.as_os_str(),
    ]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(
        run.stderr
            .contains("100 messages read, 100 written to 4 files"),
        "{}",
        run.stderr
    );

    let mut text = String::new();
    for kind in ["a01", "a02", "a08", "a03"] {
        text.push_str(
            &String::from_utf8(std::fs::read(out.join(format!("{kind}.hl7"))).unwrap()).unwrap(),
        );
    }
    // Every value of the output, to compare identifiers made only of digits with whole values.
    let values: std::collections::HashSet<&str> = text.split(['|', '^', '~', '&', '\r']).collect();
    for patient in &patients {
        for id in patient.identifiers().iter().filter(|id| id.len() >= 4) {
            // A moved date may land on another patient's date: dates are checked where they
            // stand, below.
            let date = id.len() == 8 && id.bytes().all(|b| b.is_ascii_digit());
            assert!(
                date || !values.contains(id.as_str()),
                "{id} left as a value"
            );
            // Letters, or digits long enough never to turn up by chance: nowhere at all.
            if id.bytes().any(|b| b.is_ascii_alphabetic()) || id.len() >= 10 {
                assert!(!text.contains(id.as_str()), "{id} left in the output");
            }
            assert!(!run.stderr.contains(id.as_str()), "{id} in the report");
        }
    }
    // Everything but the replaced values as it was: headers, codes, structure, well-formedness.
    let before = by_control_id(&input);
    let after = by_control_id(&out);
    assert_eq!(before.len(), 100);
    assert_eq!(
        before.keys().collect::<Vec<_>>(),
        after.keys().collect::<Vec<_>>()
    );
    for (id, original) in &before {
        let replaced = &after[id];
        assert_eq!(errors(original), Vec::<String>::new(), "{id}");
        assert_eq!(errors(replaced), Vec::<String>::new(), "{id}");
        let first = |m: &[u8]| m.split(|&b| b == b'\r').next().unwrap().to_vec();
        assert_eq!(first(original), first(replaced), "MSH of {id}");
        for moved in ["PID-7", "NK1-16", "GT1-8", "IN1-18", "PV1-44", "PV1-45"] {
            let date = get(original, moved);
            assert!(
                date.is_empty() || date != get(replaced, moved),
                "{moved} of {id}"
            );
        }
        for kept in [
            "EVN-2", "PID-3.4", "PID-3.5", "PID-8", "PID-11.4", "PID-11.6", "PV1-2", "PV1-3",
            "PV1-10", "NK1-3", "GT1-11", "IN1-4", "OBX-3",
        ] {
            assert_eq!(get(original, kept), get(replaced, kept), "{kept} of {id}");
        }
        let segments = |m: &[u8]| {
            m.split(|&b| b == b'\r')
                .map(|s| s.get(..3).unwrap_or_default().to_vec())
                .collect::<Vec<_>>()
        };
        assert_eq!(segments(original), segments(replaced));
    }
}

#[test]
fn one_patient_stays_one_person_across_messages_files_and_runs_under_one_key() {
    let dir = tempfile::tempdir().unwrap();
    let (patients, input) = write_traffic(dir.path(), 7, 6);
    let key = new_key(dir.path(), "site.key");
    let other = new_key(dir.path(), "other.key");
    let run_with = |key: &std::path::Path, name: &str| {
        let out = dir.path().join(name);
        let run = deid(&[
            input.as_os_str(),
            OsStr::new("-r"),
            OsStr::new("--key-file"),
            key.as_os_str(),
            OsStr::new("--out"),
            out.as_os_str(),
        ]);
        assert_eq!(run.code, 0, "{}", run.stderr);
        by_control_id(&out)
    };
    let first = run_with(&key, "first");
    let again = run_with(&key, "again");
    let another = run_with(&other, "another");
    assert_eq!(first, again, "the same key, the same output");
    let person = |m: &[u8]| {
        [
            "PID-3.1", "PID-5.1", "PID-5.2", "PID-7", "PID-11.1", "PID-13.1", "PID-19", "PV1-19.1",
            "PV1-7.2",
        ]
        .map(|p| get(m, p))
    };
    let mut same_name = 0;
    for (i, patient) in patients.iter().enumerate() {
        // A01, A02, A08, A03: four files, one person.
        let ids: Vec<String> = (0..4).map(|k| format!("MSG{:08}", 1 + 4 * i + k)).collect();
        let people: Vec<_> = ids.iter().map(|id| person(&first[id])).collect();
        assert!(people.iter().all(|p| *p == people[0]), "{people:?}");
        assert_ne!(people[0][0], patient.mrn);
        // The guarantor's account is the patient's account, replaced alike.
        assert_eq!(
            get(&first[&ids[0]], "GT1-2.1"),
            get(&first[&ids[0]], "PID-18.1")
        );
        let elsewhere = person(&another[&ids[0]]);
        for (n, (a, b)) in people[0].iter().zip(&elsewhere).enumerate() {
            // A name is drawn from a list: two keys can draw the same one by chance.
            match n {
                1 | 2 | 8 => same_name += usize::from(a == b),
                _ => assert_ne!(a, b, "another key gave the same replacement"),
            }
        }
    }
    assert!(
        same_name * 10 <= patients.len() * 3,
        "another key gave the same names {same_name} times in {}",
        patients.len() * 3
    );
}

#[test]
fn dates_of_one_patient_move_alike() {
    let dir = tempfile::tempdir().unwrap();
    let (patients, input) = write_traffic(dir.path(), 11, 12);
    let key = new_key(dir.path(), "site.key");
    let out = dir.path().join("out");
    let run = deid(&[
        input.as_os_str(),
        OsStr::new("-r"),
        OsStr::new("--key-file"),
        key.as_os_str(),
        OsStr::new("--out"),
        out.as_os_str(),
    ]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let after = by_control_id(&out);
    let day = |v: &str| {
        let d = time::Date::from_calendar_date(
            v[0..4].parse().unwrap(),
            time::Month::try_from(v[4..6].parse::<u8>().unwrap()).unwrap(),
            v[6..8].parse().unwrap(),
        )
        .unwrap();
        d.to_julian_day()
    };
    let mut offsets = std::collections::HashSet::new();
    for (i, p) in patients.iter().enumerate() {
        let a03 = &after[&format!("MSG{:08}", 4 + 4 * i)];
        let (dob, admit, discharge, kin) = (
            get(a03, "PID-7"),
            get(a03, "PV1-44"),
            get(a03, "PV1-45"),
            get(&after[&format!("MSG{:08}", 1 + 4 * i)], "NK1-16"),
        );
        // Intervals as they were; the time of day kept.
        assert_eq!(day(&discharge) - day(&admit), p.stay as i32);
        assert_eq!(day(&admit) - day(&dob), day(&p.admit()) - day(&p.dob));
        assert_eq!(day(&kin) - day(&dob), day(&p.kin.2) - day(&p.dob));
        assert_eq!(&admit[8..], "0815");
        let shift = day(&dob) - day(&p.dob);
        assert!((-365..=-1).contains(&shift), "{shift}");
        offsets.insert(shift);
    }
    assert!(offsets.len() > 1, "one offset for every patient");
}
