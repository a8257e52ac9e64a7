//! Orders and results: the ordering provider and callback phones replaced as the attending
//! doctor and the patient's phone are, free text whatever the case of its type, encapsulated
//! documents emptied.

use super::{deid, get, new_key};
use std::ffi::OsStr;

/// The same doctor attends (PV1-7) and orders (ORC-12, OBR-16).
const ORDER: &str = "MSH|^~\\&|LIS|GH|EHR|GH|20240105083000||ORU^R01^ORU_R01|ORD0001|P|2.5\r\
PID|1||7302215^^^GH^MR||QUARTERMAIN^Philippa||19711203|F|||||^PRN^PH^^^^^^CALLMEAFTERSIX~(555)7391842^WPN^PH^^^555^7391842^8817\r\
PV1|1|O|CLINIC||||4478120^HAWTHORNE^Bartholomew\r\
ORC|RE|PLC123|FLR456||CM||||20240105080000|||4478120^HAWTHORNE^Bartholomew||(555)2224819^WPN^PH^^^555^2224819^6631^NIGHTDESKPHILIPPA\r\
OBR|1|PLC123|FLR456|CBC^BLOOD COUNT|||20240105070000|||||||||4478120^HAWTHORNE^Bartholomew|(555)2224819^WPN^PH^^^555^2224819\r\
OBX|1|tx|NOTE||Philippa Quartermain seen by Hawthorne||||||F\r\
OBX|2|ED|PDF||GH^AP^PDF^Base64^JVBERiQUARTERMAINPHILIPPA||||||F\r\
OBX|3|NM|GLU||5.4|mmol/L|||||F\r";

fn deid_stdout(dir: &std::path::Path, name: &str, bytes: &[u8]) -> String {
    let input = dir.join(name);
    std::fs::write(&input, bytes).unwrap();
    let key = new_key(dir, "site.key");
    let run = deid(&[
        input.as_os_str(),
        OsStr::new("--key-file"),
        key.as_os_str(),
        OsStr::new("--out"),
        OsStr::new("-"),
    ]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    run.stdout
}

#[test]
fn the_ordering_provider_callback_phones_and_documents_are_replaced() {
    let dir = tempfile::tempdir().unwrap();
    let out = deid_stdout(dir.path(), "order.hl7", ORDER.as_bytes());
    let left: Vec<&str> = [
        "QUARTERMAIN",
        "Quartermain",
        "Philippa",
        "HAWTHORNE",
        "Hawthorne",
        "4478120",
        "2224819",
        "7391842",
        "8817",
        "6631",
        "CALLMEAFTERSIX",
        "NIGHTDESKPHILIPPA",
        "JVBERi",
    ]
    .into_iter()
    .filter(|original| out.contains(original))
    .collect();
    assert!(left.is_empty(), "{left:?} left in {out:?}");
    let m = out.as_bytes();
    // One doctor, one replacement, wherever the doctor is named.
    for part in [".1", ".2", ".3"] {
        let attending = get(m, &format!("PV1-7{part}"));
        assert_eq!(get(m, &format!("ORC-12{part}")), attending);
        assert_eq!(get(m, &format!("OBR-16{part}")), attending);
    }
    // The callback phone: one number, one replacement, as in PID-13.
    assert_eq!(get(m, "ORC-14.7"), get(m, "OBR-17.7"));
    // The document's type stays, its data goes; the numeric result stays.
    assert_eq!(get(m, "OBX(2)-5.1"), "GH");
    assert_eq!(get(m, "OBX(2)-5.4"), "Base64");
    assert_eq!(get(m, "OBX(2)-5.5"), "");
    assert_eq!(get(m, "OBX(3)-5"), "5.4");
    assert_eq!(get(m, "OBX(1)-2"), "tx");
    assert_eq!(get(m, "MSH-10"), "ORD0001");
}
