//! Diagnostics on stderr: human lines or one JSON object per line, never payload bytes.

use crate::cli::{ColorChoice, GlobalArgs, LogFormat};
use serde_json::{Map, Value};
use std::io::{IsTerminal, Write};

#[derive(Debug, Clone)]
pub struct Diag {
    pub format: LogFormat,
    pub verbose: u8,
    pub quiet: bool,
    pub color: bool,
    /// Colour for data on stdout (`--color`, and whether stdout is a terminal).
    pub stdout_color: bool,
}

impl Diag {
    pub fn new(global: &GlobalArgs) -> Self {
        let wants = |terminal: bool| match global.color {
            ColorChoice::Always => true,
            ColorChoice::Never => false,
            ColorChoice::Auto => terminal && std::env::var_os("NO_COLOR").is_none(),
        };
        let color = wants(std::io::stderr().is_terminal());
        let stdout_color = wants(std::io::stdout().is_terminal());
        Diag {
            format: global.log_format,
            verbose: global.verbose,
            quiet: global.quiet,
            color,
            stdout_color,
        }
    }

    pub fn json(&self) -> bool {
        self.format == LogFormat::Json
    }

    /// One event: `human` for people, `fields` (plus `event`) for machines. Written whole, in one
    /// call, so lines from different tasks never interleave.
    pub fn event(&self, event: &str, human: impl FnOnce() -> String, fields: Value) {
        let line = self.line(event, human, fields);
        let mut err = std::io::stderr().lock();
        let _ = writeln!(err, "{line}");
    }

    /// The text of one event without its newline, for callers that batch their writes.
    pub fn line(&self, event: &str, human: impl FnOnce() -> String, fields: Value) -> String {
        if self.json() {
            let mut map = match fields {
                Value::Object(map) => map,
                _ => Map::new(),
            };
            map.insert("event".into(), Value::String(event.into()));
            let mut ordered = Map::new();
            ordered.insert("event".into(), Value::String(event.into()));
            for (k, v) in map {
                if k != "event" {
                    ordered.insert(k, v);
                }
            }
            Value::Object(ordered).to_string()
        } else {
            human()
        }
    }

    /// A security warning is shown even under `--quiet`.
    pub fn security_warning(&self, code: &str, text: &str) {
        self.event(
            "security_warning",
            || format!("{} {code}: {text}", self.paint("warning:", "1;33")),
            serde_json::json!({ "code": code, "message": text }),
        );
    }

    pub fn paint(&self, text: &str, sgr: &str) -> String {
        if self.color {
            format!("\x1b[{sgr}m{text}\x1b[0m")
        } else {
            text.to_string()
        }
    }
}

/// `1 message`, `2 messages`: a count and its noun, agreeing in number.
pub fn count(n: u64, noun: &str) -> String {
    if n == 1 {
        format!("1 {noun}")
    } else {
        format!("{n} {noun}s")
    }
}

#[cfg(test)]
mod tests {
    use super::count;

    #[test]
    fn a_count_agrees_with_its_noun() {
        assert_eq!(count(0, "message"), "0 messages");
        assert_eq!(count(1, "message"), "1 message");
        assert_eq!(count(2, "probe"), "2 probes");
    }
}
