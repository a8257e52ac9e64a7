//! The one message a probe sends: a synthetic ADT^A01 with processing ID `D` and a unique
//! control ID, or the first message of a file (segments normalised to CR).

use crate::input::{InputError, SplitOptions, Splitter};
use bytes::Bytes;
use std::path::Path;
use std::time::SystemTime;

/// A control ID no other probe run is likely to reuse: `MLLPPROBE`, the Unix time in
/// milliseconds, and a random suffix (MSH-10 allows 199 characters; this stays under 40).
pub(crate) fn unique_control_id(now: SystemTime) -> String {
    let millis = now
        .duration_since(SystemTime::UNIX_EPOCH)
        .map(|d| d.as_millis())
        .unwrap_or(0);
    let suffix: u32 = rand::random::<u32>() % 1_000_000;
    format!("MLLPPROBE{millis}{suffix:06}")
}

/// A minimal ADT^A01 (HL7 2.5) with processing ID `D` (debugging), so receivers that honour
/// MSH-11 keep it out of production. The patient is obviously synthetic.
pub(crate) fn synthetic_adt(control_id: &str, now: SystemTime) -> Bytes {
    let stamp = hl7_timestamp(now);
    Bytes::from(format!(
        "MSH|^~\\&|MLLP-PROBE|MLLP|RECEIVER|RECEIVER|{stamp}||ADT^A01^ADT_A01|{control_id}|D|2.5\r\
         EVN|A01|{stamp}\r\
         PID|1||PROBE0001^^^MLLP^MR||PROBE^CONNECTIVITY||19700101|U\r\
         PV1|1|N\r"
    ))
}

/// `YYYYMMDDHHMMSS` in UTC.
fn hl7_timestamp(now: SystemTime) -> String {
    let rfc = humantime::format_rfc3339_seconds(now).to_string();
    rfc.chars().filter(char::is_ascii_digit).take(14).collect()
}

/// The first message of `path`, split and normalised the way `send` reads files.
pub fn first_message(path: &Path) -> Result<Bytes, InputError> {
    let name = path.display().to_string();
    let file = std::fs::File::open(path).map_err(|error| {
        if error.kind() == std::io::ErrorKind::NotFound {
            InputError::NotFound {
                path: path.to_path_buf(),
            }
        } else {
            InputError::Read {
                name: name.clone(),
                error,
            }
        }
    })?;
    let mut splitter = Splitter::from_read(&name, file, SplitOptions::default());
    match splitter.next() {
        Some(Ok(message)) => Ok(message.payload),
        Some(Err(err)) => Err(err),
        None => Err(InputError::NoMessages { name }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hl7::scan;
    use std::time::Duration;

    #[test]
    fn synthetic_message_is_debug_processing_with_the_given_control_id() {
        let now = SystemTime::UNIX_EPOCH + Duration::from_secs(1_700_000_000);
        let id = unique_control_id(now);
        assert!(id.starts_with("MLLPPROBE1700000000000"), "{id}");
        assert_ne!(id, unique_control_id(now));
        let payload = synthetic_adt(&id, now);
        let msh = scan(&payload).msh.unwrap();
        assert_eq!(msh.control_id(), Some(id.as_bytes()));
        assert_eq!(msh.field(11), Some(&b"D"[..]));
        assert_eq!(msh.date_time(), Some(&b"20231114221320"[..]));
        assert!(!payload.contains(&b'\n'));
        assert!(payload.ends_with(b"\r"));
    }

    #[test]
    fn the_first_message_of_a_file_is_taken_with_crs() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("two.hl7");
        std::fs::write(
            &path,
            "MSH|^~\\&|A|B|C|D|20240101||ADT^A01|ONE|P|2.5\r\nPID|1\r\nMSH|^~\\&|A|B|C|D|20240101||ADT^A01|TWO|P|2.5\nPID|2\n",
        )
        .unwrap();
        let first = first_message(&path).unwrap();
        assert_eq!(
            &first[..],
            b"MSH|^~\\&|A|B|C|D|20240101||ADT^A01|ONE|P|2.5\rPID|1\r"
        );
        let missing = first_message(&dir.path().join("none.hl7")).unwrap_err();
        assert!(matches!(missing, InputError::NotFound { .. }));
        let empty = dir.path().join("empty.hl7");
        std::fs::write(&empty, "\n\n").unwrap();
        assert!(first_message(&empty).is_err());
    }
}
