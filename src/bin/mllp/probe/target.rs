//! `HOST[:PORT]` as the user types it: names, IPv4, and IPv6 literals bare or in brackets.

use anyhow::{bail, Context};

pub const DEFAULT_PORT: u16 = 2575;

/// Splits a target into host and port; `port_flag` (--port) fills in a missing port and must
/// agree with one given in the target.
pub fn parse(target: &str, port_flag: Option<u16>) -> anyhow::Result<(String, u16)> {
    let target = target.trim();
    let (host, port_text) = if let Some(rest) = target.strip_prefix('[') {
        let Some((inside, after)) = rest.split_once(']') else {
            bail!("{target}: unclosed '[' in an IPv6 address");
        };
        match after {
            "" => (inside, None),
            _ => match after.strip_prefix(':') {
                Some(port) => (inside, Some(port)),
                None => bail!("{target}: expected :PORT after ']'"),
            },
        }
    } else if target.matches(':').count() > 1 {
        // A bare IPv6 literal has no port; write [addr]:port for one.
        (target, None)
    } else {
        match target.split_once(':') {
            Some((host, port)) => (host, Some(port)),
            None => (target, None),
        }
    };
    if host.is_empty() {
        bail!("{target}: no host");
    }
    let port = match port_text {
        Some(text) => Some(
            text.parse::<u16>()
                .with_context(|| format!("{target}: `{text}` is not a port number"))?,
        ),
        None => None,
    };
    let port = match (port, port_flag) {
        (Some(a), Some(b)) if a != b => bail!("{target}: port {a} conflicts with --port {b}"),
        (Some(p), _) | (None, Some(p)) => p,
        (None, None) => DEFAULT_PORT,
    };
    Ok((host.to_string(), port))
}

#[cfg(test)]
mod tests {
    use super::parse;

    #[test]
    fn targets_split_into_host_and_port() {
        let ok = |t: &str, flag| parse(t, flag).unwrap();
        assert_eq!(ok("engine.example", None), ("engine.example".into(), 2575));
        assert_eq!(
            ok("engine.example:6661", None),
            ("engine.example".into(), 6661)
        );
        assert_eq!(ok("10.0.0.7", Some(7)), ("10.0.0.7".into(), 7));
        assert_eq!(ok("[::1]:2576", None), ("::1".into(), 2576));
        assert_eq!(ok("[fd00::7]", None), ("fd00::7".into(), 2575));
        assert_eq!(ok("fd00::7", Some(9)), ("fd00::7".into(), 9));
        assert_eq!(ok("h:5", Some(5)), ("h".into(), 5));
        for bad in ["h:x", "[::1", "[::1]x", ":5", "h:70000"] {
            assert!(parse(bad, None).is_err(), "{bad}");
        }
        assert!(parse("h:5", Some(6)).is_err());
    }
}
