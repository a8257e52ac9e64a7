//! Name resolution behind a replaceable trait, so tests never query real DNS.

use crate::cause::Cause;
use std::future::Future;
use std::net::SocketAddr;
use std::pin::Pin;

pub type BoxFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// A failed resolution. Carries the host name (configuration, not payload).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ResolveError {
    #[error("{host}: name not found")]
    NotFound { host: String },
    #[error("{host}: resolution failed: {detail}")]
    Failed { host: String, detail: String },
}

impl ResolveError {
    pub fn cause(&self) -> Cause {
        match self {
            ResolveError::NotFound { .. } => Cause::DnsNotFound,
            ResolveError::Failed { .. } => Cause::DnsFailed,
        }
    }
}

/// Turns a host and port into addresses. IP literals never reach a resolver.
pub trait Resolver: Send + Sync + std::fmt::Debug + 'static {
    fn resolve<'a>(
        &'a self,
        host: &'a str,
        port: u16,
    ) -> BoxFuture<'a, Result<Vec<SocketAddr>, ResolveError>>;
}
