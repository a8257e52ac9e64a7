//! Flag values for clap: the grammars of [`grammar`] (and `HOST[:PORT]`), with a refusal
//! said in one style for every subcommand, naming the flag and a value that works:
//! `invalid value 'banana' for '--ack-timeout <DURATION>': not a duration; for example
//! --ack-timeout 30s`.

use clap::builder::TypedValueParser;
use mllp::target::{Target, TargetError};
use std::ffi::OsStr;
use std::fmt::Display;
use std::time::Duration;

pub mod grammar;

/// A parse function and the example value shown when it refuses (the flag's default wins when
/// it has one).
pub struct Value<T, E = grammar::InvalidValue> {
    parse: fn(&str) -> Result<T, E>,
    example: &'static str,
}

impl<T, E> Clone for Value<T, E> {
    fn clone(&self) -> Self {
        Value { ..*self }
    }
}

impl<T: Clone + Send + Sync + 'static, E: Display + 'static> TypedValueParser for Value<T, E> {
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
            Err(reason) => reason.to_string(),
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

fn value<T, E>(parse: fn(&str) -> Result<T, E>, example: &'static str) -> Value<T, E> {
    Value { parse, example }
}

/// A duration: `250ms`, `5s`, `2m`, `1h30m`; zero allowed.
pub fn duration() -> Value<Duration> {
    value(grammar::parse_duration, "5s")
}

/// A duration greater than zero.
pub fn positive_duration() -> Value<Duration> {
    value(grammar::parse_positive_duration, "5s")
}

/// A size in bytes: `512`, `64K`, `16MiB`, `1G`; at least one byte.
pub fn size() -> Value<u64> {
    value(grammar::parse_size, "16M")
}

/// Messages per second: `200` or `200/s`, more than zero.
pub fn rate() -> Value<f64> {
    value(grammar::parse_rate, "200/s")
}

/// A count of at least 1.
pub fn at_least_one() -> Value<usize> {
    value(grammar::parse_count, "64")
}

/// A port to connect to: 1 to 65535.
pub fn port() -> Value<u16, TargetError> {
    value::<_, TargetError>(|text| mllp::target::parse_port(text.trim()), "2575")
}

/// A port to listen on: 0 (any free port) to 65535.
pub fn bind_port() -> Value<u16> {
    value(grammar::parse_bind_port, "2575")
}

/// An endpoint, `HOST[:PORT]`, checked by its shape only (no name lookup).
pub fn target() -> Value<Target, String> {
    value::<_, String>(
        |text| {
            Target::parse(text).map_err(|e| match e {
                TargetError::TlsScheme => format!("{e} with --tls"),
                e => e.to_string(),
            })
        },
        "engine.example:2575",
    )
}

/// A fraction from 0 to 1.
pub fn fraction() -> Value<f64> {
    value(grammar::parse_fraction, "0.1")
}

/// A point in time, RFC 3339 in UTC: `2024-01-31T08:00:00Z` (the fraction optional).
pub fn instant() -> Value<std::time::SystemTime, String> {
    value::<_, String>(
        |text| {
            humantime::parse_rfc3339_weak(text.trim().trim_end_matches('Z'))
                .map_err(|_| "not an RFC 3339 time in UTC".to_string())
        },
        "2024-01-31T08:00:00Z",
    )
}

/// A speed factor, more than zero.
pub fn speed() -> Value<f64, String> {
    value::<_, String>(
        |text| match text.trim().parse::<f64>() {
            Ok(x) if x > 0.0 && x.is_finite() => Ok(x),
            _ => Err("not a factor above zero".to_string()),
        },
        "10",
    )
}

/// A field path: `PID-5`, `PID-3(2).1`, `OBX(*)-5`.
pub fn path() -> Value<mllp::hl7::Path, mllp::hl7::PathError> {
    value(str::parse, "PID-5.1")
}

/// A filter on a path's value: `PID-3.1=100002`, `MSH-9!=ACK`, `PID-5~^DOE`, `OBX-5`.
pub fn filter() -> Value<mllp::hl7::Filter, mllp::hl7::FilterError> {
    value(str::parse, "PID-3.1=100002")
}

/// A character set by its HL7 name (`8859/1`, `UNICODE UTF-8`) or a common label (`latin1`).
pub fn charset() -> Value<mllp::hl7::Charset, String> {
    value::<_, String>(
        |text| {
            mllp::hl7::Charset::from_name(text).ok_or_else(|| {
                "not a character set an HL7 message can be read in (ASCII, 8859/1 to 8859/16, \
                 UNICODE UTF-8, ...)"
                    .to_string()
            })
        },
        "8859/1",
    )
}

/// An address to bind: `PORT` (on 127.0.0.1) or `HOST:PORT`.
pub fn bind_addr(text: &str) -> Result<(String, u16), String> {
    if !text.is_empty() && text.bytes().all(|b| b.is_ascii_digit()) {
        let port = text.parse().map_err(|_| format!("{text}: not a port"))?;
        return Ok(("127.0.0.1".to_string(), port));
    }
    // The port split off here: 0 (any free port) is a port to bind, not one to connect to.
    let Some((host, port)) = text.rsplit_once(':').filter(|(h, _)| !h.ends_with(':')) else {
        return Err(format!("{text}: give the port, as PORT or HOST:PORT"));
    };
    let port = port
        .parse()
        .map_err(|_| format!("{text}: the port must be a number from 0 to 65535"))?;
    let target = mllp::target::Target::parse(host).map_err(|e| e.to_string())?;
    if target.port.is_some() {
        return Err(format!(
            "{text}: an IPv6 address goes in brackets: [::1]:{port}"
        ));
    }
    Ok((target.host, port))
}

#[cfg(test)]
mod tests {
    use super::bind_addr;

    #[test]
    fn a_port_alone_is_loopback_and_port_0_picks_one() {
        assert_eq!(bind_addr("6661").unwrap(), ("127.0.0.1".into(), 6661));
        assert_eq!(bind_addr("0.0.0.0:0").unwrap(), ("0.0.0.0".into(), 0));
        assert_eq!(bind_addr("[::1]:0").unwrap(), ("::1".into(), 0));
        assert!(bind_addr("host").is_err());
        assert!(bind_addr("host:99999").is_err());
    }
}
