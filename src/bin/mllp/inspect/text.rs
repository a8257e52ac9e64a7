//! Values as text for people and tables: the character set each message is read in, a cell
//! with its tabs and line breaks escaped, and the one warning at the end for the messages whose
//! bytes did not all decode.

use crate::diag::{count, Diag};
use mllp::hl7::{Charset, Message, Text, Value};
use mllp::warning::WarningCode;
use serde_json::json;

/// `text` as one cell of a tab-separated line: backslash, tab, CR, LF and the other control
/// characters escaped (`\\`, `\t`, `\r`, `\n`, `\x1b`).
pub fn escape_cell(text: &str, out: &mut String) {
    escape(text, out, true);
}

/// `text` on one line of a terminal: tab, CR, LF and the other control characters escaped
/// (`\t`, `\r`, `\n`, `\x1b`), a backslash as it is.
pub fn escape_controls(text: &str, out: &mut String) {
    escape(text, out, false);
}

fn escape(text: &str, out: &mut String, backslash: bool) {
    for c in text.chars() {
        match c {
            '\\' if backslash => out.push_str("\\\\"),
            '\t' => out.push_str("\\t"),
            '\r' => out.push_str("\\r"),
            '\n' => out.push_str("\\n"),
            c if c.is_control() => {
                use std::fmt::Write;
                let _ = write!(out, "\\x{:02x}", c as u32);
            }
            c => out.push(c),
        }
    }
}

/// A value as `show` and `check -v` give it: a value without parts (no component,
/// subcomponent or repetition separator in it) with its escape sequences decoded, one with
/// parts as written (a decoded `\S\` would pass for a separator), and with `raw` every value
/// as written; the bytes read in `charset`.
pub fn shown<'a>(value: &Value<'a>, charset: Charset, raw: bool) -> Text<'a> {
    let d = value.delimiters();
    let parts = value
        .raw()
        .iter()
        .any(|&b| b == d.component || b == d.subcomponent || b == d.repetition);
    match raw || parts {
        true => charset.decode(value.raw()),
        false => value.text(charset),
    }
}

/// The messages whose text did not all decode, or whose MSH-18 was not known, for one warning
/// each at the end of the run (not one per message).
#[derive(Debug, Default)]
pub struct TextWarnings {
    chosen: Option<Charset>,
    undecodable: u64,
    first_undecodable: Option<String>,
    unknown: u64,
    first_unknown: Option<String>,
}

impl TextWarnings {
    /// Warnings for a run that reads text in `chosen` when given (`--charset`).
    pub fn new(chosen: Option<Charset>) -> Self {
        TextWarnings {
            chosen,
            ..TextWarnings::default()
        }
    }

    /// The character set to read `message` (labelled `label`) in.
    pub fn charset(&mut self, message: &Message<'_>, label: impl FnOnce() -> String) -> Charset {
        match Charset::for_message(message, self.chosen) {
            Ok(charset) => charset,
            Err(_) => {
                self.unknown += 1;
                self.first_unknown.get_or_insert_with(label);
                Charset::UTF_8
            }
        }
    }

    /// `undecodable` bytes of the message labelled `label` did not decode.
    pub fn undecodable(&mut self, undecodable: usize, label: impl FnOnce() -> String) {
        if undecodable > 0 {
            self.undecodable += 1;
            self.first_undecodable.get_or_insert_with(label);
        }
    }

    /// Say what was counted, once, on stderr.
    pub fn report(&self, diag: &Diag) {
        if let Some(first) = &self.first_unknown {
            let code = WarningCode::CharsetUnknown.as_str();
            diag.event(
                "warning",
                || {
                    format!(
                        "{} {code}: MSH-18 of {} (the first: {first}) names a character set \
                         not known here; read as UTF-8; --charset NAME reads them in another",
                        diag.paint("warning:", "33"),
                        count(self.unknown, "message"),
                    )
                },
                json!({"code": code, "messages": self.unknown, "first": first}),
            );
        }
        if let Some(first) = &self.first_undecodable {
            let code = WarningCode::TextNotInCharset.as_str();
            diag.event(
                "warning",
                || {
                    format!(
                        "{} {code}: bytes their character set cannot decode in {} (the first: \
                         {first}), shown as \\Xhh\\; --charset NAME reads them in another",
                        diag.paint("warning:", "33"),
                        count(self.undecodable, "message"),
                    )
                },
                json!({"code": code, "messages": self.undecodable, "first": first}),
            );
        }
    }
}
