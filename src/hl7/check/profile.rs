//! A site's own rules on top of the standard's: paths that must have a value, the values a
//! path may hold (a list or a pattern), the longest a value may be, and the segments each
//! message type must have. Read from TOML or JSON by the caller into a [`RawProfile`], then
//! checked once into a [`Profile`].

use super::{finding, Code, Finding, Severity};
use crate::hl7::{Charset, Message, Path};
use serde::Deserialize;
use std::collections::BTreeMap;

/// A profile as written:
///
/// ```toml
/// required = ["PID-3.1", "PV1-2"]
///
/// [allowed]
/// "MSH-11" = ["P", "T"]
/// "PID-8" = { pattern = "[MFOUAN]" }
///
/// [max_length]
/// "PID-5.1" = 50
///
/// [segments]
/// "ADT^A01" = ["EVN", "PID", "PV1"]
/// "ORU" = ["PID", "OBR", "OBX"]
/// ```
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawProfile {
    /// Paths that must have a value (under `*`: at least one).
    #[serde(default)]
    pub required: Vec<String>,
    /// The values a path may hold.
    #[serde(default)]
    pub allowed: BTreeMap<String, RawAllowed>,
    /// The most characters a path's value may have.
    #[serde(default)]
    pub max_length: BTreeMap<String, usize>,
    /// The segments a message type must have: `ADT^A01` (code and trigger) or `ADT` (every
    /// trigger of the code).
    #[serde(default)]
    pub segments: BTreeMap<String, Vec<String>>,
}

/// The values a path may hold, as written.
#[derive(Debug, Clone, Deserialize)]
#[serde(untagged)]
pub enum RawAllowed {
    /// One of these.
    List(Vec<String>),
    /// Matching this regular expression, whole.
    Pattern {
        /// The expression (the regex crate's syntax).
        pattern: String,
    },
}

/// The values a path may hold.
#[derive(Debug, Clone)]
pub enum Allowed {
    /// One of these.
    List(Vec<String>),
    /// Matching this expression, whole.
    Pattern(regex::Regex),
}

/// A profile whose paths, patterns and segment names are all valid.
#[derive(Debug, Clone, Default)]
pub struct Profile {
    required: Vec<Path>,
    allowed: Vec<(Path, Allowed)>,
    max_length: Vec<(Path, usize)>,
    segments: Vec<(String, Vec<[u8; 3]>)>,
}

/// A profile entry that cannot be used, named by where it is.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{entry}: {what}")]
pub struct ProfileError {
    /// The entry: `required`, `allowed."PID-8"`, ...
    pub entry: String,
    /// What is wrong with it.
    pub what: String,
}

impl Profile {
    /// Check every entry of `raw` and build the profile; the first bad entry is the error.
    pub fn from_raw(raw: RawProfile) -> Result<Profile, ProfileError> {
        let fail = |entry: String, what: String| ProfileError { entry, what };
        let path = |entry: &str, text: &str| {
            text.parse::<Path>()
                .map_err(|e| fail(entry.to_string(), e.to_string()))
        };
        let required = raw
            .required
            .iter()
            .map(|p| path("required", p))
            .collect::<Result<_, _>>()?;
        let mut allowed = Vec::new();
        for (p, values) in &raw.allowed {
            let entry = format!("allowed.\"{p}\"");
            let values = match values {
                RawAllowed::List(list) => Allowed::List(list.clone()),
                RawAllowed::Pattern { pattern } => {
                    let whole = format!("^(?:{pattern})$");
                    let regex = regex::Regex::new(&whole).map_err(|e| {
                        fail(entry.clone(), format!("not a regular expression: {e}"))
                    })?;
                    Allowed::Pattern(regex)
                }
            };
            allowed.push((path(&entry, p)?, values));
        }
        let mut max_length = Vec::new();
        for (p, &max) in &raw.max_length {
            max_length.push((path(&format!("max_length.\"{p}\""), p)?, max));
        }
        let mut segments = Vec::new();
        for (kind, names) in &raw.segments {
            let entry = format!("segments.\"{kind}\"");
            let mut ids = Vec::new();
            for name in names {
                let id: [u8; 3] = name
                    .as_bytes()
                    .try_into()
                    .ok()
                    .filter(|id: &[u8; 3]| {
                        id.iter()
                            .all(|b| b.is_ascii_uppercase() || b.is_ascii_digit())
                    })
                    .ok_or_else(|| {
                        fail(
                            entry.clone(),
                            format!(
                                "`{name}` is not a segment ID (three upper-case letters or digits)"
                            ),
                        )
                    })?;
                ids.push(id);
            }
            segments.push((kind.clone(), ids));
        }
        Ok(Profile {
            required,
            allowed,
            max_length,
            segments,
        })
    }

    /// The profile's findings on one message.
    pub(super) fn check(&self, payload: &[u8], findings: &mut Vec<Finding>) {
        let message = Message::new(payload);
        let charset = Charset::for_message(&message, None).unwrap_or(Charset::UTF_8);
        for path in &self.required {
            if message.values(path).all(|v| v.is_empty()) {
                findings.push(finding(
                    Code::ProfileFieldMissing,
                    Severity::Error,
                    path.to_string(),
                    "the profile requires a value here",
                    None,
                ));
            }
        }
        for (path, allowed) in &self.allowed {
            for value in message.values(path).filter(|v| !v.is_empty()) {
                let text = value.text(charset);
                let ok = match allowed {
                    Allowed::List(list) => list.iter().any(|a| a == text.as_str()),
                    Allowed::Pattern(regex) => regex.is_match(text.as_str()),
                };
                if !ok {
                    findings.push(finding(
                        Code::ProfileValueNotAllowed,
                        Severity::Error,
                        path.to_string(),
                        "a value the profile does not allow here",
                        Some(value.raw()),
                    ));
                }
            }
        }
        for (path, max) in &self.max_length {
            for value in message.values(path) {
                if value.text(charset).as_str().chars().count() > *max {
                    findings.push(finding(
                        Code::ProfileValueTooLong,
                        Severity::Error,
                        path.to_string(),
                        format!("longer than the profile's {max} characters"),
                        Some(value.raw()),
                    ));
                }
            }
        }
        self.check_segments(&message, findings);
    }

    fn check_segments(&self, message: &Message<'_>, findings: &mut Vec<Finding>) {
        let get = |p: &str| {
            message
                .get(&p.parse().unwrap_or_else(|e| unreachable!("{e}")))
                .raw()
        };
        let (code, trigger) = (get("MSH-9.1"), get("MSH-9.2"));
        for (kind, ids) in &self.segments {
            let applies = match kind.split_once('^') {
                Some((c, t)) => c.as_bytes() == code && t.as_bytes() == trigger,
                None => kind.as_bytes() == code,
            };
            if !applies {
                continue;
            }
            for id in ids {
                if message.segment(id, 1).is_none() {
                    findings.push(finding(
                        Code::ProfileSegmentMissing,
                        Severity::Error,
                        String::from_utf8_lossy(id).into_owned(),
                        format!("the profile requires this segment in {kind}"),
                        None,
                    ));
                }
            }
        }
    }
}
