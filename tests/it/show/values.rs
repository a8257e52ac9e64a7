//! `show --get`: one line per message, the source then each value, tab-separated, escaped;
//! `*` paths give a column per occurrence; `--json` an object per message; a malformed path is
//! a usage error naming its character.

use super::three;
use crate::support::mllp;
use crate::support::no_payload::MARKER;

#[test]
fn one_line_per_message_with_each_value() {
    let dir = tempfile::tempdir().unwrap();
    let file = three(dir.path());
    let out = mllp()
        .args([
            "show", "--get", "PID-3.1", "--get", "PID-5", "--get", "PV1-2",
        ])
        .arg(&file)
        .output()
        .unwrap();
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).unwrap();
    let lines: Vec<Vec<&str>> = text.lines().map(|l| l.split('\t').collect()).collect();
    assert_eq!(lines.len(), 3);
    assert!(lines[0][0].ends_with("adt.hl7#1"));
    // A path that names nothing gives an empty value, never an error.
    assert_eq!(&lines[0][1..], ["100001", "DOE^ANNA", ""]);
    // A value with parts is as written; its backslashes are escaped for the line.
    assert_eq!(lines[1][2], format!("O\\\\S\\\\{MARKER}^ANNA"));
    assert!(out.stderr.is_empty());
}

#[test]
fn every_occurrence_is_a_column_and_escaped_breaks_stay_on_the_line() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("obx.hl7");
    std::fs::write(
        &file,
        "MSH|^~\\&|A|B|C|D|20240101||ORU^R01|K1|P|2.5\rOBX|1|TX|N||line\\.br\\two\\X09\\end\r\
         OBX|2|NM|X||7\r",
    )
    .unwrap();
    let out = mllp()
        .args(["show", "--get", "OBX(*)-5", "--get", "OBX(*)-1"])
        .arg(&file)
        .output()
        .unwrap();
    let text = String::from_utf8(out.stdout).unwrap();
    let cells: Vec<&str> = text.trim_end().split('\t').collect();
    assert_eq!(&cells[1..], ["line\\rtwo\\tend", "7", "1", "2"]);

    let out = mllp()
        .args(["show", "--json", "--get", "OBX(*)-5", "--get", "MSH-9.2"])
        .arg(&file)
        .output()
        .unwrap();
    let record: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(record["control_id"], "K1");
    assert_eq!(
        record["values"]["OBX(*)-5"],
        serde_json::json!(["line\rtwo\tend", "7"])
    );
    assert_eq!(record["values"]["MSH-9.2"], "R01");
}

#[test]
fn raw_leaves_escape_sequences_as_written() {
    let dir = tempfile::tempdir().unwrap();
    let file = three(dir.path());
    let out = mllp()
        .args(["show", "--raw", "--get", "PID-5.1"])
        .arg(&file)
        .output()
        .unwrap();
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.contains(&format!("\tO\\\\S\\\\{MARKER}\n")), "{text}");
}

#[test]
fn a_malformed_path_is_a_usage_error_naming_its_character() {
    for (path, said) in [
        ("PID-x", "`x` at character 5"),
        ("pid-5", "`p` at character 1"),
        ("PID.5", "`.` at character 4"),
    ] {
        let out = mllp()
            .args(["show", "-", "--get", path])
            .write_stdin("")
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{path}");
        let stderr = String::from_utf8(out.stderr).unwrap();
        assert!(stderr.contains(said), "{path}: {stderr}");
        assert!(stderr.contains("--get"), "{stderr}");
    }
}
