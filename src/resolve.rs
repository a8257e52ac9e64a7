//! Name resolution behind a replaceable trait, so tests never query real DNS.

use crate::cause::Cause;
use std::collections::HashMap;
use std::future::Future;
use std::io;
use std::net::{IpAddr, SocketAddr};
use std::pin::Pin;

mod hosts;

pub use hosts::HostsError;

/// A boxed, sendable future: what the [`Resolver`] and connector traits return.
pub(crate) type BoxFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// A failed resolution. Carries the host name (configuration, not payload).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ResolveError {
    /// The name does not exist or has no address: permanent ([`Cause::DnsNotFound`]).
    #[error("{host}: name not found")]
    NotFound {
        /// The name looked up.
        host: String,
    },
    /// The lookup itself failed (no answer, server failure): transient ([`Cause::DnsFailed`]).
    #[error("{host}: resolution failed: {detail}")]
    Failed {
        /// The name looked up.
        host: String,
        /// The resolver's error text.
        detail: String,
    },
}

impl ResolveError {
    /// The failure's cause, which says whether it is transient or permanent.
    pub fn cause(&self) -> Cause {
        match self {
            ResolveError::NotFound { .. } => Cause::DnsNotFound,
            ResolveError::Failed { .. } => Cause::DnsFailed,
        }
    }
}

/// Turns a host and port into addresses. IP literals never reach a resolver.
pub trait Resolver: Send + Sync + std::fmt::Debug + 'static {
    /// The addresses of `host`, each with `port`, in the order to try them.
    fn resolve<'a>(
        &'a self,
        host: &'a str,
        port: u16,
    ) -> BoxFuture<'a, Result<Vec<SocketAddr>, ResolveError>>;
}

/// Parses an IP literal (bracketed IPv6 too), so literals never reach a resolver.
pub(crate) fn ip_literal(host: &str, port: u16) -> Option<SocketAddr> {
    let bare = host
        .strip_prefix('[')
        .and_then(|h| h.strip_suffix(']'))
        .unwrap_or(host);
    bare.parse::<IpAddr>()
        .ok()
        .map(|ip| SocketAddr::new(ip, port))
}

/// Every resolver's answer: an IP literal at once, anything else from `lookup` (which is not
/// started for a literal).
fn literal_or<'a>(
    host: &'a str,
    port: u16,
    lookup: impl Future<Output = Result<Vec<SocketAddr>, ResolveError>> + Send + 'a,
) -> BoxFuture<'a, Result<Vec<SocketAddr>, ResolveError>> {
    Box::pin(async move {
        match ip_literal(host, port) {
            Some(addr) => Ok(vec![addr]),
            None => lookup.await,
        }
    })
}

/// The operating system's resolver (`getaddrinfo` through tokio).
#[derive(Debug, Clone, Copy, Default)]
pub struct SystemResolver;

impl Resolver for SystemResolver {
    fn resolve<'a>(
        &'a self,
        host: &'a str,
        port: u16,
    ) -> BoxFuture<'a, Result<Vec<SocketAddr>, ResolveError>> {
        literal_or(host, port, async move {
            match tokio::net::lookup_host((host, port)).await {
                Ok(addrs) => {
                    let addrs: Vec<SocketAddr> = addrs.collect();
                    if addrs.is_empty() {
                        Err(ResolveError::NotFound { host: host.into() })
                    } else {
                        Ok(addrs)
                    }
                }
                Err(err) => Err(classify_lookup_error(host, &err)),
            }
        })
    }
}

/// `getaddrinfo` failures reach us as `io::Error`s whose message is `gai_strerror`'s text; the
/// "no such name" family (EAI_NONAME, EAI_NODATA) is a permanent not-found, the rest (EAI_AGAIN,
/// EAI_FAIL, system errors) a transient failure.
fn classify_lookup_error(host: &str, err: &io::Error) -> ResolveError {
    let text = err.to_string();
    let lower = text.to_ascii_lowercase();
    let not_found = [
        "name or service not known",
        "no address associated",
        "nodename nor servname",
        "not known",
        "no such host",
    ];
    if not_found.iter().any(|needle| lower.contains(needle)) {
        ResolveError::NotFound { host: host.into() }
    } else {
        ResolveError::Failed {
            host: host.into(),
            detail: text,
        }
    }
}

