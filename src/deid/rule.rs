//! One rule of a policy: the values a path takes in and the method that replaces them.

use crate::hl7::Path;
use serde::Deserialize;

/// How a value is replaced.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Method {
    /// A value of the same shape: digits for digits, letters for letters, length kept.
    Hash,
    /// A name from the built-in list of fictitious names.
    Name,
    /// The date moved by the patient's offset, its precision kept.
    ShiftDate,
    /// Emptied.
    Blank,
    /// Left as it is.
    Keep,
}

impl Method {
    /// The method as a policy writes it.
    pub fn as_str(self) -> &'static str {
        match self {
            Method::Hash => "hash",
            Method::Name => "name",
            Method::ShiftDate => "shift-date",
            Method::Blank => "blank",
            Method::Keep => "keep",
        }
    }
}

/// A condition on another field of the same segment: its first component is one of these,
/// in any case (`tx` is `TX`: engines write codes both ways).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct When {
    /// The field read.
    pub field: usize,
    /// The values that let the rule apply.
    pub values: Vec<String>,
}

impl When {
    pub(super) fn holds(&self, first_component: &[u8]) -> bool {
        self.values
            .iter()
            .any(|v| v.as_bytes().eq_ignore_ascii_case(first_component))
    }
}

/// One rule: the values a path takes in, replaced by a method.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rule {
    /// What the rule takes in.
    pub path: Path,
    /// How.
    pub method: Method,
    /// Only in segments where this holds.
    pub when: Option<When>,
}
