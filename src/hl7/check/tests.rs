//! Each rule on a message that breaks it and on one that keeps it.

use super::*;

const GOOD: &[u8] = b"MSH|^~\\&|LAB|FAC|RCV|RFAC|20240101120000+0100||ORU^R01^ORU_R01|C1|P|2.5.1\r\
    PID|1||123^^^H||DOE^JANE||19700101|F\rOBR|1|||GLU|||202401011200\r\
    OBX|1|NM|GLU||5.4|mmol/L\rOBX|2|ST|NOTE||text\r";

fn codes(payload: &[u8]) -> Vec<(Code, String)> {
    Checker::default()
        .check(payload)
        .into_iter()
        .map(|f| (f.code, f.at))
        .collect()
}

fn replaced(from: &str, to: &str) -> Vec<u8> {
    String::from_utf8_lossy(GOOD)
        .replacen(from, to, 1)
        .into_bytes()
}

#[test]
fn a_well_formed_message_has_no_finding() {
    assert_eq!(codes(GOOD), []);
}

#[test]
fn each_rule_names_what_breaks_it_and_where() {
    let cases: &[(&str, &str, Code, &str)] = &[
        (
            "20240101120000+0100",
            "20241301",
            Code::TimestampInvalid,
            "MSH-7",
        ),
        (
            "20240101120000+0100",
            "",
            Code::RequiredFieldMissing,
            "MSH-7",
        ),
        ("ORU^R01^ORU_R01", "ORU", Code::MessageTypeInvalid, "MSH-9"),
        ("|C1|", "||", Code::RequiredFieldMissing, "MSH-10"),
        ("|P|", "|X|", Code::ProcessingIdInvalid, "MSH-11"),
        ("|P|", "|P^Q|", Code::ProcessingIdInvalid, "MSH-11"),
        ("2.5.1", "3.0", Code::VersionUnknown, "MSH-12"),
        ("19700101", "1970-01-01", Code::TimestampInvalid, "PID-7"),
        ("PID|1|", "PID|one|", Code::SetIdInvalid, "PID-1"),
        ("||5.4|", "||high|", Code::NumberInvalid, "OBX-5"),
        ("^~\\&", "^~", Code::DelimitersInvalid, "MSH-2"),
        ("^~\\&", "^~^&", Code::DelimitersInvalid, "MSH-2"),
        ("OBR|", "obr|", Code::SegmentIdInvalid, "segment 3"),
        ("DOE^JANE", "DOE\x01JANE", Code::ControlByte, "PID-5"),
    ];
    for (from, to, code, at) in cases {
        let got = codes(&replaced(from, to));
        assert!(
            got.contains(&(*code, at.to_string())),
            "{from} -> {to:?}: {got:?}"
        );
    }
    let second_obx = replaced("||text\r", "||text\rOBX|3|NM|NA||140~x\r");
    assert_eq!(
        codes(&second_obx),
        [(Code::NumberInvalid, "OBX(3)-5(2)".into())]
    );
    let not_first = [&b"PID|1\r"[..], GOOD].concat();
    assert_eq!(codes(&not_first), [(Code::MshNotFirst, "segment 1".into())]);
    let ack = replaced("ORU^R01^ORU_R01", "ACK");
    let findings = Checker::default().check(&ack);
    assert_eq!(findings[0].severity, Severity::Warning);
}

#[test]
fn a_finding_keeps_its_value_out_of_debug() {
    let bad = replaced("19700101", "MARKER-19700101");
    let findings = Checker::default().check(&bad);
    assert_eq!(findings[0].value.as_deref(), Some(&b"MARKER-19700101"[..]));
    assert!(!format!("{findings:?}").contains("MARKER"));
    assert!(!findings[0].what.contains("MARKER"));
}

#[test]
fn batches_are_balanced_and_counted() {
    let msh = "MSH|^~\\&|A|B|C|D|20240101||ADT^A01|1|P|2.5\rPID|1\r";
    let batch = |body: &str| Checker::default().check(body.as_bytes());
    let ok = format!("FHS|^~\\&\rBHS|^~\\&\r{msh}{msh}BTS|2\rFTS|1\r");
    assert_eq!(batch(&ok), []);
    let wrong = batch(&format!("BHS|^~\\&\r{msh}BTS|2\r"));
    assert_eq!(wrong.len(), 1);
    assert_eq!(
        (wrong[0].code, wrong[0].at.as_str()),
        (Code::BatchUnbalanced, "BTS-1")
    );
    let open = batch(&format!("BHS|^~\\&\r{msh}"));
    assert_eq!(open[0].code, Code::BatchUnbalanced);
    let inner = batch(&format!(
        "BHS|^~\\&\r{msh}{}BTS|2\r",
        msh.replace("2.5", "9.9")
    ));
    assert_eq!(
        inner
            .iter()
            .map(|f| (f.code, f.message))
            .collect::<Vec<_>>(),
        [(Code::VersionUnknown, Some(2))]
    );
}

