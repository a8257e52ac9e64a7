//! The upstream link of a relay: a client link as `send` configures it, except that it never
//! gives up reconnecting while the relay runs, and a full window waits rather than refuses.

use crate::client::{
    ClientOptions, ExponentialBackoff, LinkSettings, OnBackpressure, Reconnect, Window,
};
use std::sync::Arc;

/// The client options of a relay's upstream link: `link`'s timeouts, reconnect with its
/// backoff and no give-up (permanent causes still stop it), control-ID correlation, `window`.
pub fn client_options(link: &LinkSettings, window: Window) -> ClientOptions {
    ClientOptions {
        reconnect: Reconnect {
            enabled: true,
            strategy: Arc::new(ExponentialBackoff::new(link.backoff)),
        },
        window,
        on_backpressure: OnBackpressure::Wait,
        ..link.client_options()
    }
}
