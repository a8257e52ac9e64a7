//! The time on every listen event: RFC 3339 UTC to the millisecond, a prefix of the human line
//! and the `time` field of the JSON object, so a long-running receiver's log says when.

use crate::diag::Diag;
use serde_json::Value;
use std::time::SystemTime;

/// One moment, formatted once and put on every line written with it (a batch of events
/// gathered within about a millisecond shares it).
pub struct Stamp(String);

impl Stamp {
    pub fn now() -> Stamp {
        Stamp::at(SystemTime::now())
    }

    pub fn at(time: SystemTime) -> Stamp {
        Stamp(humantime::format_rfc3339_millis(time).to_string())
    }

    #[cfg(test)]
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// The line of event `name`: the stamp then `human`, or `fields` with `event` and `time`.
    pub fn line(
        &self,
        diag: &Diag,
        name: &str,
        human: impl FnOnce() -> String,
        mut fields: Value,
    ) -> String {
        if diag.json() {
            if let Value::Object(map) = &mut fields {
                map.insert("time".into(), Value::String(self.0.clone()));
            } else {
                fields = serde_json::json!({ "time": self.0 });
            }
            diag.line(name, String::new, fields)
        } else {
            let human = human();
            let mut line = String::with_capacity(self.0.len() + 1 + human.len());
            line.push_str(&self.0);
            line.push(' ');
            line.push_str(&human);
            line
        }
    }

    /// The human prefix, for a line written in place.
    pub fn push_prefix(&self, text: &mut String) {
        text.push_str(&self.0);
        text.push(' ');
    }
}
