//! Per-message decisions taken before the commit: what `listen`'s test-double behaviours and
//! de-duplication plug into. The default policy commits everything and answers at once.

use super::sink::Inbound;
use std::time::Duration;

/// What to do with a message instead of (or besides) a plain commit.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Action {
    /// Hand it to the sink.
    #[default]
    Commit,
    /// Already committed earlier: answer as committed, do not commit again.
    Duplicate,
    /// Do not commit; answer as a commit failure (AE/CE).
    Fail,
    /// Do not commit; answer as rejected (AR/CR).
    Reject,
}

/// A policy's decision for one message.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Decision {
    /// Commit, or answer without committing, and how.
    pub action: Action,
    /// Hold the ACK back this long after the commit.
    pub ack_delay: Option<Duration>,
    /// Write no ACK at all (the message is still committed unless the action says otherwise).
    pub silent: bool,
    /// Close the connection after this message's ACK.
    pub close_after: bool,
    /// End the connection right after this message's commit step: no ACK for it, no linger
    /// (fault injection; a peer with data still unread sees a reset).
    pub reset: bool,
}

/// Consulted once per message, in arrival order, before the commit.
pub trait Policy: Send + Sync + 'static {
    /// The decision for `message`, before it is committed.
    fn decide(&self, message: &Inbound) -> Decision;

    /// Called after a commit (or a duplicate) succeeded, so a de-duplicating policy can remember it.
    fn committed(&self, _message: &Inbound) {}

    /// Called once when a connection ends, so per-connection state can be dropped.
    fn closed(&self, _connection: u64) {}
}

/// Commit everything, answer at once.
#[derive(Debug, Default, Clone, Copy)]
pub struct CommitAll;

impl Policy for CommitAll {
    fn decide(&self, _message: &Inbound) -> Decision {
        Decision::default()
    }
}
