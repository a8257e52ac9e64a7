//! Each finding as `check` lists it (source, path, code, severity, what), the exit code, the
//! profile, batch envelopes, and the same check before `send`.

use crate::show::adt;
use crate::support::mllp;
use crate::support::no_payload::MARKER;

fn write(dir: &std::path::Path, name: &str, text: &str) -> std::path::PathBuf {
    let file = dir.join(name);
    std::fs::write(&file, text).unwrap();
    file
}

#[test]
fn a_well_formed_input_exits_0_and_says_so() {
    let dir = tempfile::tempdir().unwrap();
    let file = write(
        dir.path(),
        "good.hl7",
        &[adt("G1", "1", "DOE"), adt("G2", "2", "ROE")].concat(),
    );
    let out = mllp().arg("check").arg(&file).output().unwrap();
    assert_eq!(out.status.code(), Some(0));
    assert!(out.stdout.is_empty());
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert!(
        stderr.contains("checked 2 messages: 0 with errors"),
        "{stderr}"
    );
}

#[test]
fn each_finding_names_its_message_path_and_code_without_the_value_unless_v() {
    let dir = tempfile::tempdir().unwrap();
    let bad = adt("B1", "9", MARKER)
        .replace("20240101120000||", &format!("{MARKER}||"))
        .replace("|2.5.1", "|9.9")
        + &format!("{MARKER} is not a segment\r");
    let file = write(
        dir.path(),
        "bad.hl7",
        &[adt("G1", "1", "DOE"), bad].concat(),
    );
    let out = mllp().arg("check").arg(&file).output().unwrap();
    assert_eq!(out.status.code(), Some(1));
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(!text.contains(MARKER), "a value without -v: {text}");
    let found: Vec<(String, String, String)> = text
        .lines()
        .map(|l| {
            let w: Vec<&str> = l.split("  ").collect();
            (
                w[0].rsplit('/').next().unwrap().to_string(),
                w[1].to_string(),
                w[2].to_string(),
            )
        })
        .collect();
    for (path, code) in [
        ("MSH-7", "HL7_TIMESTAMP_INVALID"),
        ("MSH-12", "HL7_VERSION_UNKNOWN"),
        ("segment 6", "HL7_SEGMENT_ID_INVALID"),
    ] {
        assert!(
            found
                .iter()
                .any(|(s, p, c)| s == "bad.hl7#2" && p == path && c == code),
            "{path} {code} in {found:?}"
        );
    }
    assert!(text.lines().all(|l| l.contains("error:")), "{text}");

    let out = mllp()
        .args(["check", "-v", "--json"])
        .arg(&file)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let records: Vec<serde_json::Value> = String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let msh7 = records.iter().find(|r| r["path"] == "MSH-7").unwrap();
    assert_eq!(msh7["value"], MARKER);
    assert_eq!(msh7["severity"], "error");
    assert_eq!(msh7["code"], "HL7_TIMESTAMP_INVALID");
    let summary = records.last().unwrap();
    assert_eq!(summary["type"], "summary");
    assert_eq!(
        (
            summary["messages"].as_u64(),
            summary["with_errors"].as_u64()
        ),
        (Some(2), Some(1))
    );
    assert_eq!(summary["exit_code"], 1);
}

#[test]
fn a_batch_is_checked_whole_its_envelope_counted() {
    let dir = tempfile::tempdir().unwrap();
    let body = [adt("M1", "1", "DOE"), adt("M2", "2", "ROE")].concat();
    let good = write(
        dir.path(),
        "good.hl7",
        &format!("BHS|^~\\&|A\r{body}BTS|2\r"),
    );
    assert_eq!(
        mllp()
            .arg("check")
            .arg(&good)
            .output()
            .unwrap()
            .status
            .code(),
        Some(0)
    );
    let wrong = write(
        dir.path(),
        "wrong.hl7",
        &format!("BHS|^~\\&|A\r{body}BTS|3\r"),
    );
    let out = mllp().arg("check").arg(&wrong).output().unwrap();
    assert_eq!(out.status.code(), Some(1));
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.contains("BTS-1  HL7_BATCH_UNBALANCED"), "{text}");
    let inner = write(
        dir.path(),
        "inner.hl7",
        &format!(
            "BHS|^~\\&|A\r{}{}BTS|2\r",
            adt("M1", "1", "DOE"),
            adt("M2", "2", "DOE").replace("|P|", "|X|")
        ),
    );
    let text = String::from_utf8(mllp().arg("check").arg(&inner).output().unwrap().stdout).unwrap();
    assert!(
        text.starts_with(&format!(
            "{}#1/2  MSH-11  HL7_PROCESSING_ID_INVALID",
            inner.display()
        )),
        "{text}"
    );
}

