//! De-identification of whole messages: what changes, what stays byte for byte, and a
//! property test over generated messages.

use super::*;
use crate::hl7::{Message, Path};
use proptest::prelude::*;

const ADT: &[u8] = b"MSH|^~\\&|ADT|GOODHEALTH|LAB|GOODHEALTH|20240105083000||ADT^A01^ADT_A01|MSG0001|P|2.5\r\
EVN|A01|20240105083000\r\
PID|1||4711235^^^GH^MR~99887766^^^SSA^SS||O\\S\\QUIRKE^Winnifred^Q||19800512|F|||17 Larkspur Lane^Apt 4^Fernhill^OR^97123^USA||(503)555-0142^PRN^PH~^NET^Internet^wq@example.org\r\
NK1|1|QUIRKE^TOBIAS|SPO|17 Larkspur Lane^^Fernhill^OR^97123|(503)555-0143||||||||||M|19781130\r\
PV1|1|I|W^101^1|||||0042^HOUSEMAN^GREGORY|||||||||||V20240105001|||||||||||||||||||||||||20240105083000\r\
OBX|1|TX|NOTE||Patient Winnifred reports pain||||||F\r\
OBX|2|NM|GLU||5.4|mmol/L|||||F\r\
ZXX|4711235|QUIRKE\r";

fn deid_with(key: u8, message: &[u8]) -> (Vec<u8>, Report) {
    let deid = Deidentifier::new(&Key::from_bytes([key; 32]), Policy::standard());
    let mut out = Vec::new();
    let mut session = deid.session();
    session.apply(message, &mut out);
    (out, session.report().clone())
}

fn get(message: &[u8], path: &str) -> String {
    let path: Path = path.parse().unwrap();
    String::from_utf8_lossy(&Message::new(message).get(&path).decoded()).into_owned()
}

#[test]
fn identifying_values_change_and_the_rest_stays() {
    let (out, report) = deid_with(1, ADT);
    assert_eq!(errors(ADT), Vec::<String>::new());
    assert_eq!(errors(&out), Vec::<String>::new());
    let text = String::from_utf8_lossy(&out);
    for original in [
        "4711235^",
        "99887766",
        "QUIRKE^",
        "Winnifred",
        "19800512",
        "Larkspur",
        "Fernhill",
        "97123",
        "555-0142",
        "wq@example",
        "TOBIAS",
        "19781130",
        "HOUSEMAN",
        "V20240105001",
        "pain",
    ] {
        assert!(!text.contains(original), "{original} in {text}");
    }
    // Not identifying, or outside the standard segments: as they were.
    for kept in [
        "MSH-9", "MSH-10", "MSH-7", "EVN-2", "PID-3.4", "PID-11.4", "PID-11.6", "OBX(2)-5",
        "ZXX-1", "PV1-3",
    ] {
        assert_eq!(get(&out, kept), get(ADT, kept), "{kept}");
    }
    assert!(out.starts_with(&ADT[..ADT.iter().position(|&b| b == b'\r').unwrap() + 1]));
    // Shapes kept.
    let mrn = get(&out, "PID-3.1");
    assert_eq!(mrn.len(), 7);
    assert!(mrn.bytes().all(|b| b.is_ascii_digit()));
    assert_eq!(get(&out, "PID-13.1").len(), "(503)555-0142".len());
    assert_eq!(&get(&out, "PID-13.1")[..1], "(");
    let given = get(&out, "PID-5.2");
    assert!(
        given.as_bytes()[0].is_ascii_uppercase()
            && given[1..].bytes().all(|b| b.is_ascii_lowercase())
    );
    assert_eq!(get(&out, "PID-5.3").len(), 1);
    // A value holding an escaped delimiter is still escaped where it must be.
    assert!(!get(&out, "PID-5.1").contains('^'));
    assert_ne!(get(&out, "PID-7"), get(ADT, "PID-7"));
    assert_eq!(get(&out, "PV1-44").len(), 14);
    assert_eq!(&get(&out, "PV1-44")[8..], "083000");
    assert_eq!(report.replaced("PID-5.1"), 1);
    assert_eq!(report.replaced("OBX-5"), 1);
    assert!(report.counts().all(|(_, n)| n > 0));
}

