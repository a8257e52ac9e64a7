//! Server options, validated once when the server is built.

use crate::ack::AckCode;
use crate::framing::{Release, Tolerance, DEFAULT_MAX_FRAME};
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

/// Default of [`ServerConfig::frame_timeout`].
pub(crate) const DEFAULT_FRAME_TIMEOUT: Duration = Duration::from_secs(60);
/// Default of [`ServerConfig::evict_idle_after`].
pub(crate) const DEFAULT_EVICT_IDLE_AFTER: Duration = Duration::from_secs(60);
/// Default of [`ServerConfig::max_buffered`]: 256 MiB.
pub(crate) const DEFAULT_MAX_BUFFERED: usize = 256 * 1024 * 1024;

#[derive(Debug, Clone)]
/// How the server reads, answers and bounds its connections; [`ServerConfig::validate`] checks it.
pub struct ServerConfig {
    /// Which deviations from strict framing are tolerated (and warned about).
    pub tolerance: Tolerance,
    /// Largest payload accepted, in bytes; a larger frame is dropped as it arrives and answered
    /// as rejected, and the connection goes on.
    pub max_frame: usize,
    /// Open connections at once; extra peers are accepted and closed at once.
    pub max_connections: usize,
    /// Open connections at once from one peer address; extra ones are accepted and closed at
    /// once. `None`: a quarter of `max_connections` (at least 1).
    pub max_connections_per_peer: Option<usize>,
    /// From the first byte after the last complete frame (whitespace included) to the end of
    /// the next frame, at most this long; then the connection is closed. `None`: no deadline.
    pub frame_timeout: Option<Duration>,
    /// Bytes held for all peers together: partly received frames, complete frames until their
    /// answers are written, and unsent ACK bytes. At the budget a connection stops reading
    /// until room comes back; one whose partial frame cannot grow while nothing held frees
    /// itself is closed. One peer address may hold the same share of it as of the connections
    /// (but always room for one `max_frame`).
    pub max_buffered: usize,
    /// Close a connection that sends nothing for this long. `None`: never.
    pub idle_timeout: Option<Duration>,
    /// At `max_connections`, a new peer closes the connection idle the longest (no partial
    /// frame, nothing awaiting commit or answer) if it has been idle at least this long.
    /// `None`: never; extra peers are closed instead.
    pub evict_idle_after: Option<Duration>,
    /// Close a connection whose peer does not take its ACKs within this long.
    pub write_timeout: Duration,
    /// After a graceful stop, how long commits under way may take before everything is dropped.
    pub drain_timeout: Duration,
    /// How messages are acknowledged: by the table, not at all, or with a forced code.
    pub ack: AckMode,
    /// Answer a batch frame (FHS/BHS envelope) with a batch acknowledgement, one ACK per
    /// message; otherwise it gets the downgraded, non-positive ACK.
    pub batch_ack: bool,
    /// Expect a PROXY protocol header on every connection (from a load balancer) and take the
    /// peer's address from it. `None`: the socket's address is the peer's.
    pub proxy: Option<crate::server::proxy::ProxyProtocol>,
    /// Which MLLP release the connections speak. Release 2 answers each frame with a block:
    /// commit once the message is committed, NAK when nothing was kept; an application ACK
    /// (enhanced mode) follows as an HL7 message, and the peer's blocks for it are read, not
    /// committed.
    pub release: Release,
}

impl Default for ServerConfig {
    fn default() -> Self {
        ServerConfig {
            tolerance: Tolerance::RECEIVER,
            max_frame: DEFAULT_MAX_FRAME,
            max_connections: 1024,
            max_connections_per_peer: None,
            frame_timeout: Some(DEFAULT_FRAME_TIMEOUT),
            max_buffered: DEFAULT_MAX_BUFFERED,
            idle_timeout: None,
            evict_idle_after: Some(DEFAULT_EVICT_IDLE_AFTER),
            write_timeout: Duration::from_secs(30),
            drain_timeout: Duration::from_secs(30),
            ack: AckMode::Auto,
            batch_ack: false,
            proxy: None,
            release: Release::One,
        }
    }
}

/// An option out of range; names the option.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ConfigError {
    #[error("{option} must be greater than zero")]
    /// An option that must be positive is zero.
    Zero {
        /// The option's field name.
        option: &'static str,
    },
}

impl ServerConfig {
    /// Every option in range, or the first one that is not.
    pub fn validate(&self) -> Result<(), ConfigError> {
        let zero = |option| Err(ConfigError::Zero { option });
        if self.max_frame == 0 {
            return zero("max_frame");
        }
        if self.max_connections == 0 {
            return zero("max_connections");
        }
        if self.max_connections_per_peer == Some(0) {
            return zero("max_connections_per_peer");
        }
        if self.max_buffered == 0 {
            return zero("max_buffered");
        }
        if self.idle_timeout == Some(Duration::ZERO) {
            return zero("idle_timeout");
        }
        if self.frame_timeout == Some(Duration::ZERO) {
            return zero("frame_timeout");
        }
        if self.write_timeout.is_zero() {
            return zero("write_timeout");
        }
        Ok(())
    }

    /// Connections one peer address may hold open at once.
    pub(crate) fn per_peer_connections(&self) -> usize {
        self.max_connections_per_peer
            .unwrap_or(self.max_connections / 4)
            .min(self.max_connections)
            .max(1)
    }

    /// Bytes of partly received frames one peer address may hold: its share of the
    /// connections, applied to the budget, and never less than one largest frame (or the
    /// whole budget, if that is smaller).
    pub(crate) fn per_peer_buffered(&self) -> usize {
        let share = (self.max_buffered as u128 * self.per_peer_connections() as u128
            / self.max_connections.max(1) as u128) as usize;
        share.max(self.max_frame.min(self.max_buffered))
    }
}
