//! The upstream link of a relay: a client link as `send` configures it, except that it never
//! gives up reconnecting while the relay runs, whatever the class of a failure, and a full
//! window waits rather than refuses.

use crate::cause::Class;
use crate::client::{
    ClientOptions, ExponentialBackoff, LastError, LinkSettings, OnBackpressure, OptionsError,
    Reconnect, RetryContext, RetryStrategy, Window,
};
use std::sync::Arc;
use std::time::Duration;

/// The client options of a relay's upstream link: `link`'s timeouts, reconnect with its
/// backoff after every failure (`Persistent`), control-ID correlation, `window`.
pub fn client_options(link: &LinkSettings, window: Window) -> ClientOptions {
    ClientOptions {
        reconnect: Reconnect {
            enabled: true,
            strategy: Arc::new(Persistent::new(ExponentialBackoff::new(link.backoff))),
        },
        window,
        on_backpressure: OnBackpressure::Wait,
        ..link.client_options()
    }
}

/// Reconnects after every failure with `backoff`'s delays, a permanent one too: an upstream
/// that refused a certificate, spoke something other than MLLP or sent a stray answer may be
/// fixed while the relay runs, and the relay has no one to hand its messages to meanwhile.
/// The failure is still reported with its class; only the decision to stop is taken away.
#[derive(Debug)]
pub(crate) struct Persistent {
    backoff: ExponentialBackoff,
}

impl Persistent {
    /// Every attempt delayed as `backoff` delays a transient failure's.
    pub(crate) fn new(backoff: ExponentialBackoff) -> Persistent {
        Persistent { backoff }
    }
}

impl RetryStrategy for Persistent {
    fn next_delay(&self, ctx: &RetryContext) -> Option<Duration> {
        let as_transient = RetryContext {
            last_error: LastError {
                class: Class::Transient,
                ..ctx.last_error
            },
            class: Class::Transient,
            ..*ctx
        };
        self.backoff.next_delay(&as_transient)
    }

    fn validate(&self) -> Result<(), OptionsError> {
        self.backoff.validate()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cause::Cause;
    use crate::client::BackoffConfig;

    fn after(cause: Cause, attempt: u32) -> RetryContext {
        crate::client::backoff::tests::ctx(attempt, cause, Duration::from_secs(3600))
    }

    #[test]
    fn every_class_is_retried_within_the_cap() {
        let config = BackoffConfig {
            initial: Duration::from_millis(100),
            multiplier: 2.0,
            max: Duration::from_secs(5),
            jitter: 0.0,
        };
        let persistent = Persistent::new(ExponentialBackoff::seeded(config, 7));
        for cause in [
            Cause::UnsolicitedAck,
            Cause::AckControlIdMismatch,
            Cause::TlsVerify,
            Cause::FramingFatal,
            Cause::ConnectionRefused,
        ] {
            assert_eq!(
                persistent.next_delay(&after(cause, 1)),
                Some(Duration::from_millis(100)),
                "{cause:?}"
            );
            assert_eq!(
                persistent.next_delay(&after(cause, 40)),
                Some(Duration::from_secs(5)),
                "{cause:?}: capped, and never given up"
            );
        }
    }
}