#[test]
fn a_profile_adds_a_sites_rules() {
    let raw: RawProfile = serde_json::from_str(
        r#"{"required": ["PV1-2", "PID-3.1"],
            "allowed": {"PID-8": ["M", "F"], "MSH-4": {"pattern": "F.C"}},
            "max_length": {"PID-5.1": 2},
            "segments": {"ORU^R01": ["PID", "ORC"], "ADT": ["EVN"]}}"#,
    )
    .unwrap();
    let checker = Checker::new(Some(Profile::from_raw(raw).unwrap()));
    let got: Vec<(Code, String)> = checker
        .check(&replaced("|F\r", "|X\r"))
        .into_iter()
        .map(|f| (f.code, f.at))
        .collect();
    assert_eq!(
        got,
        [
            (Code::ProfileFieldMissing, "PV1-2".into()),
            (Code::ProfileValueNotAllowed, "PID-8".into()),
            (Code::ProfileValueTooLong, "PID-5.1".into()),
            (Code::ProfileSegmentMissing, "ORC".into()),
        ]
    );
    let bad = |json: &str| Profile::from_raw(serde_json::from_str(json).unwrap()).unwrap_err();
    assert_eq!(bad(r#"{"required": ["PID-x"]}"#).entry, "required");
    assert_eq!(
        bad(r#"{"allowed": {"PID-8": {"pattern": "("}}}"#).entry,
        "allowed.\"PID-8\""
    );
    assert_eq!(
        bad(r#"{"segments": {"ADT": ["pid"]}}"#).entry,
        "segments.\"ADT\""
    );
}

#[test]
fn a_control_byte_is_placed_in_its_segments_occurrence() {
    let mut m = b"MSH|^~\\&|A|B|C|D|20240101||ADT^A01|1|P|2.5\r".to_vec();
    for i in 1..=3 {
        m.extend_from_slice(format!("NTE|{i}|x\x01y\rZZZ|{i}\r").as_bytes());
    }
    m.extend_from_slice(b"bad|\x02\r");
    let got: Vec<_> = codes(&m)
        .into_iter()
        .filter(|(c, _)| *c == Code::ControlByte)
        .map(|(_, at)| at)
        .collect();
    assert_eq!(got, ["NTE-2", "NTE(2)-2", "NTE(3)-2", "segment 8"]);
}

#[test]
fn bytes_the_charset_cannot_decode_are_a_warning_without_the_value() {
    let declared = b"MSH|^~\\&|A|B|C|D|20240101||ADT^A01|1|P|2.5||||||UNICODE UTF-8\r\
        PID|1||7||D\xc3\x28E^J\rNTE|1||fine\rNTE|2||\xff\r";
    let findings = Checker::default().check(declared);
    let found: Vec<_> = findings
        .iter()
        .map(|f| (f.code, f.severity, f.at.as_str()))
        .collect();
    assert_eq!(
        found,
        [
            (Code::TextNotInCharset, Severity::Warning, "PID-5"),
            (Code::TextNotInCharset, Severity::Warning, "NTE(2)-3"),
        ]
    );
    assert!(findings.iter().all(|f| f.value.is_none()));
    // The same bytes read in the set MSH-18 names are text.
    let latin1 = b"MSH|^~\\&|A|B|C|D|20240101||ADT^A01|1|P|2.5||||||8859/1\rPID|1||7||D\xc3\x28E\r";
    assert_eq!(codes(latin1), []);
    // A set not known is its own warning, not one for every field.
    let unknown = b"MSH|^~\\&|A|B|C|D|20240101||ADT^A01|1|P|2.5||||||KLINGON\rPID|1||7||\xff\r";
    assert_eq!(codes(unknown), [(Code::CharsetUnknown, "MSH-18".into())]);
}
