//! Flag values: durations, sizes, rates, counts, ports and targets, each parsed once for every
//! subcommand. A refused value is said in one style, naming the flag and a value that works:
//! `invalid value 'banana' for '--ack-timeout <DURATION>': not a duration; for example
//! --ack-timeout 30s`.

use clap::builder::TypedValueParser;
use mllp::target::Target;
use std::ffi::OsStr;
use std::time::Duration;

/// A parse function and the example value shown when it refuses (the flag's default wins when
/// it has one).
#[derive(Clone)]
pub struct Value<T> {
    parse: fn(&str) -> Result<T, String>,
    example: &'static str,
}

impl<T: Clone + Send + Sync + 'static> TypedValueParser for Value<T> {
    type Value = T;

    fn parse_ref(
        &self,
        cmd: &clap::Command,
        arg: Option<&clap::Arg>,
        value: &OsStr,
    ) -> Result<T, clap::Error> {
        let text = value.to_string_lossy();
        let reason = match (self.parse)(&text) {
            Ok(parsed) => return Ok(parsed),
            Err(reason) => reason,
        };
        let example = arg
            .and_then(|a| a.get_default_values().first())
            .map(|d| d.to_string_lossy().into_owned())
            .filter(|d| (self.parse)(d).is_ok())
            .unwrap_or_else(|| self.example.to_string());
        let reason = match arg.and_then(clap::Arg::get_long) {
            Some(long) => format!("{reason}; for example --{long} {example}"),
            None => format!("{reason}; for example {example}"),
        };
        // clap's own wording around it: the flag and the value refused.
        let refuse = move |_: &str| Err::<T, String>(reason.clone());
        refuse.parse_ref(cmd, arg, value)
    }
}

fn value<T>(parse: fn(&str) -> Result<T, String>, example: &'static str) -> Value<T> {
    Value { parse, example }
}

/// A duration: `250ms`, `5s`, `2m`, `1h30m`; zero allowed.
pub fn duration() -> Value<Duration> {
    value(parse_duration, "5s")
}

/// A duration greater than zero.
pub fn positive_duration() -> Value<Duration> {
    value(
        |text| match parse_duration(text)? {
            d if d.is_zero() => Err("must be greater than zero".into()),
            d => Ok(d),
        },
        "5s",
    )
}

/// A size in bytes: `512`, `64K`, `16MiB`, `1G`; at least one byte.
pub fn size() -> Value<u64> {
    value(parse_size, "16M")
}

/// Messages per second: `200` or `200/s`, more than zero.
pub fn rate() -> Value<f64> {
    value(parse_rate, "200/s")
}

/// A count of at least 1.
pub fn at_least_one() -> Value<usize> {
    value(
        |text| match text.trim().parse::<usize>() {
            Ok(0) => Err("must be at least 1".into()),
            Ok(n) => Ok(n),
            Err(_) => Err("not a whole number".into()),
        },
        "64",
    )
}

/// A port to connect to: 1 to 65535.
pub fn port() -> Value<u16> {
    value(
        |text| mllp::target::parse_port(text.trim()).map_err(|e| e.to_string()),
        "2575",
    )
}

/// A port to listen on: 0 (any free port) to 65535.
pub fn bind_port() -> Value<u16> {
    value(
        |text| {
            text.trim()
                .parse::<u16>()
                .map_err(|_| "not a port: give 0 (any free port) to 65535".into())
        },
        "2575",
    )
}

/// An endpoint, `HOST[:PORT]`, checked by its shape only (no name lookup).
pub fn target() -> Value<Target> {
    value(
        |text| Target::parse(text).map_err(|e| e.to_string()),
        "engine.example:2575",
    )
}

/// A fraction from 0 to 1.
pub fn fraction() -> Value<f64> {
    value(
        |text| match text.trim().parse::<f64>() {
            Ok(f) if (0.0..=1.0).contains(&f) => Ok(f),
            _ => Err("not a fraction from 0 to 1".into()),
        },
        "0.1",
    )
}

pub fn parse_duration(text: &str) -> Result<Duration, String> {
    humantime::parse_duration(text.trim())
        .map_err(|_| "not a duration: give a number and a unit (ms, s, m, h)".to_string())
}

/// Bytes with an optional binary unit: K, M, G, also spelled KiB, MiB, GiB (or k, KB, MB, GB,
/// which mean the same powers of 1024 here).
pub fn parse_size(text: &str) -> Result<u64, String> {
    let t = text.trim();
    let split = t.find(|c: char| !c.is_ascii_digit()).unwrap_or(t.len());
    let (digits, unit) = t.split_at(split);
    let n: u64 = digits
        .parse()
        .map_err(|_| "not a size: give bytes, or a number with K, M or G".to_string())?;
    let shift = match unit.trim() {
        "" | "B" => 0,
        "K" | "k" | "KB" | "KiB" => 10,
        "M" | "MB" | "MiB" => 20,
        "G" | "GB" | "GiB" => 30,
        other => return Err(format!("unknown size unit `{other}`: use K, M or G")),
    };
    match n.checked_mul(1 << shift) {
        Some(0) => Err("must be at least 1 byte".into()),
        None => Err("too large".into()),
        Some(size) => Ok(size),
    }
}

/// Messages per second, `200` or `200/s`.
pub fn parse_rate(text: &str) -> Result<f64, String> {
    let t = text.trim();
    let t = t.strip_suffix("/s").unwrap_or(t);
    match t.trim().parse::<f64>() {
        Ok(r) if r.is_finite() && r > 0.0 => Ok(r),
        _ => Err("not a rate: give messages per second, more than zero".into()),
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
}
