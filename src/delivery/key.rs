//! The order key of a parallel run: the field whose value keeps its messages in order
//! (`PID-3`, `MSH-4`, any `SEG-n` or `SEG-n.c`, or none), read from a payload, and the stable
//! hash the run tells values apart by.

use crate::hl7::{segments, Delimiters, Msh};
use std::fmt;
use std::str::FromStr;

/// What keeps messages in order across the links of a parallel run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OrderKey {
    /// No key: each message goes to the link with the least outstanding, and each link sends
    /// its share in input order; nothing orders messages across links.
    None,
    /// The value of one field (or one component of it): messages with equal values go one at
    /// a time, in input order; one that waited for an earlier one goes over the same link.
    Field(FieldPath),
}

/// `SEG-n` or `SEG-n.c`: a segment name, a field number and optionally a component (1-based).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FieldPath {
    /// The segment name, three upper-case ASCII letters or digits (`PID`).
    pub segment: [u8; 3],
    /// The field number, from 1; for MSH, counted as HL7 does (MSH-1 is the field separator).
    pub field: usize,
    /// The component number, from 1, within the field's first repetition; `None` for the
    /// whole field.
    pub component: Option<usize>,
}

/// A key that cannot be read; says what is wrong with it.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "`{given}` is not a field: {why}; write SEG-n or SEG-n.c (PID-3, MSH-4, PID-3.1) or `none`"
)]
pub struct OrderKeyError {
    /// The key as given.
    pub given: String,
    /// What is wrong with it.
    pub why: &'static str,
}

impl FromStr for OrderKey {
    type Err = OrderKeyError;

    fn from_str(s: &str) -> Result<OrderKey, OrderKeyError> {
        if s.eq_ignore_ascii_case("none") {
            return Ok(OrderKey::None);
        }
        let fail = |why| OrderKeyError {
            given: s.to_string(),
            why,
        };
        let (segment, rest) = s.split_once('-').ok_or(fail("no `-` after the segment"))?;
        let name: [u8; 3] = segment
            .as_bytes()
            .try_into()
            .map_err(|_| fail("a segment name has three characters"))?;
        if !name
            .iter()
            .all(|b| b.is_ascii_uppercase() || b.is_ascii_digit())
        {
            return Err(fail("a segment name is upper-case letters and digits"));
        }
        let (field, component) = match rest.split_once('.') {
            Some((f, c)) => (f, Some(c)),
            None => (rest, None),
        };
        let number = |v: &str, why| v.parse::<usize>().ok().filter(|n| *n > 0).ok_or(fail(why));
        let field = number(field, "the field number is a whole number from 1")?;
        let component = component
            .map(|c| number(c, "the component number is a whole number from 1"))
            .transpose()?;
        if &name == b"MSH" && field == 1 && component.is_some() {
            return Err(fail("MSH-1 has no components"));
        }
        Ok(OrderKey::Field(FieldPath {
            segment: name,
            field,
            component,
        }))
    }
}

impl fmt::Display for OrderKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            OrderKey::None => f.write_str("none"),
            OrderKey::Field(p) => {
                let name = String::from_utf8_lossy(&p.segment);
                write!(f, "{name}-{}", p.field)?;
                match p.component {
                    Some(c) => write!(f, ".{c}"),
                    None => Ok(()),
                }
            }
        }
    }
}

impl FieldPath {
    /// The key's value in `payload`: the field in the first segment of that name, split with
    /// the delimiters the message's MSH declares. `None` when the segment or field is absent;
    /// an empty field is the empty value. Both group such messages under one key.
    pub fn value<'a>(&self, payload: &'a [u8]) -> Option<&'a [u8]> {
        let mut msh = None;
        // Another segment's field needs only the header's delimiters, not its field index.
        let mut declared = None;
        let of_header = &self.segment == b"MSH";
        for (_, segment) in segments(payload) {
            if segment.starts_with(b"MSH") && msh.is_none() && declared.is_none() {
                if of_header {
                    msh = Msh::parse(segment);
                } else {
                    declared = Some(header_delimiters(segment));
                }
            }
            if segment.get(..3) != Some(&self.segment[..]) {
                continue;
            }
            let delimiters = msh
                .as_ref()
                .map(|m| m.delimiters)
                .or(declared)
                .unwrap_or_default();
            let field = if of_header {
                msh.as_ref()?.field(self.field)?
            } else {
                // The segment name must end at a field separator (`PIDX|` is not PID).
                if segment.get(3).is_some_and(|&b| b != delimiters.field) {
                    continue;
                }
                segment.split(|&b| b == delimiters.field).nth(self.field)?
            };
            return match self.component {
                None => Some(field),
                Some(c) => {
                    let first = field
                        .split(|&b| b == delimiters.repetition)
                        .next()
                        .unwrap_or_default();
                    first.split(|&b| b == delimiters.component).nth(c - 1)
                }
            };
        }
        None
    }
}

/// The delimiters a header `segment` declares, as [`Msh::parse`] reads them: MSH-1, and MSH-2
/// up to the next field separator.
fn header_delimiters(segment: &[u8]) -> Delimiters {
    let Some(&field) = segment.get(3) else {
        return Delimiters::default();
    };
    let rest = &segment[4..];
    let end = memchr::memchr(field, rest).unwrap_or(rest.len());
    Delimiters::from_header(field, &rest[..end])
}

/// The hash of a key's value (absent and empty hash alike): FNV-1a, stable across runs and
/// builds. Messages whose values hash alike wait for each other.
pub fn key_hash(value: Option<&[u8]>) -> u64 {
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
        assert_eq!(
            value("PID-3", ADT).as_deref(),
            Some(&b"12345^^^HOSP^MR~999^^^SSN"[..])
        );
        assert_eq!(value("PID-3.1", ADT).as_deref(), Some(&b"12345"[..]));
        assert_eq!(value("PID-3.4", ADT).as_deref(), Some(&b"HOSP"[..]));
        assert_eq!(value("MSH-4", ADT).as_deref(), Some(&b"FAC"[..]));
        assert_eq!(value("MSH-10", ADT).as_deref(), Some(&b"C1"[..]));
        assert_eq!(value("MSH-1", ADT).as_deref(), Some(&b"|"[..]));
        assert_eq!(value("PID-5.2", ADT).as_deref(), Some(&b"JOHN"[..]));
        // Absent segment, absent field, absent component.
        assert_eq!(value("PV1-3", ADT), None);
        assert_eq!(value("PID-30", ADT), None);
        assert_eq!(value("PID-5.3", ADT), None);
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
        for bad in [
            "PID", "PID-", "PID-0", "PI-3", "pid-3", "PID-3.0", "PID-x", "MSH-1.1",
        ] {
            let e = bad.parse::<OrderKey>().unwrap_err();
            assert_eq!(e.given, bad);
        }
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
