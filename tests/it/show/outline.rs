//! `show` without `--get`: each message as an outline of its non-empty fields with their names,
//! components under them with -v, JSON with --json; text by MSH-18; a broken input shown as far
//! as it goes.

use super::{adt, three};
use crate::support::mllp;
use crate::support::no_payload::MARKER;

#[test]
fn an_outline_names_each_field_and_leaves_empty_ones_out() {
    let dir = tempfile::tempdir().unwrap();
    let file = three(dir.path());
    let out = mllp().arg("show").arg(&file).output().unwrap();
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).unwrap();
    let first: Vec<&str> = text.split("\n\n").next().unwrap().lines().collect();
    assert!(
        first[0].ends_with("adt.hl7#1  ADT^A01^ADT_A01  C1"),
        "{first:?}"
    );
    let line = |path: &str| {
        first
            .iter()
            .find(|l| l.split_whitespace().next() == Some(path))
            .unwrap_or_else(|| panic!("no {path} in {first:?}"))
            .split_whitespace()
            .collect::<Vec<_>>()
            .join(" ")
    };
    assert_eq!(line("MSH-3"), "MSH-3 Sending Application LAB");
    assert_eq!(line("PID-5"), "PID-5 Patient Name DOE^ANNA");
    assert_eq!(
        line("PID-3"),
        "PID-3 Patient Identifier List 100001^^^H^MR~77^^^S"
    );
    assert_eq!(line("OBX(2)-5"), "OBX(2)-5 Observation Value 140");
    // Empty fields (PID-2, MSH-8) have no line.
    assert!(!first.iter().any(|l| l.trim_start().starts_with("PID-2 ")));
    assert!(!first.iter().any(|l| l.trim_start().starts_with("MSH-8 ")));
    assert_eq!(text.matches("adt.hl7#").count(), 3);
    // No colour off a terminal.
    assert!(!text.contains('\x1b'));
}

#[test]
fn components_come_under_their_field_with_v() {
    let dir = tempfile::tempdir().unwrap();
    let file = three(dir.path());
    let out = mllp().args(["show", "-v"]).arg(&file).output().unwrap();
    let text = String::from_utf8(out.stdout).unwrap();
    let second = text.split("\n\n").nth(1).unwrap();
    let words: Vec<Vec<&str>> = second
        .lines()
        .map(|l| l.split_whitespace().collect())
        .collect();
    let at = words.iter().position(|w| w[0] == "PID-5").unwrap();
    // The field as written, then its components decoded: `\S\` is a `^` of the name itself.
    assert_eq!(words[at][3], format!("O\\S\\{MARKER}^ANNA"));
    assert_eq!(words[at + 1], ["PID-5.1", &format!("O^{MARKER}")]);
    assert_eq!(words[at + 2], ["PID-5.2", "ANNA"]);
    assert!(words.iter().any(|w| w == &["PID-3(2).1", "77"]));
}

#[test]
fn json_gives_each_field_with_its_path_name_and_value() {
    let dir = tempfile::tempdir().unwrap();
    let file = three(dir.path());
    let out = mllp().args(["show", "--json"]).arg(&file).output().unwrap();
    assert!(out.status.success());
    let records: Vec<serde_json::Value> = String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(records.len(), 3);
    assert_eq!(records[0]["control_id"], "C1");
    assert_eq!(records[0]["message_type"], "ADT^A01^ADT_A01");
    let fields = records[0]["fields"].as_array().unwrap();
    let pid5 = fields.iter().find(|f| f["path"] == "PID-5").unwrap();
    assert_eq!(pid5["name"], "Patient Name");
    assert_eq!(pid5["value"], "DOE^ANNA");
}

#[test]
fn text_is_read_in_the_charset_msh18_names_and_what_does_not_decode_is_escaped_and_warned() {
    let dir = tempfile::tempdir().unwrap();
    let latin = dir.path().join("latin.hl7");
    let msh18 = adt("L1", "1", "M\u{fc}LLER").replace("|P|2.5.1", "|P|2.5.1||||||8859/1");
    // The name in ISO 8859-1: one byte for the u-umlaut.
    let bytes: Vec<u8> = msh18.chars().map(|c| c as u32 as u8).collect();
    std::fs::write(&latin, &bytes).unwrap();
    let out = mllp()
        .args(["show", "--get", "PID-5.1"])
        .arg(&latin)
        .output()
        .unwrap();
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.ends_with("\tMüLLER\n"), "{text:?}");
    assert!(
        out.stderr.is_empty(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );

    // The same bytes read as UTF-8 do not decode: escaped, kept, warned about once.
    let out = mllp()
        .args(["show", "--get", "PID-5.1", "--charset", "UTF-8"])
        .arg(&latin)
        .output()
        .unwrap();
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.ends_with("\tM\\\\XFC\\\\LLER\n"), "{text:?}");
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert!(stderr.contains("MLLP_TEXT_NOT_IN_CHARSET"), "{stderr}");
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
}

#[test]
fn a_broken_input_is_shown_as_far_as_it_goes_then_exit_2() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("cut.hl7");
    // A good message, then one with a VT inside: the input cannot be read on.
    let text = format!(
        "{}{}PID|1\x0b2\r",
        adt("G1", "1", "DOE"),
        adt("G2", "2", "DOE")
    );
    std::fs::write(&file, text).unwrap();
    let out = mllp()
        .args(["show", "--get", "MSH-10"])
        .arg(&file)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8(out.stdout).unwrap().ends_with("#1\tG1\n"));
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert!(stderr.contains("what came before it was shown"), "{stderr}");

    // A message that is not well formed is still shown, with one warning.
    let odd = dir.path().join("odd.hl7");
    std::fs::write(&odd, adt("B1", "1", "DOE") + "this is not a segment\r").unwrap();
    let out = mllp()
        .args(["show", "--get", "MSH-10"])
        .arg(&odd)
        .output()
        .unwrap();
    assert!(out.status.success());
    assert!(String::from_utf8(out.stdout).unwrap().ends_with("\tB1\n"));
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert!(stderr.contains("mllp check says what is wrong"), "{stderr}");
}
