//! Targets against a reference written another way: the standard library's address parsers and
//! a name rule stated as forbidden substrings.

use super::*;
use proptest::prelude::*;
use std::net::{IpAddr, SocketAddrV6};

/// The rule for names, said as what may not appear.
fn reference_name(host: &str) -> bool {
    let allowed = |c: char| c.is_ascii_alphanumeric() || c == '-' || c == '_' || c == '.';
    let name = host.strip_suffix('.').unwrap_or(host);
    let last = name.rsplit('.').next().unwrap_or("");
    !name.is_empty()
        && name.len() <= 253
        && host.chars().all(allowed)
        && !name.starts_with(['.', '-'])
        && !name.ends_with(['.', '-'])
        && !name.contains("..")
        && !name.contains("-.")
        && !name.contains(".-")
        && name.split('.').all(|l| l.len() <= 63)
        && !last.chars().all(|c| c.is_ascii_digit())
}

fn reference_host(host: &str) -> bool {
    host.parse::<Ipv4Addr>().is_ok() || reference_name(host)
}

fn reference_port(port: &str) -> Option<u16> {
    let n: u32 = port
        .parse()
        .ok()
        .filter(|_| port.chars().all(|c| c.is_ascii_digit()))?;
    (1..=65535).contains(&n).then_some(n as u16)
}

fn reference(text: &str) -> Option<(String, Option<u16>)> {
    let t = text.trim();
    if let Some(inner) = t.strip_prefix('[').and_then(|r| r.strip_suffix(']')) {
        return inner
            .parse::<Ipv6Addr>()
            .ok()
            .map(|_| (inner.to_string(), None));
    }
    if let Some(rest) = t.strip_prefix('[') {
        let (inner, port) = rest.split_once("]:")?;
        let port = reference_port(port)?;
        t.parse::<SocketAddrV6>().ok()?;
        return Some((inner.to_string(), Some(port)));
    }
    if t.matches(':').count() > 1 {
        return t.parse::<Ipv6Addr>().ok().map(|_| (t.to_string(), None));
    }
    match t.split_once(':') {
        Some((host, port)) => {
            (reference_host(host)).then_some(())?;
            Some((host.to_string(), Some(reference_port(port)?)))
        }
        None => reference_host(t).then(|| (t.to_string(), None)),
    }
}

fn parsed(text: &str) -> Option<(String, Option<u16>)> {
    Target::parse(text).ok().map(|t| (t.host, t.port))
}

#[test]
fn targets_split_into_host_and_port() {
    let ok = |t: &str| parsed(t).unwrap_or_else(|| panic!("{t}"));
    assert_eq!(ok("engine.example"), ("engine.example".into(), None));
    assert_eq!(
        ok("engine.example:6661"),
        ("engine.example".into(), Some(6661))
    );
    assert_eq!(ok("10.0.0.7"), ("10.0.0.7".into(), None));
    assert_eq!(ok("[::1]:2576"), ("::1".into(), Some(2576)));
    assert_eq!(ok("[fd00::7]"), ("fd00::7".into(), None));
    assert_eq!(ok("fd00::7"), ("fd00::7".into(), None));
    assert_eq!(ok("host_1.lan."), ("host_1.lan.".into(), None));
    for bad in [
        "h:x",
        "[::1",
        "[::1]x",
        ":5",
        "h:70000",
        "h:0",
        "h:",
        "",
        "a b",
        "-x",
        "x..y",
        "1.2.3",
        "256.1.1.1",
        "[nope]:5",
        "ü.example",
        "http://h",
        "h:+5",
    ] {
        assert_eq!(parsed(bad), None, "{bad}");
    }
}

#[test]
fn display_writes_what_parses_back() {
    for text in ["h", "h:1", "[::1]:9", "::1", "10.0.0.1:2575"] {
        let target = Target::parse(text).unwrap();
        assert_eq!(Target::parse(&target.to_string()).unwrap(), target);
    }
}

fn host_part() -> impl Strategy<Value = String> {
    prop_oneof![
        any::<Ipv4Addr>().prop_map(|a| a.to_string()),
        any::<Ipv6Addr>().prop_map(|a| format!("[{a}]")),
        "[a-z][a-z0-9-]{0,8}[a-z0-9](\\.[a-z0-9_]{1,6}){0,3}\\.?",
    ]
}

proptest! {
    #[test]
    fn agrees_with_the_reference_on_any_text(text in "[a-f0-9.:\\[\\]_ -]{0,24}") {
        prop_assert_eq!(parsed(&text), reference(&text));
    }

    #[test]
    fn agrees_on_well_formed_targets(host in host_part(), port in proptest::option::of(0u32..70000)) {
        let text = match port {
            Some(p) => format!("{host}:{p}"),
            None => host.clone(),
        };
        prop_assert_eq!(parsed(&text), reference(&text));
        if let Ok(ip) = host.trim_matches(['[', ']']).parse::<IpAddr>() {
            let want_port = port.filter(|p| (1..=65535).contains(p));
            if port.is_none() || want_port.is_some() {
                let t = Target::parse(&text).unwrap();
                prop_assert_eq!(t.host.parse::<IpAddr>().unwrap(), ip);
                prop_assert_eq!(t.port.map(u32::from), want_port);
            }
        }
    }
}
