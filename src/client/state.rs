//! The link's six-state machine: the legal transitions written once as a table, and one pure
//! function that applies a transition or refuses it.

use crate::cause::Cause;
use serde::Serialize;
use std::fmt;

/// Where the link is. One machine follows the whole link, across reconnects.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum State {
    /// Socket (and TLS handshake, if any) in progress.
    Connecting,
    /// Framing both ways; sends permitted.
    Connected,
    /// Graceful shutdown: no new sends, ACKs of written sends still awaited.
    Draining,
    /// Waiting out the backoff before the next attempt.
    Reconnecting,
    /// Down, not retrying; only CLOSED follows.
    Disconnected,
    /// Terminal.
    Closed,
}

impl State {
    /// Every state, in declaration order.
    pub const ALL: [State; 6] = [
        State::Connecting,
        State::Connected,
        State::Draining,
        State::Reconnecting,
        State::Disconnected,
        State::Closed,
    ];

    /// The name the outputs use (`CONNECTING`, `CONNECTED`, ...).
    pub fn as_str(self) -> &'static str {
        match self {
            State::Connecting => "CONNECTING",
            State::Connected => "CONNECTED",
            State::Draining => "DRAINING",
            State::Reconnecting => "RECONNECTING",
            State::Disconnected => "DISCONNECTED",
            State::Closed => "CLOSED",
        }
    }
}

impl fmt::Display for State {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The legal transitions of the link machine, and no others. DISCONNECTED never goes
/// back to RECONNECTING; CLOSED has no way out.
pub(crate) const TRANSITIONS: &[(State, &[State])] = &[
    (
        State::Connecting,
        &[State::Connected, State::Reconnecting, State::Closed],
    ),
    (
        State::Connected,
        &[
            State::Draining,
            State::Reconnecting,
            State::Disconnected,
            State::Closed,
        ],
    ),
    (State::Draining, &[State::Disconnected, State::Closed]),
    (State::Reconnecting, &[State::Connecting, State::Closed]),
    (State::Disconnected, &[State::Closed]),
    (State::Closed, &[]),
];

/// Whether the table allows `from -> to`.
pub(crate) fn is_legal(from: State, to: State) -> bool {
    TRANSITIONS
        .iter()
        .find(|(state, _)| *state == from)
        .is_some_and(|(_, targets)| targets.contains(&to))
}

/// Why a transition happened. Codes and causes only, never payload.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(tag = "kind", content = "cause", rename_all = "kebab-case")]
#[non_exhaustive]
pub enum Reason {
    /// The connector established the link.
    Connected,
    /// An attempt to connect failed.
    ConnectFailed(Cause),
    /// An established link failed (reset, peer closed, ACK timeout, dead peer, framing).
    LinkFailed(Cause),
    /// The backoff delay elapsed; the next attempt starts.
    BackoffElapsed,
    /// The retry strategy stopped, or the cause is permanent.
    GaveUp(Cause),
    /// `close()` was called.
    CloseRequested,
    /// Draining finished: every written send was answered, or the drain timeout passed.
    Drained,
    /// `destroy()` was called, or the client was dropped.
    Destroyed,
}

impl fmt::Display for Reason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Reason::Connected => f.write_str("connected"),
            Reason::ConnectFailed(c) => write!(f, "connect failed: {c}"),
            Reason::LinkFailed(c) => write!(f, "link failed: {c}"),
            Reason::BackoffElapsed => f.write_str("backoff elapsed"),
            Reason::GaveUp(c) => write!(f, "gave up: {c}"),
            Reason::CloseRequested => f.write_str("close requested"),
            Reason::Drained => f.write_str("drained"),
            Reason::Destroyed => f.write_str("destroyed"),
        }
    }
}

/// One state change, as emitted on the event channel.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Transition {
    /// The state left.
    pub from: State,
    /// The state entered.
    pub to: State,
    /// Why.
    pub reason: Reason,
}

impl fmt::Display for Transition {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} -> {} ({})", self.from, self.to, self.reason)
    }
}

/// A transition the table does not allow: a bug in the caller, reported instead of applied.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("illegal link transition {from} -> {to}")]
pub(crate) struct IllegalTransition {
    /// The state the link was in.
    pub from: State,
    /// The state asked for.
    pub to: State,
}

/// Apply `from -> to` for `reason`: the transition event, or the refusal.
pub(crate) fn apply(
    from: State,
    to: State,
    reason: Reason,
) -> Result<Transition, IllegalTransition> {
    if is_legal(from, to) {
        Ok(Transition { from, to, reason })
    } else {
        Err(IllegalTransition { from, to })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const LEGAL: [(State, State); 12] = [
        (State::Connecting, State::Connected),
        (State::Connecting, State::Reconnecting),
        (State::Connecting, State::Closed),
        (State::Connected, State::Draining),
        (State::Connected, State::Reconnecting),
        (State::Connected, State::Disconnected),
        (State::Connected, State::Closed),
        (State::Draining, State::Disconnected),
        (State::Draining, State::Closed),
        (State::Reconnecting, State::Connecting),
        (State::Reconnecting, State::Closed),
        (State::Disconnected, State::Closed),
    ];

    #[test]
    fn exactly_the_documented_transitions_are_legal() {
        for from in State::ALL {
            for to in State::ALL {
                let expected = LEGAL.contains(&(from, to));
                let result = apply(from, to, Reason::Destroyed);
                assert_eq!(result.is_ok(), expected, "{from} -> {to}");
                if let Ok(t) = result {
                    assert_eq!((t.from, t.to), (from, to));
                }
            }
        }
    }

    #[test]
    fn closed_is_terminal_and_disconnected_never_retries() {
        for to in State::ALL {
            assert!(!is_legal(State::Closed, to));
        }
        assert!(!is_legal(State::Disconnected, State::Reconnecting));
        assert!(!is_legal(State::Draining, State::Reconnecting));
    }

    #[test]
    fn documented_sequences_are_walkable() {
        let walk = |states: &[State]| states.windows(2).all(|w| is_legal(w[0], w[1]));
        use State::*;
        assert!(walk(&[Connected, Reconnecting, Connecting, Connected]));
        assert!(walk(&[Connecting, Reconnecting, Closed]));
        assert!(walk(&[Connected, Disconnected, Closed]));
        assert!(walk(&[Connected, Draining, Disconnected, Closed]));
    }
}
