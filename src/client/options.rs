//! Client options and their validation at creation: every problem is a typed error naming the
//! option.

use super::backoff::{BackoffConfig, ExponentialBackoff, RetryStrategy};
pub use super::options_error::OptionsError;
use super::retry::RetryRule;
use crate::framing::{Release, DEFAULT_MAX_FRAME};
use std::sync::Arc;
use std::time::Duration;

/// How ACKs are matched to sends.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Correlation {
    /// Each ACK answers the oldest unanswered send, whatever its MSA-2 says: only for peers
    /// whose MSA-2 cannot be trusted. Sends whose MSH-16 asks for an application ACK are
    /// refused, and a reply while nothing awaits one closes the link (`unsolicited-ack`).
    Fifo,
    /// MSA-2 names the send's MSH-10 byte for byte; ACKs may come in any order; two-phase
    /// (enhanced) mode. The default.
    #[default]
    ControlId,
}

/// What `send` does when the window is full.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum OnBackpressure {
    /// Settle the send at once as refused.
    #[default]
    Reject,
    /// Wait for room, bounded by the ACK timeout and the send's cancellation.
    Wait,
}

/// In-flight plus queued bound. The stricter of the two wins; at least one must be set.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub struct Window {
    /// Sends admitted and not yet settled, at most.
    pub count: Option<usize>,
    /// Payload bytes admitted and not yet settled, at most.
    pub bytes: Option<usize>,
}

impl Default for Window {
    fn default() -> Self {
        Window {
            count: Some(64),
            bytes: None,
        }
    }
}

/// Auto-reconnect: off by default in the library.
#[derive(Debug, Clone)]
pub struct Reconnect {
    /// Whether a failed link is connected again.
    pub enabled: bool,
    /// How long to wait before each attempt, and when to stop.
    pub strategy: Arc<dyn RetryStrategy>,
}

impl Default for Reconnect {
    fn default() -> Self {
        Reconnect {
            enabled: false,
            strategy: Arc::new(ExponentialBackoff::default()),
        }
    }
}

/// Everything the client core can be told. The connect timeout and TCP keepalive belong to the
/// [`crate::transport::Connector`].
#[derive(Debug, Clone)]
pub struct ClientOptions {
    /// From flush to ACK (default 30 s).
    pub ack_timeout: Duration,
    /// From `CA` to the application ACK of an enhanced-mode send (default 30 s).
    pub app_ack_timeout: Duration,
    /// How long `close()` waits for ACKs of written sends (default 30 s).
    pub drain_timeout: Duration,
    /// Idle limit on inbound activity while sends are outstanding is not enough to catch a
    /// wedged peer; this trips on any inbound silence this long (off by default).
    pub dead_peer_timeout: Option<Duration>,
    /// Whether and how a failed link is connected again (off by default).
    pub reconnect: Reconnect,
    /// How ACKs are paired with sends (by control ID by default).
    pub correlation: Correlation,
    /// How many sends may be admitted and unsettled at once.
    pub window: Window,
    /// What a send meets when the window is full.
    pub on_backpressure: OnBackpressure,
    /// Off: one send in flight at a time.
    pub pipeline: bool,
    /// Largest ACK payload accepted; beyond it the link fails as `framing-fatal`.
    pub max_ack_frame: usize,
    /// Capacity of the event broadcast channel; a slow subscriber sees `Lagged`, never silence.
    pub event_capacity: usize,
    /// Emit [`ClientEvent::Written`](super::ClientEvent::Written) for every frame put on the
    /// wire (off by default: one event per message is for people watching, not for load).
    pub write_events: bool,
    /// Most times one send is written again on a new connection after the link dropped
    /// (control-ID correlation; FIFO never writes a send twice). A send whose link drops once
    /// more ends `unknown-fate` with the drop's cause (`never-delivered` when the server refused
    /// our client certificate, having read none of it). Default [`DEFAULT_MAX_RESENDS`].
    pub max_resends: u32,
    /// FIFO: a send written and not answered before the link dropped is written again on the
    /// new connection (within `max_resends`) instead of ending `unknown-fate`: a possible
    /// duplicate at the receiver rather than a message of unknown fate. Off by default.
    pub at_least_once: bool,
    /// Cope with engines as they are (on by default): go one message at a time once the peer
    /// shows it does not answer pipelined frames or closes after each answer
    /// (`MLLP_PEER_NO_PIPELINING`); rewrite without spending the resend budget what was written
    /// behind the frame after which the peer closed; write the oldest unanswered message alone
    /// after a close, and give up on it as a poison message after `max_poison_closes`; stop
    /// with `ack-control-id-mismatch` once every message written on a connection had a reply
    /// naming another control ID, and none matched for a moment after.
    pub adapt_to_peer: bool,
    /// How many connections may close before answering one message written alone before it
    /// ends `unknown-fate` as a poison message (cause `peer-closed`) and the rest goes on.
    /// Default [`DEFAULT_MAX_POISON_CLOSES`].
    pub max_poison_closes: u32,
    /// Which MLLP release the link speaks. Under Release 2 each frame is answered by a block
    /// that names no message, so one frame at a time awaits its block on a connection (with
    /// its application ACK, when its MSH-16 asks for one), whatever `pipeline` says.
    pub release: Release,
    /// Answer-code rules: a negative answer one of them matches is transient, and the message
    /// is written again after a pause (`retry_backoff`'s first delay, doubling, at most its
    /// largest), at most `max_resends` times; then the last answer stands. Empty: every
    /// negative answer is final.
    pub retry_on: Vec<RetryRule>,
    /// The pauses before a rewrite under `retry_on` (jitter unused).
    pub retry_backoff: BackoffConfig,
}

