//! Client events: state changes, reconnect attempts, warnings, security warnings, errors. Codes,
//! causes, counts and offsets only.

use super::state::Transition;
use crate::cause::{Cause, Class};
use crate::transport::{HostTurn, Move};
use crate::warning::{Warning, WarningCode};
use std::fmt;
use std::time::Duration;

/// What the client tells its subscribers as it goes.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum ClientEvent {
    /// Every transition of the link machine.
    StateChange(Transition),
    /// A connect starts, to this host (when the connector says): `moved` when the link changed
    /// hosts since the previous connect.
    Host(HostTurn),
    /// A retry is scheduled: attempt `attempt` starts after `delay`.
    Reconnecting {
        /// The attempt's number within the reconnect episode, from 1.
        attempt: u32,
        /// How long until it starts.
        delay: Duration,
    },
    /// A tolerated deviation (framing or correlation), with its offset when about bytes.
    Warning(Warning),
    /// Raised on connect (`MLLP_TLS_VERIFY_DISABLED`).
    SecurityWarning(WarningCode),
    /// A classified link failure.
    Error {
        /// What failed.
        cause: Cause,
        /// Whether trying again may help.
        class: Class,
    },
    /// A frame is on the wire (with `write_events` on): its MSH-10 and payload size.
    Written {
        /// MSH-10 of the message, when it has one.
        control_id: Option<String>,
        /// Payload bytes, without the framing.
        bytes: usize,
    },
}

impl fmt::Display for ClientEvent {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ClientEvent::StateChange(t) => write!(f, "state {t}"),
            ClientEvent::Host(turn) => match &turn.moved {
                None => write!(f, "connecting to {}", turn.endpoint),
                Some(Move::Failover { from }) => write!(f, "failover {from} -> {}", turn.endpoint),
                Some(Move::Failback { from }) => write!(f, "failback {from} -> {}", turn.endpoint),
            },
            ClientEvent::Reconnecting { attempt, delay } => {
                let delay = crate::duration::Rounded(*delay);
                write!(f, "reconnecting: attempt {attempt} in {delay}")
            }
            ClientEvent::Warning(w) => write!(f, "warning {w}"),
            ClientEvent::SecurityWarning(code) => write!(f, "security warning {code}"),
            ClientEvent::Error { cause, class } => write!(f, "error {cause} ({class})"),
            ClientEvent::Written { control_id, bytes } => write!(
                f,
                "written {} {bytes} bytes",
                control_id.as_deref().unwrap_or("-")
            ),
        }
    }
}
