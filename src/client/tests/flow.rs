//! The flow: correlation, ACK timeouts and reconnect fates, the window (backpressure,
//! cancellation), and drain, one module each; the options they share are here.

mod correlation;
mod drain;
mod reconnect;
mod window;

use crate::client::*;
use std::sync::Arc;

fn control_id() -> ClientOptions {
    ClientOptions {
        correlation: Correlation::ControlId,
        ..Default::default()
    }
}

fn fifo() -> ClientOptions {
    ClientOptions {
        correlation: Correlation::Fifo,
        ..Default::default()
    }
}

fn with_reconnect(o: ClientOptions) -> ClientOptions {
    ClientOptions {
        reconnect: Reconnect {
            enabled: true,
            strategy: Arc::new(ExponentialBackoff::seeded(BackoffConfig::default(), 1)),
        },
        ..o
    }
}
