//! What is replaced and how: rules of a path and a method, the standard ones for the
//! identifying fields of the common segments, and a site's own read from a file on top.
//!
//! A rule's path is read as a rule (see [`crate::hl7::Place`]): `PID-5.1` is the first
//! component of every repetition of PID-5 in every PID. Where several rules take in a value,
//! the one that reaches deepest decides, and among equals the site's.

use super::rule::{Method, Rule, When};
use crate::hl7::{Path, PathError, Place};
use serde::Deserialize;
use std::collections::BTreeMap;
use std::fmt;

/// A whole policy: the rules, grouped by segment for the pass over a message.
#[derive(Debug, Clone)]
pub struct Policy {
    rules: Vec<Rule>,
}

/// A policy as a file writes it:
///
/// ```toml
/// standard = true            # start from the standard rules (the default), or from none
///
/// [paths]
/// "ZPI-3" = "hash"
/// "PID-11.3" = "keep"
/// "MSH-7" = "shift-date"
/// "OBX-5" = { method = "hash", when = { "OBX-2" = ["TX", "FT", "ST", "CE"] } }
/// ```
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawPolicy {
    /// Start from the standard rules.
    #[serde(default = "yes")]
    pub standard: bool,
    /// Rules by path.
    #[serde(default)]
    pub paths: BTreeMap<String, RawRule>,
}

fn yes() -> bool {
    true
}

/// One rule as written: a method alone, or with a condition.
#[derive(Debug, Clone, Deserialize)]
#[serde(untagged)]
pub enum RawRule {
    /// `"hash"`.
    Method(Method),
    /// `{ method = "hash", when = { "OBX-2" = ["TX"] } }`.
    Full {
        /// How.
        method: Method,
        /// Only in segments whose field (a path of the same segment) holds one of the values.
        #[serde(default)]
        when: BTreeMap<String, Vec<String>>,
    },
}

/// A policy entry that cannot be used, named by where it is.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{entry}: {what}")]
pub struct PolicyError {
    /// The entry: `paths."PID-3"`.
    pub entry: String,
    /// What is wrong and what to write instead.
    pub what: String,
}

impl Policy {
    /// The standard rules: the identifying fields of the common segments.
    pub fn standard() -> Policy {
        Policy {
            rules: super::standard::rules(),
        }
    }

    /// A policy from a file's rules, on top of the standard ones unless it says otherwise.
    pub fn from_raw(raw: RawPolicy) -> Result<Policy, PolicyError> {
        let mut site = Vec::with_capacity(raw.paths.len());
        for (text, rule) in raw.paths {
            let entry = format!("paths.\"{text}\"");
            let fail = |what: String| PolicyError {
                entry: entry.clone(),
                what,
            };
            let path: Path = text.parse().map_err(|e: PathError| fail(e.to_string()))?;
            if path.segment() == b"MSH" && path.field() <= 2 {
                return Err(fail(
                    "MSH-1 and MSH-2 are the message's delimiters and are never replaced".into(),
                ));
            }
            let (method, when) = match rule {
                RawRule::Method(method) => (method, None),
                RawRule::Full { method, when } => (method, condition(&path, when).map_err(fail)?),
            };
            site.push(Rule { path, method, when });
        }
        let mut rules = match raw.standard {
            true => super::standard::rules(),
            false => Vec::new(),
        };
        // A site's rule replaces the standard ones it takes in whole.
        rules.retain(|r| !site.iter().any(|s| s.path.takes_in(&r.path)));
        rules.extend(site);
        Ok(Policy { rules })
    }

    /// The rules, standard ones first.
    pub fn rules(&self) -> &[Rule] {
        &self.rules
    }

    /// Of the rules in `candidates` (indexes), the one that decides for `place`.
    pub(super) fn decide(&self, candidates: &[usize], place: &Place<'_>) -> Option<usize> {
        candidates
            .iter()
            .copied()
            .filter(|&i| self.rules[i].path.covers(place))
            // Deepest first; among equals the later (a site's rule after the standard ones).
            .max_by_key(|&i| (self.rules[i].path.depth(), i))
    }
}

/// `when = { "OBX-2" = [...] }`: a field of the rule's own segment, read whole.
fn condition(path: &Path, when: BTreeMap<String, Vec<String>>) -> Result<Option<When>, String> {
    let mut conditions = when.into_iter();
    let Some((text, values)) = conditions.next() else {
        return Ok(None);
    };
    if conditions.next().is_some() {
        return Err("`when` takes one field".into());
    }
    let field: Path = text.parse().map_err(|e: PathError| e.to_string())?;
    if field.segment() != path.segment() || !field.is_field() {
        return Err(format!(
            "`when` names a field of the rule's own segment, as `{}-2`",
            String::from_utf8_lossy(path.segment())
        ));
    }
    Ok(Some(When {
        field: field.field(),
        values,
    }))
}

impl fmt::Display for Rule {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} {}", self.path, self.method.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn raw(json: &str) -> RawPolicy {
        serde_json::from_str(json).unwrap()
    }

    #[test]
    fn a_site_rule_replaces_the_standard_ones_it_takes_in() {
        let standard = Policy::standard();
        assert!(standard
            .rules()
            .iter()
            .any(|r| r.path.to_string() == "PID-5.1"));
        let policy =
            Policy::from_raw(raw(r#"{"paths":{"PID-5":"blank","ZPI-2":"name"}}"#)).unwrap();
        let pid5: Vec<_> = policy
            .rules()
            .iter()
            .filter(|r| r.path.segment() == b"PID" && r.path.field() == 5)
            .map(|r| r.to_string())
            .collect();
        assert_eq!(pid5, ["PID-5 blank"]);
        assert!(policy.rules().iter().any(|r| r.to_string() == "ZPI-2 name"));
        let none = Policy::from_raw(raw(r#"{"standard":false,"paths":{"ZPI-2":"hash"}}"#)).unwrap();
        assert_eq!(none.rules().len(), 1);
    }

    #[test]
    fn names_the_entry_that_is_wrong() {
        let e = Policy::from_raw(raw(r#"{"paths":{"PID-x":"hash"}}"#)).unwrap_err();
        assert_eq!(e.entry, "paths.\"PID-x\"");
        let e = Policy::from_raw(raw(r#"{"paths":{"MSH-2":"hash"}}"#)).unwrap_err();
        assert!(e.what.contains("delimiters"), "{e}");
        let e = Policy::from_raw(raw(
            r#"{"paths":{"OBX-5":{"method":"hash","when":{"PID-2":["TX"]}}}}"#,
        ))
        .unwrap_err();
        assert!(e.what.contains("OBX-2"), "{e}");
        assert!(serde_json::from_str::<RawPolicy>(r#"{"paths":{"PID-3":"scramble"}}"#).is_err());
        assert!(serde_json::from_str::<RawPolicy>(r#"{"rules":{}}"#).is_err());
    }

    #[test]
    fn the_deepest_rule_decides() {
        let policy = Policy::from_raw(raw(r#"{"paths":{"PID-11":"hash","PID-11.3":"keep"}}"#));
        let policy = policy.unwrap();
        let candidates: Vec<usize> = (0..policy.rules().len())
            .filter(|&i| policy.rules()[i].path.segment() == b"PID")
            .collect();
        let leaf = |c| Place {
            repetition: Some(1),
            component: Some(c),
            subcomponent: Some(1),
            ..Place::field(b"PID", 1, 11)
        };
        let method = |c| policy.rules()[policy.decide(&candidates, &leaf(c)).unwrap()].method;
        assert_eq!(method(3), Method::Keep);
        assert_eq!(method(1), Method::Hash);
    }
}
