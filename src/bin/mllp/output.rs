//! The JSON output contract: every record `mllp` writes on stdout and every event it writes on
//! stderr under `--log-format json`, as typed values built from the library's own types.
//!
//! - [`deid`]: `deid`'s report on stderr: replacements per path, never a value.
//! - [`diff`]: `diff --json`: one record per finding, then the summary.
//! - [`diag`]: the events every command shares (`error`, `panic`, `security_warning`,
//!   `stdout_error`, `metrics_listening`).
//! - [`probe`]: `probe --json`: one record per probe, then the statistics.
//! - [`send`]: `send --json`: one record per message and the summary; `--dry-run`'s listing;
//!   send's events on stderr.
//! - [`soak`]: soak's events on stderr (`progress`, `state_change`, `interrupted`, `report`);
//!   the report itself is [`mllp::soak::SoakReport`].
//!
//! Fields are added, never renamed or removed. Stdout records carry their kind in `type`,
//! stderr events their name in `event`. [`line()`] writes any of them as one line of JSON with
//! the keys in alphabetical order at every level (the order the command has always written);
//! the Rust field order of a record is the order its documentation reads in, except for
//! [`send::MessageRecord`], declared in key order so that it is written straight, without a map
//! per message. (Soak's report file keeps its own field order: it is the serialized
//! [`mllp::soak::SoakReport`].) No record carries
//! message bytes, except the ACK of `send --print-ack`.

pub mod deid;
pub mod diag;
pub mod diff;
pub mod probe;
pub mod send;
pub mod soak;

use serde::Serialize;
use std::time::Duration;

/// `record` as one line of JSON, without its newline: keys sorted at every level.
pub fn line<T: Serialize + ?Sized>(record: &T) -> String {
    // Through `Value`, whose maps are ordered by key: the bytes do not depend on field order.
    serde_json::to_value(record)
        .unwrap_or(serde_json::Value::Null)
        .to_string()
}

/// Milliseconds to one decimal, as latencies and run times are reported.
pub fn tenth_ms(d: Duration) -> f64 {
    (d.as_secs_f64() * 10_000.0).round() / 10.0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Serialize)]
    struct Unsorted {
        zulu: u8,
        alpha: Option<u8>,
    }

    #[test]
    fn keys_come_out_sorted_whatever_the_field_order() {
        let record = Unsorted {
            zulu: 1,
            alpha: None,
        };
        assert_eq!(line(&record), r#"{"alpha":null,"zulu":1}"#);
        assert_eq!(tenth_ms(Duration::from_micros(12_345)), 12.3);
    }
}
