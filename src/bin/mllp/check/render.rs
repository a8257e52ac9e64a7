//! Each finding as `check` writes it on stdout (a line, or a JSON object), and the summary at
//! the end (stderr for people, the last JSON object with --json).

use crate::inspect::escape_controls;
use mllp::hl7::Charset;
use mllp::hl7::{Finding, Severity};
use serde::Serialize;

/// One line of `check --json`; `type` is `finding` or `summary`.
#[derive(Debug, Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum CheckRecord<'a> {
    /// One thing wrong with a message.
    Finding {
        /// `file#n`, as `show` and `send` name the message.
        source: &'a str,
        /// Which message of a batch (from 1), for a batch read whole.
        #[serde(skip_serializing_if = "Option::is_none")]
        message: Option<usize>,
        /// `MSH-7`, `PID(2)-7`, `segment 4`, or empty for the whole input.
        path: &'a str,
        /// The stable code, `HL7_...`.
        code: &'static str,
        /// `error` or `warning`.
        severity: Severity,
        /// What is wrong, without the value.
        text: &'a str,
        /// The value, as text (with -v only: values are payload).
        #[serde(skip_serializing_if = "Option::is_none")]
        value: Option<String>,
    },
    /// The whole run.
    Summary {
        /// Messages checked.
        messages: u64,
        /// Messages with at least one error.
        with_errors: u64,
        /// Messages with warnings and no error.
        with_warnings: u64,
        /// Messages --where left out.
        filtered: u64,
        /// The code the command exits with.
        exit_code: u8,
    },
}

/// The value of a finding as text, when it is to be shown.
pub fn value_text(finding: &Finding, charset: Charset, show: bool) -> Option<String> {
    let value = finding.value.as_deref().filter(|_| show)?;
    Some(charset.decode(value).into_string())
}

/// One finding for people: `source  path  CODE  severity  what [value]`.
pub fn line(
    label: &str,
    finding: &Finding,
    value: Option<&str>,
    paint: impl Fn(&str, &str) -> String,
) -> String {
    let source = match finding.message {
        Some(n) => format!("{label}/{n}"),
        None => label.to_string(),
    };
    let severity = match finding.severity {
        Severity::Error => paint("error", "31"),
        Severity::Warning => paint("warning", "33"),
    };
    let mut text = format!(
        "{source}  {}  {}  {severity}: {}",
        if finding.at.is_empty() {
            "-"
        } else {
            &finding.at
        },
        finding.code,
        finding.what
    );
    if let Some(value) = value {
        text.push_str(": ");
        escape_controls(value, &mut text);
    }
    text
}
