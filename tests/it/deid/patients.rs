//! Whose offset a date moves by, and one name however it is written: each PID its own patient,
//! the record number (MR) before the order of PID-3; names compared as text in any case and
//! character set, an initial kept an initial.

use super::{deid, get, messages, new_key};
use std::ffi::OsStr;
use std::path::Path;

/// `input` (bytes) de-identified under `key`: the output's messages.
fn run(dir: &Path, key: &Path, name: &str, input: &[u8]) -> Vec<Vec<u8>> {
    let file = dir.join(name);
    std::fs::write(&file, input).unwrap();
    let run = deid(&[
        file.as_os_str(),
        OsStr::new("--key-file"),
        key.as_os_str(),
        OsStr::new("--out"),
        OsStr::new("-"),
    ]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    messages(run.stdout.as_bytes())
}

fn segment(message: &[u8], name: &str, n: usize) -> String {
    let text = String::from_utf8_lossy(message);
    text.split('\r')
        .filter(|s| s.starts_with(name))
        .nth(n)
        .unwrap()
        .to_string()
}

#[test]
fn each_pid_moves_its_own_patients_dates_and_mr_names_the_patient() {
    let dir = tempfile::tempdir().unwrap();
    let key = new_key(dir.path(), "k.key");
    let a17 = run(dir.path(), &key, "a17.hl7",
        b"MSH|^~\\&|A|B|C|D|2024||ADT^A17|SW1|P|2.5\rEVN|A17|2024\rPID|1||PATA111^^^H^MR||ALPHA^ANN||19700101\rPV1|1|I\rPID|2||PATB222^^^H^MR||BETA^BOB||19800101\rPV1|1|I\r");
    let a08 = run(dir.path(), &key, "a08.hl7",
        b"MSH|^~\\&|A|B|C|D|2024||ADT^A08|UP1|P|2.5\rEVN|A08|2024\rPID|1||PATB222^^^H^MR||BETA^BOB||19800101\rPV1|1|I\r");
    let birth = |pid: String| pid.split('|').nth(7).unwrap().to_string();
    assert_eq!(
        birth(segment(&a17[0], "PID", 1)),
        birth(segment(&a08[0], "PID", 0)),
        "patient B's birth date alike in the A17 and the A08"
    );
    // The record number first or second in PID-3: one patient, one offset.
    let first = run(dir.path(), &key, "x.hl7",
        b"MSH|^~\\&|A|B|C|D|2024||ADT^A01|X1|P|2.5\rPID|1||PATC333^^^H^MR~ACC9^^^H^AN||C^C||19900101\r");
    let second = run(dir.path(), &key, "y.hl7",
        b"MSH|^~\\&|A|B|C|D|2024||ADT^A08|X2|P|2.5\rPID|1||ACC9^^^H^AN~PATC333^^^H^MR||C^C||19900101\r");
    assert_eq!(get(&first[0], "PID-7"), get(&second[0], "PID-7"));
}

#[test]
fn a_name_is_one_person_in_any_case_and_character_set_and_an_initial_stays_one() {
    let dir = tempfile::tempdir().unwrap();
    let key = new_key(dir.path(), "k.key");
    let utf8 = run(
        dir.path(),
        &key,
        "u.hl7",
        "MSH|^~\\&|A|B|C|D|2024||ADT^A01|C1|P|2.5||||||UNICODE UTF-8\rPID|1||M1^^^H||Müller^É^Ö.\r"
            .as_bytes(),
    );
    let upper = run(
        dir.path(),
        &key,
        "up.hl7",
        "MSH|^~\\&|A|B|C|D|2024||ADT^A01|C2|P|2.5||||||UNICODE UTF-8\rPID|1||M1^^^H||MÜLLER^J\r"
            .as_bytes(),
    );
    let latin1 = run(
        dir.path(),
        &key,
        "l1.hl7",
        b"MSH|^~\\&|A|B|C|D|2024||ADT^A01|C3|P|2.5||||||8859/1\rPID|1||M1^^^H||M\xfcller^J\r",
    );
    let name = |m: &[u8]| get(m, "PID-5.1").to_uppercase();
    assert_eq!(name(&utf8[0]), name(&upper[0]));
    assert_eq!(name(&utf8[0]), name(&latin1[0]));
    let given = get(&utf8[0], "PID-5.2");
    assert_eq!(given.chars().count(), 1, "an initial stays one: {given}");
    assert_ne!(given, "É");
    let middle = get(&utf8[0], "PID-5.3");
    assert!(middle.len() == 2 && middle.ends_with('.'), "{middle}");
}
