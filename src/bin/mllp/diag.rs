//! Diagnostics on stderr: human lines or one JSON object per line, never payload bytes. Every
//! stderr write of the binary goes through here, so `--log-format json` holds for all of them.
//! The events are typed in `mllp::output` (`say`); listen's and stdout's still name theirs
//! (`event`, `emit`) with JSON fields.

pub mod fatal;
pub mod warnings;

pub use fatal::Fatal;

use crate::global::{ColorChoice, GlobalArgs, LogFormat};
use crate::output::diag::Diagnostic;
use serde::Serialize;
use serde_json::Value;
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
            say(String::new, &Diagnostic::Panic { message: &message });
        }));
    }
    JSON.store(json, Ordering::Relaxed);
}

/// One typed event (it carries its own `event` name) in the process-wide format.
pub fn say(human: impl FnOnce() -> String, event: &impl Serialize) {
    write_line(&render(json(), human, event));
}

/// A status drawn at the foot of stderr (the relay's): while one is set, every write goes above
/// it, so a line never runs through the status.
static STATUS: std::sync::Mutex<Option<indicatif::ProgressBar>> = std::sync::Mutex::new(None);

/// Set (or with `None`, drop) the status the writes go around.
pub fn draw_around(bar: Option<indicatif::ProgressBar>) {
    *STATUS.lock().unwrap_or_else(|p| p.into_inner()) = bar;
}

/// Write one prepared line (from [`Diag::line`]) whole.
pub fn write_line(line: &str) {
    write_text(&format!("{line}\n"));
}

/// Write whole lines (each ending in a newline) in one call, around the status if one is drawn.
pub fn write_text(text: &str) {
    let write = || {
        let mut err = std::io::stderr().lock();
        let _ = err.write_all(text.as_bytes());
        let _ = err.flush();
    };
    let status = STATUS.lock().unwrap_or_else(|p| p.into_inner()).clone();
    match status {
        Some(bar) => bar.suspend(write),
        None => write(),
    }
}

/// The JSON line of `event`, or the human text.
fn render(json: bool, human: impl FnOnce() -> String, event: &impl Serialize) -> String {
    if json {
        crate::output::line(event)
    } else {
        human()
    }
}

/// `fields` under the name `event`, for events not typed in `mllp::output`.
fn named(event: &str, fields: Value) -> Value {
    let mut fields = match fields {
        Value::Object(map) => map,
        _ => Default::default(),
    };
    fields.insert("event".into(), Value::String(event.into()));
    Value::Object(fields)
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
        render(self.json(), human, &named(event, fields))
    }

    /// A typed event (it carries its own `event` name), written whole.
    pub fn say(&self, human: impl FnOnce() -> String, event: &impl Serialize) {
        write_line(&self.said(human, event));
    }

    /// The text of a typed event without its newline, for callers that batch their writes.
    pub fn said(&self, human: impl FnOnce() -> String, event: &impl Serialize) -> String {
        render(self.json(), human, event)
    }

    /// A security warning is shown even under `--quiet`.
    pub fn security_warning(&self, code: &str, text: &str) {
        write_line(&self.security_warning_line(code, text));
    }

    /// The text of a security warning, for callers that write around a progress display.
    pub fn security_warning_line(&self, code: &str, text: &str) -> String {
        self.said(
            || format!("{} {code}: {text}", self.paint("warning:", "1;33")),
            &Diagnostic::SecurityWarning {
                code,
                message: text,
            },
        )
    }

    pub fn paint(&self, text: &str, sgr: &str) -> String {
        paint(self.color, text, sgr)
    }
}

/// `text` in the terminal colour `sgr` when `color`, else as it is.
pub fn paint(color: bool, text: &str, sgr: &str) -> String {
    match color {
        true => format!("\x1b[{sgr}m{text}\x1b[0m"),
        false => text.to_string(),
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