/// A fixed table of answers, for tests and for pinning names: each host maps to its addresses
/// (the port is replaced by the requested one) or to an error. Unlisted hosts are not found.
#[derive(Debug, Clone, Default)]
pub struct StaticResolver {
    entries: HashMap<String, StaticAnswer>,
}

#[derive(Debug, Clone)]
enum StaticAnswer {
    Addresses(Vec<IpAddr>),
    NotFound,
    Failed(String),
}

impl StaticResolver {
    /// A table with no entries: every name is not found, only IP literals resolve.
    pub fn new() -> Self {
        Self::default()
    }

    /// `host` resolves to `addrs`, in that order.
    pub fn with(mut self, host: &str, addrs: impl IntoIterator<Item = IpAddr>) -> Self {
        let addrs = addrs.into_iter().collect();
        self.entries
            .insert(host.to_string(), StaticAnswer::Addresses(addrs));
        self
    }

    /// `host` fails as "name not found".
    pub fn not_found(mut self, host: &str) -> Self {
        self.entries
            .insert(host.to_string(), StaticAnswer::NotFound);
        self
    }

    /// `host` fails as a resolver failure with `detail`.
    pub fn failing(mut self, host: &str, detail: &str) -> Self {
        self.entries
            .insert(host.to_string(), StaticAnswer::Failed(detail.to_string()));
        self
    }
}

impl Resolver for StaticResolver {
    fn resolve<'a>(
        &'a self,
        host: &'a str,
        port: u16,
    ) -> BoxFuture<'a, Result<Vec<SocketAddr>, ResolveError>> {
        literal_or(host, port, async move {
            match self.entries.get(host) {
                Some(StaticAnswer::Addresses(ips)) if !ips.is_empty() => {
                    Ok(ips.iter().map(|ip| SocketAddr::new(*ip, port)).collect())
                }
                Some(StaticAnswer::Failed(detail)) => Err(ResolveError::Failed {
                    host: host.into(),
                    detail: detail.clone(),
                }),
                Some(StaticAnswer::Addresses(_)) | Some(StaticAnswer::NotFound) | None => {
                    Err(ResolveError::NotFound { host: host.into() })
                }
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::net::Ipv4Addr;

    #[tokio::test]
    async fn literals_short_circuit_without_lookup() {
        // An empty static table answers "not found" for every name, so a literal that resolved
        // proves no lookup happened.
        let resolver = StaticResolver::new();
        let v4 = resolver.resolve("127.0.0.1", 2575).await.unwrap();
        assert_eq!(v4, vec!["127.0.0.1:2575".parse().unwrap()]);
        let v6 = resolver.resolve("[::1]", 7).await.unwrap();
        assert_eq!(v6, vec!["[::1]:7".parse().unwrap()]);
        let sys = SystemResolver.resolve("::1", 9).await.unwrap();
        assert_eq!(sys, vec!["[::1]:9".parse().unwrap()]);
    }

    #[tokio::test]
    async fn static_table_answers_and_fails_with_causes() {
        let resolver = StaticResolver::new()
            .with("engine.example", [IpAddr::V4(Ipv4Addr::new(10, 0, 0, 7))])
            .not_found("gone.example")
            .failing("flaky.example", "SERVFAIL");
        let addrs = resolver.resolve("engine.example", 2575).await.unwrap();
        assert_eq!(addrs, vec!["10.0.0.7:2575".parse().unwrap()]);
        let gone = resolver.resolve("gone.example", 1).await.unwrap_err();
        assert_eq!(gone.cause(), Cause::DnsNotFound);
        let unknown = resolver.resolve("other.example", 1).await.unwrap_err();
        assert_eq!(unknown.cause(), Cause::DnsNotFound);
        let flaky = resolver.resolve("flaky.example", 1).await.unwrap_err();
        assert_eq!(flaky.cause(), Cause::DnsFailed);
        assert!(flaky.to_string().contains("SERVFAIL"));
    }

    #[test]
    fn getaddrinfo_texts_split_into_not_found_and_failed() {
        let noname =
            io::Error::other("failed to lookup address information: Name or service not known");
        assert_eq!(
            classify_lookup_error("x", &noname).cause(),
            Cause::DnsNotFound
        );
        let again = io::Error::other(
            "failed to lookup address information: Temporary failure in name resolution",
        );
        assert_eq!(classify_lookup_error("x", &again).cause(), Cause::DnsFailed);
    }
}
