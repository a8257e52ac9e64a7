//! `mllp show`, and the reader behind it beside python-hl7.

mod corpus;
mod filters;
mod listen_text;
mod outline;
mod postgres;
mod values;

use crate::support::no_payload::MARKER;
use std::path::{Path, PathBuf};

/// An ADT of a patient, its name holding `name`.
pub fn adt(control_id: &str, mrn: &str, name: &str) -> String {
    format!(
        "MSH|^~\\&|LAB|FAC|RCV|RFAC|20240101120000||ADT^A01^ADT_A01|{control_id}|P|2.5.1\r\
         EVN|A01|20240101120000\r\
         PID|1||{mrn}^^^H^MR~77^^^S||{name}^ANNA||19700101|F\r\
         OBX|1|NM|GLU||5.4\rOBX|2|NM|NA||140\r"
    )
}

/// Three ADTs, the second's patient name holding the payload marker.
pub fn three(dir: &Path) -> PathBuf {
    let file = dir.join("adt.hl7");
    let text = [
        adt("C1", "100001", "DOE"),
        adt("C2", "100002", &format!("O\\S\\{MARKER}")),
        adt("C3", "100003", "ROE"),
    ]
    .concat();
    std::fs::write(&file, text).unwrap();
    file
}
