//! `diff --json`: one record per finding (a pair that differs, a message alone on its side, a
//! key seen twice), then the summary. Values appear only in `differences`, where the user
//! asked for them, and not under `--no-values`.

use serde::ser::{SerializeMap, Serializer};
use serde::Serialize;

/// A key by path: `{"MSH-10": "C1"}`.
pub struct KeyRecord<'a> {
    pub paths: &'a [String],
    /// `None` where `--no-values` hides the value (null).
    pub values: Vec<Option<String>>,
}

impl Serialize for KeyRecord<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(Some(self.paths.len()))?;
        for (path, value) in self.paths.iter().zip(&self.values) {
            map.serialize_entry(path, value)?;
        }
        map.end()
    }
}

/// Where a pair differs, with both values unless `--no-values`.
#[derive(Serialize)]
pub struct DifferenceRecord<'a> {
    pub path: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub a: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub b: Option<&'a str>,
}

/// One finding; `type` says which.
#[derive(Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum FindingRecord<'a> {
    /// A pair whose messages differ: both messages and where they differ.
    Different {
        key: KeyRecord<'a>,
        a: &'a str,
        b: &'a str,
        differences: Vec<DifferenceRecord<'a>>,
    },
    /// A message of A the other side has no partner for.
    OnlyInA {
        key: KeyRecord<'a>,
        message: &'a str,
    },
    /// A message of B the other side has no partner for.
    OnlyInB {
        key: KeyRecord<'a>,
        message: &'a str,
    },
    /// A key a side has more than once (said once per key and side), with the message that has
    /// it the second time.
    KeyTwice {
        side: &'static str,
        key: KeyRecord<'a>,
        message: &'a str,
    },
}

/// The counts, last.
#[derive(Serialize)]
pub struct DiffSummary {
    #[serde(rename = "type")]
    pub kind: &'static str,
    #[serde(flatten)]
    pub counts: mllp::diff::Summary,
    pub exit_code: u8,
}

/// The counts on stderr under `--log-format json` (without `--json`).
#[derive(Serialize)]
pub struct SummaryEvent {
    pub event: &'static str,
    #[serde(flatten)]
    pub counts: mllp::diff::Summary,
    pub exit_code: u8,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::output::line;

    #[test]
    fn each_record_keeps_its_field_names() {
        let paths = ["MSH-10".to_string()];
        let key = || KeyRecord {
            paths: &paths,
            values: vec![Some("C1".into())],
        };
        let different = FindingRecord::Different {
            key: key(),
            a: "a.hl7#1",
            b: "b.hl7#1",
            differences: vec![
                DifferenceRecord {
                    path: "PID-5.2",
                    a: Some("JANE"),
                    b: Some(""),
                },
                DifferenceRecord {
                    path: "PID-7",
                    a: None,
                    b: None,
                },
            ],
        };
        assert_eq!(
            line(&different),
            r#"{"a":"a.hl7#1","b":"b.hl7#1","differences":[{"a":"JANE","b":"","path":"PID-5.2"},{"path":"PID-7"}],"key":{"MSH-10":"C1"},"type":"different"}"#
        );
        assert_eq!(
            line(&FindingRecord::OnlyInB {
                key: key(),
                message: "b.hl7#2"
            }),
            r#"{"key":{"MSH-10":"C1"},"message":"b.hl7#2","type":"only_in_b"}"#
        );
        assert_eq!(
            line(&FindingRecord::KeyTwice {
                side: "a",
                key: key(),
                message: "a.hl7#3"
            }),
            r#"{"key":{"MSH-10":"C1"},"message":"a.hl7#3","side":"a","type":"key_twice"}"#
        );
        let summary = DiffSummary {
            kind: "summary",
            counts: mllp::diff::Summary {
                same: 3,
                ..Default::default()
            },
            exit_code: 0,
        };
        assert_eq!(
            line(&summary),
            r#"{"different":0,"exit_code":0,"filtered_out_a":0,"filtered_out_b":0,"keys_twice_in_a":0,"keys_twice_in_b":0,"only_in_a":0,"only_in_b":0,"same":3,"type":"summary"}"#
        );
    }
}
