//! A batch file in gives a batch file out: its envelope (FHS, BHS, BTS, FTS) written back
//! byte for byte where it stood, the messages between de-identified.

use super::{deid, new_key};
use crate::support::mllp;
use std::ffi::OsStr;

fn adt(id: &str, mrn: &str, family: &str) -> String {
    format!(
        "MSH|^~\\&|ADT|GOODHEALTH|LAB|GOODHEALTH|20240105083000||ADT^A01^ADT_A01|{id}|P|2.5\r\
         EVN|A01|20240105083000\r\
         PID|1||{mrn}^^^GH^MR||{family}^Winnifred||19800512|F\r"
    )
}

#[test]
fn a_batch_file_keeps_its_envelope_and_passes_check() {
    let dir = tempfile::tempdir().unwrap();
    let key = new_key(dir.path(), "site.key");
    let body = [
        adt("M1", "4711235", "QUIGLEYSON"),
        adt("M2", "4711236", "QUIGLEYSON"),
        adt("M3", "9922113", "HARTWELLIN"),
    ]
    .concat();
    let head = "FHS|^~\\&|ADT|GOODHEALTH|LAB|GOODHEALTH|20240105090000||day.hl7|night run|F1\r\
                BHS|^~\\&|ADT|GOODHEALTH|LAB|GOODHEALTH|20240105090000||||B1\r";
    let tail = "BTS|3\rFTS|1\r";
    let batch = format!("{head}{body}{tail}");
    for (name, text) in [
        ("cr.hl7", batch.clone()),
        ("crlf.hl7", batch.replace('\r', "\r\n")),
    ] {
        let input = dir.path().join(name);
        std::fs::write(&input, &text).unwrap();
        let check = |file: &std::path::Path| {
            let out = mllp().arg("check").arg(file).output().unwrap();
            let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
            (out.status.code(), stderr)
        };
        assert_eq!(check(&input).0, Some(0), "{name}: {}", check(&input).1);

        let out = dir.path().join(format!("out-{name}"));
        let run = deid(&[
            input.as_os_str(),
            OsStr::new("--key-file"),
            key.as_os_str(),
            OsStr::new("--out"),
            out.as_os_str(),
        ]);
        assert_eq!(run.code, 0, "{name}: {}", run.stderr);
        let written = std::fs::read_to_string(out.join(name)).unwrap();
        let eol = if name == "crlf.hl7" { "\r\n" } else { "\r" };
        let (head, tail) = (head.replace('\r', eol), tail.replace('\r', eol));
        assert!(written.starts_with(&head), "{name}: {written:?}");
        assert!(written.ends_with(&tail), "{name}: {written:?}");
        assert_eq!(written.matches("MSH|").count(), 3, "{name}");
        for original in ["4711235", "4711236", "9922113", "QUIGLEYSON", "HARTWELLIN"] {
            assert!(!written.contains(original), "{name}: {original} left");
        }
        // Three messages counted, the envelope segments not among them.
        assert!(run.stderr.contains("3 messages"), "{name}: {}", run.stderr);
        let (code, stderr) = check(&out.join(name));
        assert_eq!(code, Some(0), "{name}: {stderr}");
        assert!(
            stderr.contains("checked 3 messages: 0 with errors"),
            "{name}: {stderr}"
        );
    }
}

#[test]
fn a_batch_with_messages_left_out_counts_the_messages_written() {
    let dir = tempfile::tempdir().unwrap();
    let key = new_key(dir.path(), "site.key");
    let first = [
        adt("M1", "4711235", "QUIGLEYSON"),
        adt("M2", "4711236", "QUIGLEYSON"),
        adt("M3", "9922113", "HARTWELLIN"),
    ]
    .concat();
    let second = [
        adt("M4", "5511235", "ABERNATHY"),
        adt("M5", "5511236", "ABERNATHY"),
    ]
    .concat();
    let bhs =
        |id: &str| format!("BHS|^~\\&|ADT|GOODHEALTH|LAB|GOODHEALTH|20240105090000||||{id}\r");
    let batch = format!(
        "FHS|^~\\&|ADT|GOODHEALTH|LAB|GOODHEALTH|20240105090000||day.hl7|night run|F1\r\
         {}{first}BTS|3|first\r{}{second}BTS|2\rFTS|2\r",
        bhs("B1"),
        bhs("B2")
    );
    let input = dir.path().join("day.hl7");
    std::fs::write(&input, &batch).unwrap();
    let out = dir.path().join("out");
    // M2 and M4 left out: one message from each batch.
    let run = deid(&[
        input.as_os_str(),
        OsStr::new("--key-file"),
        key.as_os_str(),
        OsStr::new("--where"),
        OsStr::new("MSH-10!=M2"),
        OsStr::new("--where"),
        OsStr::new("MSH-10!=M4"),
        OsStr::new("--out"),
        out.as_os_str(),
    ]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let written = std::fs::read_to_string(out.join("day.hl7")).unwrap();
    assert_eq!(written.matches("MSH|").count(), 3, "{written:?}");
    // Each trailer counts its own batch's messages written; the rest of it, and the file's
    // count of batches, as they were.
    assert!(written.contains("\rBTS|2|first\rBHS|"), "{written:?}");
    assert!(written.ends_with("\rBTS|1\rFTS|2\r"), "{written:?}");
    let check = mllp()
        .arg("check")
        .arg(out.join("day.hl7"))
        .output()
        .unwrap();
    assert_eq!(
        check.status.code(),
        Some(0),
        "{}{}",
        String::from_utf8_lossy(&check.stdout),
        String::from_utf8_lossy(&check.stderr)
    );
}
