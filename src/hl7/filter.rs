//! Filters on a message's values: `PATH=VALUE`, `PATH!=VALUE`, `PATH~REGEX` and `PATH` alone
//! (the value is not empty). Values compare as text: escape sequences decoded, in the
//! message's character set.

use super::{Charset, Message, Path, PathError};
use std::fmt;
use std::str::FromStr;

/// One condition on a message. Under a path with `*`, `=`, `~` and a bare path hold when some
/// value named holds; `!=` holds when none equals the value.
///
/// ```
/// use mllp::hl7::{Charset, Filter, Message};
///
/// let message = Message::new(b"MSH|^~\\&|LAB|||||ADT^A01|1|P|2.5\rPID|1||100002^^^H||O\\S\\BRIEN\r");
/// let by_id: Filter = "PID-3.1=100002".parse()?;
/// let by_name: Filter = "PID-5~^O\\^BR".parse()?;
/// let no_obx: Filter = "OBX-5".parse()?;
/// assert!(by_id.matches(&message, Charset::UTF_8));
/// assert!(by_name.matches(&message, Charset::UTF_8));
/// assert!(!no_obx.matches(&message, Charset::UTF_8));
/// # Ok::<(), mllp::hl7::FilterError>(())
/// ```
#[derive(Clone)]
pub struct Filter {
    path: Path,
    test: Test,
    text: String,
}

#[derive(Clone)]
enum Test {
    Equals(String),
    NotEquals(String),
    Matches(regex::Regex),
    NotEmpty,
}

/// A filter that cannot be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum FilterError {
    /// The path before the operator is not one.
    #[error(transparent)]
    Path(#[from] PathError),
    /// The pattern after `~` is not a regular expression.
    #[error("`{filter}`: the pattern after `~` is not a regular expression: {why}")]
    Regex {
        /// The filter as given.
        filter: String,
        /// What the regex crate says is wrong.
        why: String,
    },
}

impl FromStr for Filter {
    type Err = FilterError;

    fn from_str(text: &str) -> Result<Filter, FilterError> {
        // The path ends at the first operator character: none of `=!~` is in a path.
        let (path, test) = match text.find(['=', '!', '~']) {
            None => (text, Test::NotEmpty),
            Some(at) => {
                let (path, rest) = text.split_at(at);
                let test = if let Some(value) = rest.strip_prefix("!=") {
                    Test::NotEquals(value.to_string())
                } else if let Some(value) = rest.strip_prefix('=') {
                    Test::Equals(value.to_string())
                } else if let Some(pattern) = rest.strip_prefix('~') {
                    let regex = regex::Regex::new(pattern).map_err(|e| FilterError::Regex {
                        filter: text.to_string(),
                        why: e.to_string(),
                    })?;
                    Test::Matches(regex)
                } else {
                    // A lone `!`.
                    return Err(FilterError::Path(PathError {
                        path: text.to_string(),
                        at: path.chars().count() + 1,
                        found: Some('!'),
                        expected: "`=`, `!=` or `~` after the path",
                    }));
                };
                (path, test)
            }
        };
        let path = path.parse::<Path>().map_err(|e| PathError {
            path: text.to_string(),
            ..e
        })?;
        Ok(Filter {
            path,
            test,
            text: text.to_string(),
        })
    }
}

impl Filter {
    /// The path the filter reads.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The filter holds for `message`, its text read in `charset`.
    pub fn matches(&self, message: &Message<'_>, charset: Charset) -> bool {
        let mut values = message.values(&self.path);
        let text = |v: super::Value<'_>| v.text(charset).into_string();
        match &self.test {
            Test::NotEmpty => values.any(|v| !v.decoded().is_empty()),
            Test::Equals(want) => equals_any(&mut values, want, charset),
            Test::NotEquals(want) => !equals_any(&mut values, want, charset),
            Test::Matches(regex) => values.any(|v| regex.is_match(&text(v))),
        }
    }

