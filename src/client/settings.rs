//! The settings of one long-lived client link as the command line states them (timeouts,
//! liveness, the reconnect policy), turned into the client's options and its connector.

use super::{
    BackoffConfig, ClientOptions, ExponentialBackoff, GiveUpAfter, MaxRetries, Reconnect,
    RetryStrategy,
};
use crate::framing::Release;
use crate::resolve::Resolver;
use crate::tls::TlsClient;
use crate::transport::TcpConnector;
use std::sync::Arc;
use std::time::Duration;

/// Timeouts, liveness and reconnects of a client link, as `send` and `soak` take them.
#[derive(Debug, Clone)]
pub struct LinkSettings {
    /// Bound on TCP connect plus TLS handshake.
    pub connect_timeout: Duration,
    /// Wait for an ACK, from the frame's flush.
    pub ack_timeout: Duration,
    /// Wait for the application ACK after a CA.
    pub app_ack_timeout: Duration,
    /// TCP keepalive interval, if any.
    pub keepalive: Option<Duration>,
    /// Reconnect after hearing nothing this long, if set.
    pub dead_peer_timeout: Option<Duration>,
    /// On closing, how long to wait for ACKs of messages written.
    pub drain_timeout: Duration,
    /// Reconnect after a transient failure.
    pub reconnect: bool,
    /// Stop after this many failed reconnect attempts in a row.
    pub max_retries: Option<u32>,
    /// Stop reconnecting this long after the last working connection.
    pub give_up_after: Duration,
    /// The delays between reconnect attempts.
    pub backoff: BackoffConfig,
    /// Which MLLP release the link speaks.
    pub release: Release,
}

impl Default for LinkSettings {
    /// The command line's defaults.
    fn default() -> Self {
        LinkSettings {
            connect_timeout: Duration::from_secs(10),
            ack_timeout: Duration::from_secs(30),
            app_ack_timeout: Duration::from_secs(30),
            keepalive: None,
            dead_peer_timeout: None,
            drain_timeout: Duration::from_secs(30),
            reconnect: true,
            max_retries: None,
            give_up_after: Duration::from_secs(120),
            backoff: BackoffConfig::default(),
            release: Release::One,
        }
    }
}

impl LinkSettings {
    /// The reconnect policy: exponential backoff (permanent causes never retried), stopped
    /// after `max_retries` failed attempts and after `give_up_after`.
    pub fn reconnect(&self) -> Reconnect {
        self.reconnect_from(ExponentialBackoff::new(self.backoff))
    }

    /// The same policy with the backoff's jitter drawn from `seed`, so that a run can be
    /// repeated exactly and each of several links jitters on its own.
    pub(crate) fn reconnect_seeded(&self, seed: u64) -> Reconnect {
        self.reconnect_from(ExponentialBackoff::seeded(self.backoff, seed))
    }

    fn reconnect_from(&self, backoff: ExponentialBackoff) -> Reconnect {
        let backoff: Arc<dyn RetryStrategy> = Arc::new(backoff);
        let bounded: Arc<dyn RetryStrategy> = match self.max_retries {
            Some(max) => Arc::new(MaxRetries {
                inner: backoff,
                max,
            }),
            None => backoff,
        };
        Reconnect {
            enabled: self.reconnect,
            strategy: Arc::new(GiveUpAfter {
                inner: bounded,
                limit: self.give_up_after,
            }),
        }
    }

    /// The client-core options these settings fix; flow options (window, correlation,
    /// pipeline) stay at the library's defaults for the caller to fill in.
    pub fn client_options(&self) -> ClientOptions {
        ClientOptions {
            ack_timeout: self.ack_timeout,
            app_ack_timeout: self.app_ack_timeout,
            drain_timeout: self.drain_timeout,
            dead_peer_timeout: self.dead_peer_timeout,
            reconnect: self.reconnect(),
            release: self.release,
            retry_backoff: self.backoff,
            ..ClientOptions::default()
        }
    }

    /// A connector to `host:port` with these timeouts, `tls` (built already) and `resolver`.
    pub fn connector(
        &self,
        host: &str,
        port: u16,
        tls: Option<TlsClient>,
        resolver: Arc<dyn Resolver>,
    ) -> TcpConnector {
        let mut connector = TcpConnector::new(host, port)
            .with_resolver(resolver)
            .with_connect_timeout(self.connect_timeout);
        if let Some(tls) = tls {
            connector = connector.with_tls(tls);
        }
        if let Some(interval) = self.keepalive {
            connector = connector.with_keepalive(interval);
        }
        connector
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_reconnect_switch_is_the_policy_s() {
        let on = LinkSettings::default();
        assert!(on.client_options().reconnect.enabled);
        let off = LinkSettings {
            reconnect: false,
            ..LinkSettings::default()
        };
        assert!(!off.client_options().reconnect.enabled);
        assert!(!off.reconnect_seeded(7).enabled);
    }
}
