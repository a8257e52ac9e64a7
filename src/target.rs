//! An endpoint as people type it, `HOST[:PORT]`: a host name, an IPv4 address, or an IPv6
//! address (in brackets when a port follows). Checked by its shape alone, so a string that can
//! be no host is refused before any name lookup.

use std::fmt;
use std::net::{Ipv4Addr, Ipv6Addr};

mod endpoint;

pub use endpoint::{endpoint, endpoint_of, EndpointError, Origin};

/// The MLLP port most engines listen on, used when none is given.
pub const DEFAULT_PORT: u16 = 2575;

/// A parsed endpoint. `host` is bare (no brackets); `port` is `None` when the text named none.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Target {
    /// A name or an IP address, without brackets.
    pub host: String,
    /// The port, when the text named one.
    pub port: Option<u16>,
}

/// Why a string is no endpoint. The text says what was wrong; the caller adds how to fix it.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum TargetError {
    /// Nothing, or only a port.
    #[error("no host")]
    Empty,
    /// `[` without its `]`.
    #[error("unclosed `[` around an IPv6 address")]
    UnclosedBracket,
    /// Text in brackets that is no IPv6 address.
    #[error("`{0}` is not an IPv6 address")]
    BadIpv6(String),
    /// Something other than `:PORT` after `]`.
    #[error("`{0}` after `]`: only :PORT may follow an IPv6 address in brackets")]
    AfterBracket(String),
    /// A port that is no number from 1 to 65535.
    #[error("`{0}` is not a port: give 1 to 65535")]
    BadPort(String),
    /// Port 0.
    #[error("port 0 cannot be connected to: give 1 to 65535")]
    PortZero,
    /// Digits and dots that are no IPv4 address.
    #[error("`{0}` is not an IPv4 address")]
    BadIpv4(String),
    /// A host name with characters no host name has.
    #[error("`{0}` cannot be a host name: use letters, digits, `-` and `.` (non-ASCII names in their xn-- form)")]
    BadName(String),
    /// `mllps://`: TLS is a setting of the connection, not part of the address.
    #[error("`mllps://` is not part of an address: give HOST[:PORT] and turn TLS on")]
    TlsScheme,
    /// A scheme other than `mllp://` (`http://`, `tcp://`, ...).
    #[error("`{0}://` is not an MLLP address: give HOST[:PORT] (or mllp://HOST[:PORT])")]
    Scheme(String),
}

/// `text` without a leading `mllp://` (any case) and a trailing `/`; other schemes refused.
fn strip_scheme(text: &str) -> Result<&str, TargetError> {
    let Some((scheme, rest)) = text.split_once("://") else {
        return Ok(text);
    };
    match scheme.to_ascii_lowercase().as_str() {
        "mllp" => Ok(rest.strip_suffix('/').unwrap_or(rest)),
        "mllps" => Err(TargetError::TlsScheme),
        _ => Err(TargetError::Scheme(scheme.to_string())),
    }
}

impl Target {
    /// Splits `HOST[:PORT]`. A bare IPv6 address (more than one `:`) takes no port; write
    /// `[addr]:port` for one.
    /// `mllp://HOST[:PORT]` is the same endpoint; `mllps://` and other schemes are refused.
    pub fn parse(text: &str) -> Result<Target, TargetError> {
        let text = strip_scheme(text.trim())?;
        let (host, port) = if let Some(rest) = text.strip_prefix('[') {
            let (inside, after) = rest.split_once(']').ok_or(TargetError::UnclosedBracket)?;
            let port = match after {
                "" => None,
                _ => Some(
                    after
                        .strip_prefix(':')
                        .ok_or_else(|| TargetError::AfterBracket(after.to_string()))?,
                ),
            };
            if inside.parse::<Ipv6Addr>().is_err() {
                return Err(TargetError::BadIpv6(inside.to_string()));
            }
            (inside, port)
        } else if text.matches(':').count() > 1 {
            if text.parse::<Ipv6Addr>().is_err() {
                return Err(TargetError::BadIpv6(text.to_string()));
            }
            (text, None)
        } else {
            match text.split_once(':') {
                Some((host, port)) => (host, Some(port)),
                None => (text, None),
            }
        };
        if host.is_empty() {
            return Err(TargetError::Empty);
        }
        if !host.contains(':') {
            check_host(host)?;
        }
        let port = port.map(parse_port).transpose()?;
        Ok(Target {
            host: host.to_string(),
            port,
        })
    }

    /// The port, or [`DEFAULT_PORT`].
    pub fn port_or_default(&self) -> u16 {
        self.port.unwrap_or(DEFAULT_PORT)
    }
}

impl fmt::Display for Target {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match (self.host.contains(':'), self.port) {
            (true, Some(port)) => write!(f, "[{}]:{port}", self.host),
            (false, Some(port)) => write!(f, "{}:{port}", self.host),
            (_, None) => f.write_str(&self.host),
        }
    }
}

/// A port to connect to: 1 to 65535, digits only.
pub fn parse_port(text: &str) -> Result<u16, TargetError> {
    if text.is_empty() || !text.bytes().all(|b| b.is_ascii_digit()) {
        return Err(TargetError::BadPort(text.to_string()));
    }
    match text.parse::<u16>() {
        Ok(0) => Err(TargetError::PortZero),
        Ok(port) => Ok(port),
        Err(_) => Err(TargetError::BadPort(text.to_string())),
    }
}

/// An IPv4 address, or a name of dot-separated labels (letters, digits, `-` inside, `_` for
/// the names some private networks use), at most 253 characters, one trailing dot allowed. A
/// name whose last label is all digits would be an address, and is refused when it is not one.
fn check_host(host: &str) -> Result<(), TargetError> {
    if host.parse::<Ipv4Addr>().is_ok() {
        return Ok(());
    }
    let bad = || TargetError::BadName(host.to_string());
    let name = host.strip_suffix('.').unwrap_or(host);
    if name.is_empty() || name.len() > 253 {
        return Err(bad());
    }
    let labels: Vec<&str> = name.split('.').collect();
    for label in &labels {
        let fits = !label.is_empty()
            && label.len() <= 63
            && !label.starts_with('-')
            && !label.ends_with('-')
            && label
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_');
        if !fits {
            return Err(bad());
        }
    }
    let last = labels[labels.len() - 1];
    if last.bytes().all(|b| b.is_ascii_digit()) {
        return Err(TargetError::BadIpv4(host.to_string()));
    }
    Ok(())
}

#[cfg(test)]
mod tests;
