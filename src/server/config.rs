//! Server options, validated once when the server is built.

use crate::ack::AckCode;
use crate::framing::{Tolerance, DEFAULT_MAX_FRAME};
use std::time::Duration;

/// How the server answers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum AckMode {
    /// The MSH-15 table applied to the commit outcome.
    #[default]
    Auto,
    /// Commit, never answer (a pure sink).
    None,
    /// Answer this code for testing; still bound by the commit contract and the downgrades.
    Forced(AckCode),
}

#[derive(Debug, Clone)]
pub struct ServerConfig {
    pub tolerance: Tolerance,
    /// Largest payload accepted, in bytes; larger frames end the connection.
    pub max_frame: usize,
    /// Open connections at once; extra peers are accepted and closed at once.
    pub max_connections: usize,
    /// Close a connection that sends nothing for this long. `None`: never.
    pub idle_timeout: Option<Duration>,
    /// Close a connection whose peer does not take its ACKs within this long.
    pub write_timeout: Duration,
    /// After a graceful stop, how long commits under way may take before everything is dropped.
    pub drain_timeout: Duration,
    pub ack: AckMode,
    /// Answer a batch frame (FHS/BHS envelope) with a batch acknowledgement, one ACK per
    /// message; otherwise it gets the downgraded, non-positive ACK.
    pub batch_ack: bool,
}

impl Default for ServerConfig {
    fn default() -> Self {
        ServerConfig {
            tolerance: Tolerance::RECEIVER,
            max_frame: DEFAULT_MAX_FRAME,
            max_connections: 1024,
            idle_timeout: None,
            write_timeout: Duration::from_secs(30),
            drain_timeout: Duration::from_secs(30),
            ack: AckMode::Auto,
            batch_ack: false,
        }
    }
}

/// An option out of range; names the option.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ConfigError {
    #[error("{option} must be greater than zero")]
    Zero { option: &'static str },
}

impl ServerConfig {
    pub fn validate(&self) -> Result<(), ConfigError> {
        let zero = |option| Err(ConfigError::Zero { option });
        if self.max_frame == 0 {
            return zero("max_frame");
        }
        if self.max_connections == 0 {
            return zero("max_connections");
        }
        if self.idle_timeout == Some(Duration::ZERO) {
            return zero("idle_timeout");
        }
        if self.write_timeout.is_zero() {
            return zero("write_timeout");
        }
        Ok(())
    }
}
