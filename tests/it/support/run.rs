//! A finished run of the binary: its exit code and output as text, stderr and stdout's records
//! already checked for the payload marker.

use super::no_payload::{assert_no_marker, assert_records_clean, MARKER};
use serde_json::Value;
use std::process::Output;

pub struct Run {
    pub code: i32,
    pub stdout: String,
    pub stderr: String,
}

impl Run {
    /// `out` as text, once its stderr (named `what` in a failure) is free of the payload marker.
    pub fn checked(out: &Output, what: &str) -> Run {
        let run = Run {
            code: out.status.code().unwrap_or(-1),
            stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
        };
        assert_no_marker(what, &run.stderr, MARKER);
        assert_records_clean(what, &run.stdout);
        run
    }

    /// Every stdout line, as JSON (`--json` output).
    pub fn records(&self) -> Vec<Value> {
        self.stdout
            .lines()
            .map(|l| serde_json::from_str(l).unwrap_or_else(|_| panic!("not JSON: {l}")))
            .collect()
    }

    /// The per-message records: every record but the summary, which must come last.
    pub fn messages(&self) -> Vec<Value> {
        let mut records = self.records();
        let summary = records.pop().expect("a summary record");
        assert_eq!(summary["type"], "summary", "{}", self.stdout);
        records
    }

    /// The control IDs of the messages that ended accepted, in record order.
    pub fn accepted_ids(&self) -> Vec<String> {
        self.messages()
            .iter()
            .filter(|m| m["outcome"] == "accepted")
            .map(|m| m["control_id"].as_str().unwrap().to_string())
            .collect()
    }

    pub fn summary(&self) -> Value {
        self.records().pop().expect("a summary record")
    }
}