#[test]
fn the_same_key_gives_the_same_person_and_another_key_another() {
    let (a, _) = deid_with(1, ADT);
    let (b, _) = deid_with(1, ADT);
    let (c, _) = deid_with(2, ADT);
    assert_eq!(a, b);
    assert_ne!(get(&a, "PID-3.1"), get(&c, "PID-3.1"));
    assert_ne!(get(&a, "PID-5.2"), get(&c, "PID-5.2"));
    // Another message of the same patient: the same identifiers and date offset.
    let a08 = b"MSH|^~\\&|ADT|GOODHEALTH|LAB|GOODHEALTH|20240107||ADT^A08|MSG0002|P|2.5\r\
PID|1||4711235^^^GH^MR||QUIRKE^WINNIFRED||19800512\rPV1|1|I||||||||||||||||||||||||||||||||||||||||||20240105083000|20240107120000\r";
    let (d, _) = deid_with(1, a08);
    assert_eq!(get(&d, "PID-3.1"), get(&a, "PID-3.1"));
    // The same family name in PID and NK1 stays one family.
    assert_eq!(get(&d, "PID-5.1"), get(&a, "NK1-2.1"));
    assert_eq!(get(&d, "PID-5.2"), get(&a, "PID-5.2").to_uppercase());
    assert_eq!(get(&d, "PID-7"), get(&a, "PID-7"));
    assert_eq!(get(&d, "PV1-44"), get(&a, "PV1-44"));
    assert_ne!(get(&d, "PV1-45"), "20240107120000");
}

#[test]
fn a_site_policy_adds_removes_and_blanks() {
    let raw: RawPolicy = serde_json::from_str(
        r#"{"paths":{"ZXX-2":"name","PID-7":"keep","PID-13":"blank","EVN-2":"shift-date"}}"#,
    )
    .unwrap();
    let deid = Deidentifier::new(&Key::from_bytes([1; 32]), Policy::from_raw(raw).unwrap());
    let mut out = Vec::new();
    let mut session = deid.session();
    session.apply(ADT, &mut out);
    let report = session.report();
    assert_ne!(get(&out, "ZXX-2"), "QUIRKE");
    assert_eq!(get(&out, "PID-7"), "19800512");
    assert_eq!(get(&out, "PID-13"), "");
    assert!(String::from_utf8_lossy(&out).contains("|F|||"));
    assert_eq!(&get(&out, "EVN-2")[8..], "083000");
    assert_ne!(get(&out, "EVN-2"), get(ADT, "EVN-2"));
    assert_eq!(report.replaced("PID-13"), 1);
    assert_eq!(report.replaced("PID-7"), 0);
}

/// The well-formedness errors of a message, by code and place.
fn errors(message: &[u8]) -> Vec<String> {
    use crate::hl7::check::{Checker, Severity};
    let findings = Checker::default().check(message);
    findings
        .into_iter()
        .filter(|f| f.severity == Severity::Error)
        .map(|f| format!("{} {}", f.code.as_str(), f.at))
        .collect()
}

/// The bytes that shape a message: MSH-1, MSH-2, and every separator and segment end in order
/// (the escape character is left out: a value may need more or fewer escapes).
fn skeleton(message: &[u8]) -> Vec<u8> {
    let d = Message::new(message).delimiters();
    message
        .iter()
        .copied()
        .filter(|&b| {
            b == d.field
                || b == d.component
                || b == d.repetition
                || b == d.subcomponent
                || b == b'\r'
        })
        .collect()
}

fn value() -> impl Strategy<Value = String> {
    prop_oneof![
        "[A-Za-z0-9 .()-]{0,12}",
        Just(String::new()),
        Just("\"\"".to_string()),
        "[A-Z]{1,8}\\^[A-Z]{1,8}(\\^[A-Z])?",
        "[0-9]{4,10}(\\^\\^\\^[A-Z]{2})?(~[0-9]{5})?",
        "(19|20)[0-9]{2}(0[1-9]|1[0-2])(0[1-9]|1[0-9]|2[0-8])([0-9]{6})?",
        "[A-Z]{1,5}&[A-Z]{1,5}",
        "O\\\\S\\\\BRIEN\\\\.br\\\\X",
        "TX|FT|ST|NM|CE",
    ]
}

