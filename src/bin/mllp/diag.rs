//! Diagnostics on stderr: human lines or one JSON object per line, never payload bytes. Every
//! stderr write of the binary goes through here, so `--log-format json` holds for all of them.

pub mod fatal;

pub use fatal::Fatal;

use crate::cli::{ColorChoice, GlobalArgs, LogFormat};
use serde_json::{Map, Value};
use std::io::{IsTerminal, Write};
use std::sync::atomic::{AtomicBool, Ordering};

/// What `MLLP_TLS_VERIFY_DISABLED` means, said on every connect under `--insecure`.
pub const VERIFY_DISABLED: &str = "TLS certificate verification is disabled (--insecure): the \
                                   peer is not authenticated and the link may be intercepted";

/// The log format for writers that hold no `Diag` (stdout's failure, `main`'s last error); set
/// once, when the `Diag` is made.
static JSON: AtomicBool = AtomicBool::new(false);

/// Whether diagnostics are JSON lines.
pub fn json() -> bool {
    JSON.load(Ordering::Relaxed)
}

/// Set the format for the writers that hold no `Diag`.
pub fn set_format(format: LogFormat) {
    let json = format == LogFormat::Json;
    if json && !JSON.swap(true, Ordering::Relaxed) {
        // A bug report is a stderr line too.
        std::panic::set_hook(Box::new(|info| {
            let message = info.to_string();
            emit(
                "panic",
                String::new,
                serde_json::json!({ "message": message }),
            );
        }));
    }
    JSON.store(json, Ordering::Relaxed);
}

/// One event in the process-wide format, for writers that hold no `Diag`.
pub fn emit(event: &str, human: impl FnOnce() -> String, fields: Value) {
    write_line(&render(json(), event, human, fields));
}

/// Write one prepared line (from [`Diag::line`]) whole.
pub fn write_line(line: &str) {
    let mut err = std::io::stderr().lock();
    let _ = writeln!(err, "{line}");
}

/// `fields` plus `event`, as one line; or the human text.
fn render(json: bool, event: &str, human: impl FnOnce() -> String, fields: Value) -> String {
    if !json {
        return human();
    }
    let mut ordered = Map::new();
    ordered.insert("event".into(), Value::String(event.into()));
    if let Value::Object(map) = fields {
        for (k, v) in map {
            if k != "event" {
                ordered.insert(k, v);
            }
        }
    }
    Value::Object(ordered).to_string()
}

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
        set_format(global.log_format);
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
        write_line(&self.line(event, human, fields));
    }

    /// The text of one event without its newline, for callers that batch their writes.
    pub fn line(&self, event: &str, human: impl FnOnce() -> String, fields: Value) -> String {
        render(self.json(), event, human, fields)
    }

    /// A security warning is shown even under `--quiet`.
    pub fn security_warning(&self, code: &str, text: &str) {
        write_line(&self.security_warning_line(code, text));
    }

    /// The text of a security warning, for callers that write around a progress display.
    pub fn security_warning_line(&self, code: &str, text: &str) -> String {
        self.line(
            "security_warning",
            || format!("{} {code}: {text}", self.paint("warning:", "1;33")),
            serde_json::json!({ "code": code, "message": text }),
        )
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
/// The width human text is laid out for: the usual terminal.
pub const TEXT_WIDTH: usize = 80;

/// `items` laid out in lines of at most `width` columns, each line starting with `indent` and
/// items separated by `sep`: a line breaks between items, never inside one.
pub fn pack(items: &[String], width: usize, indent: &str, sep: &str) -> Vec<String> {
    let mut lines = Vec::new();
    let mut line = String::new();
    for item in items {
        if !line.is_empty() && line.len() + sep.len() + item.len() > width {
            lines.push(std::mem::take(&mut line));
        }
        if line.is_empty() {
            line.push_str(indent);
        } else {
            line.push_str(sep);
        }
        line.push_str(item);
    }
    if !line.is_empty() {
        lines.push(line);
    }
    lines
}

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
