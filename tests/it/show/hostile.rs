//! `show` and `check` on input made to hurt a reader: a field of 10,000 repetitions, runs of
//! escape sequences, bytes that are not text in the character set MSH-18 names, a message over
//! the largest size, segments that end in LF or CRLF. Each is read whole or refused with a clear
//! error, nothing after it is lost, and no value reaches a diagnostic.

use crate::support::mllp;
use crate::support::no_payload::MARKER;

const MSH: &str = "MSH|^~\\&|A|B|C|D|20240101120000||ADT^A01|{id}|P|2.5";

fn header(id: &str) -> String {
    MSH.replace("{id}", id)
}

#[test]
fn ten_thousand_repetitions_give_ten_thousand_columns() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("reps.hl7");
    let ids: Vec<String> = (0..10_000).map(|i| format!("{i}^^^MR")).collect();
    let text = format!("{}\rPID|1||{}||DOE\r", header("R1"), ids.join("~"));
    std::fs::write(&file, text).unwrap();
    let out = mllp()
        .args(["show", "--get", "PID-3(*).1", "--get", "PID-5"])
        .arg(&file)
        .output()
        .unwrap();
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).unwrap();
    let cells: Vec<&str> = text.trim_end().split('\t').collect();
    assert_eq!(cells.len(), 1 + 10_000 + 1);
    assert_eq!(
        (cells[1], cells[10_000], cells[10_001]),
        ("0", "9999", "DOE")
    );
    let out = mllp().arg("check").arg(&file).output().unwrap();
    assert_eq!(out.status.code(), Some(0));
}

#[test]
fn runs_of_escapes_decode_and_a_broken_one_stays_as_written() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("esc.hl7");
    let field = format!(
        "{}\\X{}\\\\Xzz\\",
        "\\E\\".repeat(5_000),
        "41".repeat(5_000)
    );
    std::fs::write(&file, format!("{}\rNTE|1||{field}\r", header("E1"))).unwrap();
    let out = mllp()
        .args(["show", "--get", "NTE-3"])
        .arg(&file)
        .output()
        .unwrap();
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).unwrap();
    let value = text.trim_end().split('\t').nth(1).unwrap();
    // Each decoded backslash is escaped for the line; \Xzz\ is not hexadecimal: as written.
    let want = format!("{}{}\\\\Xzz\\\\", "\\\\".repeat(5_000), "A".repeat(5_000));
    assert_eq!(value, want);
}

#[test]
fn bytes_not_in_msh18s_charset_are_escaped_warned_and_checked_without_a_value() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("utf8.hl7");
    let mut bytes = format!("{}||||||UNICODE UTF-8\rPID|1||7||", header("U1")).into_bytes();
    bytes.extend_from_slice(b"D\xc3\x28E\xff^");
    bytes.extend_from_slice(MARKER.as_bytes());
    bytes.extend_from_slice(b"\r");
    std::fs::write(&file, &bytes).unwrap();
    let out = mllp()
        .args(["show", "--get", "PID-5.1"])
        .arg(&file)
        .output()
        .unwrap();
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.ends_with("\tD\\\\XC3\\\\(E\\\\XFF\\\\\n"), "{text:?}");
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert!(stderr.contains("MLLP_TEXT_NOT_IN_CHARSET"), "{stderr}");
    assert!(!stderr.contains(MARKER), "{stderr}");

    let out = mllp().arg("check").arg(&file).output().unwrap();
    assert_eq!(out.status.code(), Some(0), "a warning, not an error");
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(
        text.contains("PID-5  HL7_TEXT_NOT_IN_CHARSET  warning:"),
        "{text}"
    );
    assert!(!text.contains(MARKER), "{text}");
}

#[test]
fn a_message_over_the_largest_size_is_refused_by_name_after_the_ones_before_it() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("big.hl7");
    let big = format!(
        "{}\rOBX|1|ED|PDF||{}\r",
        header("B2"),
        MARKER.repeat(17 << 20 >> 4)
    );
    let text = format!("{}\rPID|1\r{big}", header("B1"));
    std::fs::write(&file, text).unwrap();
    let out = mllp()
        .args(["show", "--get", "MSH-10"])
        .arg(&file)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8(out.stdout).unwrap().ends_with("#1\tB1\n"));
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert!(
        stderr.contains("larger than the maximum message size")
            && stderr.contains("--max-frame-size"),
        "{stderr}"
    );
    assert!(!stderr.contains(MARKER));
    // Read with a larger maximum, it is shown.
    let out = mllp()
        .args(["show", "--get", "MSH-10", "--max-frame-size", "32MiB"])
        .arg(&file)
        .output()
        .unwrap();
    assert!(out.status.success());
    assert!(String::from_utf8(out.stdout).unwrap().ends_with("#2\tB2\n"));
}

#[test]
fn segments_ending_in_lf_or_crlf_read_as_cr() {
    let dir = tempfile::tempdir().unwrap();
    let text = format!(
        "{}\rPID|1||77||DOE^JANE\r{}\rPID|2||78\r",
        header("L1"),
        header("L2")
    );
    for (name, text) in [
        ("lf.hl7", text.replace('\r', "\n")),
        ("crlf.hl7", text.replace('\r', "\r\n")),
    ] {
        let file = dir.path().join(name);
        std::fs::write(&file, text).unwrap();
        let out = mllp()
            .args([
                "show", "--get", "MSH-10", "--get", "PID-5.2", "--get", "MSH-12",
            ])
            .arg(&file)
            .output()
            .unwrap();
        assert!(out.status.success());
        let text = String::from_utf8(out.stdout).unwrap();
        let rows: Vec<Vec<&str>> = text
            .lines()
            .map(|l| l.split('\t').skip(1).collect())
            .collect();
        assert_eq!(rows, [["L1", "JANE", "2.5"], ["L2", "", "2.5"]], "{name}");
        let out = mllp().arg("check").arg(&file).output().unwrap();
        assert_eq!(out.status.code(), Some(0), "{name}");
    }
}