pub(super) fn segment() -> impl Strategy<Value = String> {
    let name = prop_oneof![
        Just("PID"),
        Just("NK1"),
        Just("PV1"),
        Just("GT1"),
        Just("IN1"),
        Just("IN2"),
        Just("MRG"),
        Just("PD1"),
        Just("NTE"),
        Just("OBX"),
        Just("EVN"),
        Just("ZXX"),
    ];
    (name, prop::collection::vec(value(), 0..50))
        .prop_map(|(name, fields)| format!("{name}|{}", fields.join("|")))
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    /// Whatever the message: the delimiters, the segments and their order, MSH-9 and MSH-10
    /// stay as they were, and so does every value no rule takes in.
    #[test]
    fn never_changes_separators_segments_or_the_header(
        segments in prop::collection::vec(segment(), 0..12),
        control_id in "[A-Z0-9]{1,20}",
        key in any::<u8>(),
        odd in any::<bool>(),
    ) {
        let mut text = format!("MSH|^~\\&|A|B|C|D|20240101||ADT^A01^ADT_A01|{control_id}|P|2.5\r");
        for s in &segments {
            text.push_str(s);
            text.push('\r');
        }
        if odd {
            // Other delimiters: the message's own, not the defaults.
            text = text.replace('|', "#").replace('^', "*").replace('~', "%").replace('&', "@").replace('\\', "$");
        }
        let message = text.as_bytes();
        let (out, _) = deid_with(key, message);
        let before = Message::new(message);
        let after = Message::new(&out);
        prop_assert_eq!(skeleton(&out), skeleton(message));
        prop_assert_eq!(before.delimiters(), after.delimiters());
        let names = |m: &Message| m.segments().map(|s| s.name().to_vec()).collect::<Vec<_>>();
        prop_assert_eq!(names(&before), names(&after));
        for kept in ["MSH-9", "MSH-10", "MSH-1", "MSH-2", "MSH-7"] {
            let p: Path = kept.parse().unwrap();
            prop_assert_eq!(before.get(&p).raw(), after.get(&p).raw());
        }
        for (b, a) in before.segments().zip(after.segments()) {
            if matches!(b.name(), b"EVN" | b"ZXX" | b"MSH") {
                prop_assert_eq!(b.bytes(), a.bytes());
            }
        }
        // Well formed before: well formed after.
        if errors(message).is_empty() {
            prop_assert_eq!(errors(&out), Vec::<String>::new());
        }
    }
}

/// Replacements are part of a key's promise: a test system loaded last month must meet the
/// same people this month. These are the replacements under one key, written down.
#[test]
fn the_replacements_under_a_key_stay_what_they_were() {
    let (out, _) = deid_with(1, ADT);
    let text = String::from_utf8(out).unwrap();
    assert_eq!(text, PINNED, "{}", text.replace('\r', "\n"));
}

const PINNED: &str = "MSH|^~\\&|ADT|GOODHEALTH|LAB|GOODHEALTH|20240105083000||ADT^A01^ADT_A01|MSG0001|P|2.5\r\
EVN|A01|20240105083000\r\
PID|1||2586080^^^GH^MR~24535600^^^SSA^SS||DANBURY^Ashton^B||19800113|F|||95 Vpvvhvom Nhjv^Xqs 1^Gxbpkujn^OR^95855^USA||(197)218-4762^PRN^PH~^NET^Internet^el@cmeivej.fkz\r\
NK1|1|ARDEN^DUNMORE|SPO|95 Vpvvhvom Nhjv^^Gxbpkujn^OR^95855|(304)630-8678||||||||||M|19780802\r\
PV1|1|I|W^101^1|||||0865^MERRICK^ESSEX|||||||||||C35527768338|||||||||||||||||||||||||20230907083000\r\
OBX|1|TX|NOTE||Bdvxkys Ludnqrcto vgxwkyl ubsp||||||F\r\
OBX|2|NM|GLU||5.4|mmol/L|||||F\r\
ZXX|4711235|QUIRKE\r";
