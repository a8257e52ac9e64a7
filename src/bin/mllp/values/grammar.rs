//! The grammars of the values the command line takes: durations, sizes, rates, counts, ports
//! and fractions, each parsed in one place. A refusal says what was wrong and what to give
//! instead; the caller adds which flag it was.

use std::time::Duration;

/// Why a text is not the value asked for, in words for people.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct InvalidValue(String);

impl InvalidValue {
    fn new(reason: impl Into<String>) -> InvalidValue {
        InvalidValue(reason.into())
    }
}

/// A duration: `250ms`, `5s`, `2m`, `1h30m`; zero allowed.
pub fn parse_duration(text: &str) -> Result<Duration, InvalidValue> {
    humantime::parse_duration(text.trim())
        .map_err(|_| InvalidValue::new("not a duration: give a number and a unit (ms, s, m, h)"))
}

/// A duration greater than zero.
pub fn parse_positive_duration(text: &str) -> Result<Duration, InvalidValue> {
    match parse_duration(text)? {
        d if d.is_zero() => Err(InvalidValue::new("must be greater than zero")),
        d => Ok(d),
    }
}

/// A duration where `0` (or any zero duration) means none.
pub fn parse_optional_duration(text: &str) -> Result<Option<Duration>, InvalidValue> {
    if text.trim() == "0" {
        return Ok(None);
    }
    match humantime::parse_duration(text) {
        Ok(d) if d.is_zero() => Ok(None),
        Ok(d) => Ok(Some(d)),
        Err(e) => Err(InvalidValue(format!(
            "`{text}` is not a duration ({e}); e.g. 60s, 500ms, or 0 for none"
        ))),
    }
}

/// Bytes with an optional binary unit: K, M, G, also spelled KiB, MiB, GiB (or k, KB, MB, GB,
/// which mean the same powers of 1024 here); at least one byte.
pub fn parse_size(text: &str) -> Result<u64, InvalidValue> {
    let t = text.trim();
    let split = t.find(|c: char| !c.is_ascii_digit()).unwrap_or(t.len());
    let (digits, unit) = t.split_at(split);
    let n: u64 = digits
        .parse()
        .map_err(|_| InvalidValue::new("not a size: give bytes, or a number with K, M or G"))?;
    let shift = match unit.trim() {
        "" | "B" => 0,
        "K" | "k" | "KB" | "KiB" => 10,
        "M" | "MB" | "MiB" => 20,
        "G" | "GB" | "GiB" => 30,
        other => {
            return Err(InvalidValue(format!(
                "unknown size unit `{other}`: use K, M or G"
            )))
        }
    };
    match n.checked_mul(1 << shift) {
        Some(0) => Err(InvalidValue::new("must be at least 1 byte")),
        None => Err(InvalidValue::new("too large")),
        Some(size) => Ok(size),
    }
}

/// Messages per second, `200` or `200/s`, more than zero.
pub fn parse_rate(text: &str) -> Result<f64, InvalidValue> {
    let t = text.trim();
    let t = t.strip_suffix("/s").unwrap_or(t);
    match t.trim().parse::<f64>() {
        Ok(r) if r.is_finite() && r > 0.0 => Ok(r),
        _ => Err(InvalidValue::new(
            "not a rate: give messages per second, more than zero",
        )),
    }
}

/// A count of at least 1.
pub fn parse_count(text: &str) -> Result<usize, InvalidValue> {
    match text.trim().parse::<usize>() {
        Ok(0) => Err(InvalidValue::new("must be at least 1")),
        Ok(n) => Ok(n),
        Err(_) => Err(InvalidValue::new("not a whole number")),
    }
}

/// A port to listen on: 0 (any free port) to 65535.
pub fn parse_bind_port(text: &str) -> Result<u16, InvalidValue> {
    text.trim()
        .parse::<u16>()
        .map_err(|_| InvalidValue::new("not a port: give 0 (any free port) to 65535"))
}

/// A fraction from 0 to 1.
pub fn parse_fraction(text: &str) -> Result<f64, InvalidValue> {
    match text.trim().parse::<f64>() {
        Ok(f) if (0.0..=1.0).contains(&f) => Ok(f),
        _ => Err(InvalidValue::new("not a fraction from 0 to 1")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_take_each_unit_spelling() {
        assert_eq!(parse_size("512"), Ok(512));
        for (text, bytes) in [
            ("64K", 64 << 10),
            ("64KiB", 64 << 10),
            ("16M", 16 << 20),
            ("16MiB", 16 << 20),
            ("1G", 1 << 30),
            ("1GiB", 1 << 30),
            ("2 GB", 2 << 30),
        ] {
            assert_eq!(parse_size(text), Ok(bytes), "{text}");
        }
        for bad in ["", "0", "0K", "1T", "K", "-1", "99999999999999999999G"] {
            assert!(parse_size(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn rates_take_an_optional_per_second() {
        assert_eq!(parse_rate("200"), Ok(200.0));
        assert_eq!(parse_rate("0.5/s"), Ok(0.5));
        for bad in ["0", "-1", "NaN", "inf", "fast", "200/m"] {
            assert!(parse_rate(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn zero_means_no_duration() {
        let s = Duration::from_secs;
        assert_eq!(parse_optional_duration("0"), Ok(None));
        assert_eq!(parse_optional_duration("0s"), Ok(None));
        assert_eq!(parse_optional_duration("60s"), Ok(Some(s(60))));
        assert!(parse_optional_duration("soon").is_err());
        assert_eq!(parse_positive_duration(" 2m "), Ok(s(120)));
        assert!(parse_positive_duration("0s").is_err());
        assert_eq!(parse_count("3"), Ok(3));
        assert!(parse_count("0").is_err());
        assert_eq!(parse_bind_port("0"), Ok(0));
        assert!(parse_fraction("1.5").is_err());
    }
}