#[test]
fn a_profile_adds_the_sites_rules_and_a_bad_one_is_a_usage_error() {
    let dir = tempfile::tempdir().unwrap();
    let file = write(dir.path(), "adt.hl7", &adt("P1", "1", "DOE"));
    let profile = write(
        dir.path(),
        "site.toml",
        "required = [\"PV1-2\"]\n[allowed]\n\"PID-8\" = [\"M\"]\n\"MSH-4\" = { pattern = \"F.C\" }\n\
         [max_length]\n\"PID-5.1\" = 2\n[segments]\n\"ADT^A01\" = [\"EVN\", \"PV1\"]\n",
    );
    let out = mllp()
        .arg("check")
        .arg(&file)
        .arg("--profile")
        .arg(&profile)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let text = String::from_utf8(out.stdout).unwrap();
    let codes: Vec<&str> = text
        .lines()
        .map(|l| l.split("  ").nth(2).unwrap())
        .collect();
    assert_eq!(
        codes,
        [
            "HL7_PROFILE_FIELD_MISSING",
            "HL7_PROFILE_VALUE_NOT_ALLOWED",
            "HL7_PROFILE_VALUE_TOO_LONG",
            "HL7_PROFILE_SEGMENT_MISSING"
        ]
    );
    let json = write(dir.path(), "site.json", r#"{"required": ["PID-3.1"]}"#);
    let out = mllp()
        .arg("check")
        .arg(&file)
        .arg("--profile")
        .arg(&json)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
    for (name, text, said) in [
        (
            "bad-path.toml",
            "required = [\"PID-x\"]\n",
            "`x` at character 5",
        ),
        ("bad-key.toml", "mandatory = [\"PID-3\"]\n", "unknown field"),
        (
            "bad-regex.toml",
            "[allowed]\n\"PID-8\" = { pattern = \"(\" }\n",
            "allowed.\"PID-8\"",
        ),
    ] {
        let bad = write(dir.path(), name, text);
        let out = mllp()
            .arg("check")
            .arg(&file)
            .arg("--profile")
            .arg(&bad)
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{name}");
        let stderr = String::from_utf8(out.stderr).unwrap();
        assert!(
            stderr.contains(said) && stderr.contains(name),
            "{name}: {stderr}"
        );
    }
}

#[test]
fn send_check_hl7_refuses_an_ill_formed_input_before_sending_anything() {
    let dir = tempfile::tempdir().unwrap();
    let bad = adt("B1", "9", "DOE").replace("ADT^A01^ADT_A01", "ADT");
    let file = write(
        dir.path(),
        "mixed.hl7",
        &[adt("G1", "1", "DOE"), bad].concat(),
    );
    // Port 1 on loopback: nothing listens, and nothing must be tried.
    let out = mllp()
        .args(["send", "--check-hl7", "--host", "127.0.0.1:1"])
        .arg(&file)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert!(
        stderr.contains("mixed.hl7#2  MSH-9  HL7_MESSAGE_TYPE_INVALID"),
        "{stderr}"
    );
    assert!(stderr.contains("nothing was sent"), "{stderr}");
    assert!(!stderr.contains("connect"), "{stderr}");
    let good = write(dir.path(), "good.hl7", &adt("G1", "1", "DOE"));
    let out = mllp()
        .args(["send", "--check-hl7", "--dry-run"])
        .arg(&good)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
}
