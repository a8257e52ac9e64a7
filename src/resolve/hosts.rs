//! A [`StaticResolver`] read from hosts-format text, the format of the command's
//! `MLLP_HOSTS_FILE`: it pins names for tests and for air-gapped rehearsals without touching
//! /etc/hosts.

use super::StaticResolver;
use std::net::IpAddr;

/// A hosts-format line whose first word is not an IP address.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("line {line}: `{word}` is not an IP address")]
pub struct HostsError {
    /// The line, counted from 1.
    pub line: usize,
    /// The word that is no address.
    pub word: String,
    /// Why it is none.
    #[source]
    pub source: std::net::AddrParseError,
}

impl StaticResolver {
    /// A table from hosts-format text: `ADDRESS NAME...` lines (a name on several lines gets
    /// every address, in order), `fail NAME...` lines for names that fail as a resolver error,
    /// `#` comments. Names not listed are not found.
    pub fn from_hosts(text: &str) -> Result<StaticResolver, HostsError> {
        let mut by_name: Vec<(String, Vec<IpAddr>)> = Vec::new();
        let mut resolver = StaticResolver::new();
        for (n, line) in text.lines().enumerate() {
            let line = line.split('#').next().unwrap_or("").trim();
            let mut words = line.split_whitespace();
            let Some(first) = words.next() else { continue };
            if first == "fail" {
                for name in words {
                    resolver = resolver.failing(name, "resolver failure (MLLP_HOSTS_FILE)");
                }
                continue;
            }
            let addr: IpAddr = first.parse().map_err(|source| HostsError {
                line: n + 1,
                word: first.to_string(),
                source,
            })?;
            for name in words {
                match by_name.iter_mut().find(|(known, _)| known == name) {
                    Some((_, addrs)) => addrs.push(addr),
                    None => by_name.push((name.to_string(), vec![addr])),
                }
            }
        }
        for (name, addrs) in by_name {
            resolver = resolver.with(&name, addrs);
        }
        Ok(resolver)
    }
}

#[cfg(test)]
mod tests {
    use crate::resolve::{ResolveError, Resolver, StaticResolver};

    #[tokio::test]
    async fn hosts_text_pins_names_and_fails_the_rest() {
        let text = "127.0.0.1 engine engine.test\n::1 engine\nfail broken # note\n";
        let resolver = StaticResolver::from_hosts(text).unwrap();
        let addrs = resolver.resolve("engine", 2575).await.unwrap();
        assert_eq!(addrs.len(), 2);
        assert_eq!(addrs[0].to_string(), "127.0.0.1:2575");
        assert!(matches!(
            resolver.resolve("nowhere", 1).await,
            Err(ResolveError::NotFound { .. })
        ));
        assert!(matches!(
            resolver.resolve("broken", 1).await,
            Err(ResolveError::Failed { .. })
        ));
        let err = StaticResolver::from_hosts("\nnot-an-ip name").unwrap_err();
        assert_eq!(err.to_string(), "line 2: `not-an-ip` is not an IP address");
    }
}
