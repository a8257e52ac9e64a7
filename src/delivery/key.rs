//! The order key of a parallel run: the field path whose value keeps its messages in order
//! (`PID-3`, `MSH-4`, `PID-3.1`, any path of one value, or none), read by the HL7 reader, and
//! the stable hash the run tells values apart by.

use crate::hl7::{Path, PathError};
use std::fmt;
use std::str::FromStr;

/// What keeps messages in order across the links of a parallel run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OrderKey {
    /// No key: each message goes to the link with the least outstanding, and each link sends
    /// its share in input order; nothing orders messages across links.
    None,
    /// The value a path names (`PID-3`: the first repetition of PID-3 as written): messages
    /// with equal values go one at a time, in input order; one that waited for an earlier one
    /// goes over the same link.
    Field(Path),
}

/// A key that cannot be read; says what is wrong with it.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum OrderKeyError {
    /// Not a field path.
    #[error("{0}; or `none`")]
    Path(#[from] PathError),
    /// A path with `*`, which names more than one value.
    #[error("`{given}` names every occurrence (`*`): an order key is one value (PID-3, PID-3.1)")]
    Multiple {
        /// The key as given.
        given: String,
    },
}

impl FromStr for OrderKey {
    type Err = OrderKeyError;

    fn from_str(s: &str) -> Result<OrderKey, OrderKeyError> {
        if s.eq_ignore_ascii_case("none") {
            return Ok(OrderKey::None);
        }
        let path: Path = s.parse()?;
        if path.is_multiple() {
            return Err(OrderKeyError::Multiple {
                given: s.to_string(),
            });
        }
        Ok(OrderKey::Field(path))
    }
}

impl fmt::Display for OrderKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            OrderKey::None => f.write_str("none"),
            OrderKey::Field(p) => p.fmt(f),
        }
    }
}

/// The hash of a key's value (absent and empty hash alike): FNV-1a, stable across runs and
/// builds. Messages whose values hash alike wait for each other.
pub(crate) fn key_hash(value: Option<&[u8]>) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for &b in value.unwrap_or_default() {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    h
}

#[cfg(test)]
mod tests {
    use super::*;

    const ADT: &[u8] = b"MSH|^~\\&|APP|FAC|RECV|RFAC|20240101||ADT^A01|C1|P|2.5\r\
        EVN|A01\rPID|1||12345^^^HOSP^MR~999^^^SSN||DOE^JOHN\r";

    fn value(key: &str, payload: &[u8]) -> Option<Vec<u8>> {
        match key.parse::<OrderKey>().unwrap() {
            OrderKey::Field(p) => p.value(payload).map(<[u8]>::to_vec),
            OrderKey::None => panic!("not a field"),
        }
    }

    #[test]
    fn reads_fields_components_and_header_fields() {
        // The first repetition, as written.
        assert_eq!(
            value("PID-3", ADT).as_deref(),
            Some(&b"12345^^^HOSP^MR"[..])
        );
        assert_eq!(value("PID-3(2).1", ADT).as_deref(), Some(&b"999"[..]));
        assert_eq!(value("PID-3.1", ADT).as_deref(), Some(&b"12345"[..]));
        assert_eq!(value("PID-3.4", ADT).as_deref(), Some(&b"HOSP"[..]));
        assert_eq!(value("MSH-4", ADT).as_deref(), Some(&b"FAC"[..]));
        assert_eq!(value("MSH-10", ADT).as_deref(), Some(&b"C1"[..]));
        assert_eq!(value("MSH-1", ADT).as_deref(), Some(&b"|"[..]));
        assert_eq!(value("PID-5.2", ADT).as_deref(), Some(&b"JOHN"[..]));
        // An absent segment names nothing; an absent field or component is empty.
        assert_eq!(value("PV1-3", ADT), None);
        assert_eq!(value("PID-30", ADT).as_deref(), Some(&b""[..]));
        assert_eq!(value("PID-5.3", ADT).as_deref(), Some(&b""[..]));
        // An empty field is the empty value.
        assert_eq!(value("PID-2", ADT).as_deref(), Some(&b""[..]));
    }

    #[test]
    fn uses_the_declared_delimiters() {
        let odd = b"MSH#*~\\&#APP#FAC\rPID#1##77*X\r";
        assert_eq!(value("PID-3.1", odd).as_deref(), Some(&b"77"[..]));
        assert_eq!(value("MSH-4", odd).as_deref(), Some(&b"FAC"[..]));
    }

    #[test]
    fn refuses_what_is_not_a_field() {
        for bad in ["PID", "PID-", "PID-0", "PI-3", "pid-3", "PID-3.0", "PID-x"] {
            let e = bad.parse::<OrderKey>().unwrap_err();
            assert!(matches!(&e, OrderKeyError::Path(p) if p.path == bad), "{e}");
        }
        let e = "PID-3(*).1".parse::<OrderKey>().unwrap_err();
        assert!(matches!(e, OrderKeyError::Multiple { .. }), "{e}");
        assert_eq!("none".parse::<OrderKey>(), Ok(OrderKey::None));
        assert_eq!(
            "ZPI-2.1".parse::<OrderKey>().unwrap().to_string(),
            "ZPI-2.1"
        );
    }

    #[test]
    fn one_value_one_hash_and_absent_is_empty() {
        assert_eq!(key_hash(Some(b"12345")), key_hash(Some(b"12345")));
        assert_ne!(key_hash(Some(b"12345")), key_hash(Some(b"12346")));
        assert_eq!(key_hash(None), key_hash(Some(b"")));
    }
}