/// Most charged rewrites of one message unless told otherwise (see
/// [`ClientOptions::max_resends`]).
pub const DEFAULT_MAX_RESENDS: u32 = 10;

/// Closes before an answer, with the message written alone, that make it a poison message
/// unless told otherwise (see [`ClientOptions::max_poison_closes`]).
pub const DEFAULT_MAX_POISON_CLOSES: u32 = 2;

impl Default for ClientOptions {
    fn default() -> Self {
        ClientOptions {
            ack_timeout: Duration::from_secs(30),
            app_ack_timeout: Duration::from_secs(30),
            drain_timeout: Duration::from_secs(30),
            dead_peer_timeout: None,
            reconnect: Reconnect::default(),
            correlation: Correlation::ControlId,
            window: Window::default(),
            on_backpressure: OnBackpressure::Reject,
            pipeline: true,
            max_ack_frame: DEFAULT_MAX_FRAME,
            event_capacity: 1024,
            write_events: false,
            max_resends: DEFAULT_MAX_RESENDS,
            at_least_once: false,
            adapt_to_peer: true,
            max_poison_closes: DEFAULT_MAX_POISON_CLOSES,
            release: Release::One,
            retry_on: Vec::new(),
            retry_backoff: BackoffConfig::default(),
        }
    }
}

impl ClientOptions {
    /// Check every option; the first problem found is returned.
    pub fn validate(&self) -> Result<(), OptionsError> {
        let positive = [
            ("ack-timeout", self.ack_timeout),
            ("app-ack-timeout", self.app_ack_timeout),
            ("drain-timeout", self.drain_timeout),
        ];
        for (option, value) in positive {
            if value.is_zero() {
                return Err(OptionsError::new(option, "must be greater than zero"));
            }
        }
        if self.dead_peer_timeout.is_some_and(|d| d.is_zero()) {
            return Err(OptionsError::new(
                "dead-peer-timeout",
                "must be greater than zero",
            ));
        }
        match (self.window.count, self.window.bytes) {
            (None, None) => return Err(OptionsError::new("window", "must bound something")),
            (Some(0), _) => return Err(OptionsError::new("window", "must be at least 1")),
            (_, Some(0)) => return Err(OptionsError::new("window-bytes", "must be at least 1")),
            _ => {}
        }
        if self.max_ack_frame == 0 {
            return Err(OptionsError::new("max-ack-frame", "must be at least 1"));
        }
        if self.max_poison_closes == 0 {
            return Err(OptionsError::new("max-poison-closes", "must be at least 1"));
        }
        if self.event_capacity == 0 {
            return Err(OptionsError::new("event-capacity", "must be at least 1"));
        }
        self.reconnect.strategy.validate()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::client::backoff::BackoffConfig;

    #[test]
    fn defaults_are_valid_and_match_the_contract() {
        let o = ClientOptions::default();
        o.validate().unwrap();
        assert_eq!(o.ack_timeout, Duration::from_secs(30));
        assert_eq!(o.drain_timeout, Duration::from_secs(30));
        assert_eq!(o.window.count, Some(64));
        assert!(!o.reconnect.enabled);
        assert_eq!(o.correlation, Correlation::ControlId);
        assert_eq!(o.max_resends, 10);
    }

    #[test]
    fn each_problem_names_its_option() {
        let window = |count, bytes| Window { count, bytes };
        let jitter = |o: &mut ClientOptions| {
            let config = BackoffConfig {
                jitter: -0.1,
                ..Default::default()
            };
            o.reconnect = Reconnect {
                enabled: true,
                strategy: Arc::new(ExponentialBackoff::new(config)),
            };
        };
        type Change<'a> = &'a dyn Fn(&mut ClientOptions);
        let cases: [(Change, &str); 9] = [
            (&|o| o.ack_timeout = Duration::ZERO, "ack-timeout"),
            (&|o| o.app_ack_timeout = Duration::ZERO, "app-ack-timeout"),
            (&|o| o.drain_timeout = Duration::ZERO, "drain-timeout"),
            (
                &|o| o.dead_peer_timeout = Some(Duration::ZERO),
                "dead-peer-timeout",
            ),
            (&|o| o.window = window(Some(0), None), "window"),
            (&|o| o.window = window(None, None), "window"),
            (&|o| o.window = window(None, Some(0)), "window-bytes"),
            (&|o| o.max_ack_frame = 0, "max-ack-frame"),
            (&jitter, "backoff-jitter"),
        ];
        for (change, name) in cases {
            let mut options = ClientOptions::default();
            change(&mut options);
            let err = options.validate().unwrap_err();
            assert_eq!(err.option, name);
            assert!(err.to_string().contains(name));
        }
    }
}
