//! Answer-code rules: a negative answer that means "try again later" (an `AE` whose ERR-3 is
//! `206`, record locked) is made transient, so the message is written again after a pause
//! instead of ending negative.
//!
//! ```
//! use mllp::client::RetryRule;
//!
//! let rule: RetryRule = "AE:206".parse()?;
//! let locked = b"MSH|^~\\&|E|F|S|F|20240101||ACK|A1|P|2.5\rMSA|AE|M1\rERR|||206^Record locked^HL70357|E\r";
//! let other = b"MSH|^~\\&|E|F|S|F|20240101||ACK|A1|P|2.5\rMSA|AE|M1\rERR|||207^Application error^HL70357|E\r";
//! assert!(rule.matches(mllp::ack::AckCode::AE, locked));
//! assert!(!rule.matches(mllp::ack::AckCode::AE, other));
//! assert!(!rule.matches(mllp::ack::AckCode::AR, locked));
//! # Ok::<(), mllp::client::RetryRuleError>(())
//! ```

use crate::ack::AckCode;
use crate::hl7::{Message, Path};
use std::fmt;
use std::str::FromStr;
use std::sync::OnceLock;
use std::time::Duration;

/// One rule: answers with `code` (and, when given, this ERR-3 identifier in any ERR segment)
/// are transient.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RetryRule {
    /// The negative code the rule applies to.
    pub code: AckCode,
    /// ERR-3's identifier (its first component) the answer must carry; `None`: any.
    pub err3: Option<String>,
}

/// A rule that cannot be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum RetryRuleError {
    /// The code is not a negative acknowledgement code.
    #[error("`{0}` is not a negative acknowledgement code: give AE, AR, CE or CR")]
    NotNegative(String),
    /// Nothing after the colon.
    #[error("the ERR-3 code after `:` is empty")]
    EmptyErr3,
}

impl FromStr for RetryRule {
    type Err = RetryRuleError;

    fn from_str(text: &str) -> Result<RetryRule, RetryRuleError> {
        let (code, err3) = match text.split_once(':') {
            Some((code, err3)) => (code, Some(err3)),
            None => (text, None),
        };
        let code = AckCode::parse(code.trim().to_ascii_uppercase().as_bytes())
            .filter(|c| !c.is_positive())
            .ok_or_else(|| RetryRuleError::NotNegative(code.to_string()))?;
        let err3 = match err3.map(str::trim) {
            Some("") => return Err(RetryRuleError::EmptyErr3),
            other => other.map(str::to_string),
        };
        Ok(RetryRule { code, err3 })
    }
}

impl fmt::Display for RetryRule {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.err3 {
            Some(err3) => write!(f, "{}:{err3}", self.code.as_str()),
            None => f.write_str(self.code.as_str()),
        }
    }
}

/// ERR-3's identifier in every ERR segment.
fn err3_path() -> &'static Path {
    static PATH: OnceLock<Path> = OnceLock::new();
    PATH.get_or_init(|| "ERR(*)-3.1".parse().expect("a valid path"))
}

impl RetryRule {
    /// Whether an answer with `code` and these bytes falls under the rule.
    pub fn matches(&self, code: AckCode, ack: &[u8]) -> bool {
        if code != self.code {
            return false;
        }
        let Some(want) = &self.err3 else {
            return true;
        };
        Message::new(ack)
            .values(err3_path())
            .any(|v| v.raw() == want.as_bytes())
    }
}

/// Whether any of `rules` makes this answer transient.
pub(crate) fn transient(rules: &[RetryRule], code: AckCode, ack: &[u8]) -> bool {
    !code.is_positive() && rules.iter().any(|r| r.matches(code, ack))
}

/// The pause before the `n`-th rewrite (from 1) of a message whose answer was transient:
/// `first`, doubling, at most `max`.
pub(crate) fn pause(first: Duration, max: Duration, n: u32) -> Duration {
    first
        .saturating_mul(1u32 << n.saturating_sub(1).min(16))
        .min(max)
}

#[cfg(test)]
mod tests {
    use super::*;

    const LOCKED: &[u8] =
        b"MSH|^~\\&|E|F|S|F|20240101||ACK|A1|P|2.5\rMSA|AE|M1\rERR|||207\rERR|||206^Locked\r";

    #[test]
    fn rules_read_and_match_as_written() {
        let any_ae: RetryRule = "ae".parse().unwrap();
        assert_eq!(any_ae.to_string(), "AE");
        assert!(any_ae.matches(AckCode::AE, b"MSH|^~\\&\rMSA|AE|M1\r"));
        let locked: RetryRule = "AE:206".parse().unwrap();
        // The second ERR segment carries it.
        assert!(locked.matches(AckCode::AE, LOCKED));
        assert!(!"AE:2"
            .parse::<RetryRule>()
            .unwrap()
            .matches(AckCode::AE, LOCKED));
        assert!(!"CE:206"
            .parse::<RetryRule>()
            .unwrap()
            .matches(AckCode::AE, LOCKED));
        assert!(matches!(
            "AA".parse::<RetryRule>(),
            Err(RetryRuleError::NotNegative(_))
        ));
        assert!(matches!(
            "XX:1".parse::<RetryRule>(),
            Err(RetryRuleError::NotNegative(_))
        ));
        assert_eq!("AE:".parse::<RetryRule>(), Err(RetryRuleError::EmptyErr3));
        assert!(!transient(&[locked], AckCode::AA, LOCKED));
    }

    #[test]
    fn the_pause_doubles_up_to_its_bound() {
        let (first, max) = (Duration::from_millis(100), Duration::from_secs(1));
        let pauses: Vec<_> = (1..=6).map(|n| pause(first, max, n).as_millis()).collect();
        assert_eq!(pauses, [100, 200, 400, 800, 1000, 1000]);
    }
}
