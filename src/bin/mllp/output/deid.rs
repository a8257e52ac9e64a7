//! `deid`'s events on stderr under `--log-format json`: the report (counts per path, never a
//! value) and the lines about keys.

use serde::Serialize;
use std::collections::BTreeMap;

/// The run's report.
#[derive(Serialize)]
pub struct DeidReport {
    pub event: &'static str,
    /// Messages read from the inputs.
    pub read: u64,
    /// Messages written to the output.
    pub written: u64,
    /// Messages `--where` left out.
    pub filtered_out: u64,
    /// Output files written (0 for stdout).
    pub files: u64,
    /// Values replaced, by the path of the rule that replaced them.
    pub replaced: BTreeMap<String, u64>,
}

/// A key written, or a key file others can read.
#[derive(Serialize)]
pub struct KeyEvent {
    pub event: &'static str,
    pub file: String,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::output::line;

    #[test]
    fn each_event_keeps_its_field_names() {
        let report = DeidReport {
            event: "deid_report",
            read: 3,
            written: 2,
            filtered_out: 1,
            files: 1,
            replaced: [("PID-5.1".to_string(), 2)].into_iter().collect(),
        };
        assert_eq!(
            line(&report),
            r#"{"event":"deid_report","files":1,"filtered_out":1,"read":3,"replaced":{"PID-5.1":2},"written":2}"#
        );
        let key = KeyEvent {
            event: "key_written",
            file: "k".into(),
        };
        assert_eq!(line(&key), r#"{"event":"key_written","file":"k"}"#);
    }
}