    /// Every filter holds (true for none).
    pub fn all(filters: &[Filter], message: &Message<'_>, charset: Charset) -> bool {
        filters.iter().all(|f| f.matches(message, charset))
    }
}

/// Some value equals `want` as text. A path that names nothing has one empty value, so
/// `PID-30=` holds where PID-30 is absent.
fn equals_any<'a>(
    values: &mut impl Iterator<Item = super::Value<'a>>,
    want: &str,
    charset: Charset,
) -> bool {
    let mut any = false;
    for v in values {
        any = true;
        if v.text(charset).as_str() == want {
            return true;
        }
    }
    !any && want.is_empty()
}

/// The filters of a run (all must hold) and the character set chosen for their text, if any:
/// what `--where` and `--charset` make of a message.
#[derive(Debug, Clone, Default)]
pub struct Filters {
    /// Every one must hold.
    pub filters: Vec<Filter>,
    /// Read text in this character set instead of the one MSH-18 names.
    pub charset: Option<Charset>,
}

impl Filters {
    /// No filter: every message is admitted.
    pub fn is_empty(&self) -> bool {
        self.filters.is_empty()
    }

    /// Every filter holds for `payload`, its text read in the chosen character set, else the
    /// one MSH-18 names (UTF-8 when that one is unknown).
    pub fn admits(&self, payload: &[u8]) -> bool {
        if self.filters.is_empty() {
            return true;
        }
        let message = Message::new(payload);
        let charset = Charset::for_message(&message, self.charset).unwrap_or(Charset::UTF_8);
        Filter::all(&self.filters, &message, charset)
    }
}

impl fmt::Display for Filter {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text)
    }
}

impl fmt::Debug for Filter {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Filter({})", self.text)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const ADT: &[u8] = b"MSH|^~\\&|LAB|FAC|||20240101||ADT^A01|C1|P|2.5||||||8859/1\r\
        PID|1||100002^^^H~77^^^S||M\xfcLLER^ANNA\rOBX|1|NM|GLU||5.4\rOBX|2|NM|NA||140\r";

    fn holds(filter: &str) -> bool {
        let m = Message::new(ADT);
        let charset = Charset::for_message(&m, None).unwrap();
        filter.parse::<Filter>().unwrap().matches(&m, charset)
    }

    #[test]
    fn each_operator() {
        assert!(holds("PID-3.1=100002"));
        assert!(!holds("PID-3.1=100003"));
        assert!(holds("PID-3.1!=100003"));
        assert!(holds("PID-3(*).1=77"));
        assert!(!holds("PID-3(*).1!=77"));
        assert!(holds("PID-5.1=MüLLER"));
        assert!(holds("PID-5~^Mü"));
        assert!(holds("OBX(*)-5~^14"));
        assert!(!holds("OBX-5~^14"));
        assert!(holds("MSH-9.2"));
        assert!(!holds("PV1-2"));
        assert!(holds("PV1-2="));
        assert!(!holds("PV1-2!="));
        assert!(holds("MSH-1=|"));
        // An `=` inside the value is part of it.
        assert!(!holds("PID-3.1=1=2"));
    }

    #[test]
    fn names_what_is_wrong() {
        let e = "PID-3.x=1".parse::<Filter>().unwrap_err();
        assert!(
            matches!(&e, FilterError::Path(p) if p.at == 7 && p.found == Some('x') && p.path == "PID-3.x=1"),
            "{e}"
        );
        let e = "PID-3!1".parse::<Filter>().unwrap_err();
        assert!(
            matches!(&e, FilterError::Path(p) if p.at == 6 && p.found == Some('!')),
            "{e}"
        );
        let e = "PID-3~(".parse::<Filter>().unwrap_err();
        assert!(matches!(e, FilterError::Regex { .. }), "{e}");
        assert_eq!(
            "PID-5~^A".parse::<Filter>().unwrap().to_string(),
            "PID-5~^A"
        );
    }
}
