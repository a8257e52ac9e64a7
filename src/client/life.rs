//! The link's lifecycle as state: where the state machine stands, the reconnect episode that
//! feeds the retry strategy, whether the current connection proved useful, and the callers
//! waiting for a close.

use super::backoff::{LastError, RetryContext};
use super::events::ClientEvent;
use super::fate::{DrainReport, FateCause};
use super::options::Reconnect;
use super::outbox::Outbox;
use super::state::{self, Reason, State};
use crate::cause::Cause;
use std::time::Duration;
use tokio::sync::oneshot;
use tokio::time::Instant;

/// How the connected phase ended.
pub(crate) enum LinkEnd {
    /// The link failed with this cause.
    Failed(Cause),
    /// Draining finished (every written send answered) or timed out.
    Drained { timed_out: bool },
    /// `destroy()` (with its reply) or the client dropped.
    Destroy(Option<oneshot::Sender<DrainReport>>, FateCause),
}

/// One reconnect episode: from the first failure to the next connection that proved useful
/// (something came back on it, or it had nothing to carry).
#[derive(Debug, Clone, Copy)]
struct Episode {
    started: Instant,
    attempt: u32,
    last_delay: Option<Duration>,
}

pub(crate) struct Lifecycle {
    state: State,
    episode: Option<Episode>,
    /// Whether the current connection wrote a frame, and whether anything came back on it: a
    /// link that takes frames and answers nothing before it drops does not end a reconnect
    /// episode, so a peer that closes every connection at once meets the retry limits.
    wrote_on_link: bool,
    heard_on_link: bool,
    last_success: Option<Instant>,
    /// Callers of `close()` waiting for the drain to end.
    closing: Vec<oneshot::Sender<DrainReport>>,
}

impl Lifecycle {
    pub(crate) fn new() -> Self {
        Lifecycle {
            state: State::Connecting,
            episode: None,
            wrote_on_link: false,
            heard_on_link: false,
            last_success: None,
            closing: Vec::new(),
        }
    }

    pub(crate) fn state(&self) -> State {
        self.state
    }

    /// Whether new sends are still taken (not draining, disconnected or closed).
    pub(crate) fn is_open(&self) -> bool {
        !matches!(
            self.state,
            State::Draining | State::Disconnected | State::Closed
        )
    }

    pub(crate) fn transition(&mut self, out: &Outbox, to: State, reason: Reason) {
        match state::apply(self.state, to, reason) {
            Ok(t) => {
                self.state = to;
                out.shared().counters().record_state(to);
                out.emit(ClientEvent::StateChange(t));
            }
            // The actor only asks for table transitions; reaching this is a bug, reported not applied.
            Err(illegal) => debug_assert!(false, "{illegal}"),
        }
    }

    /// A connection is up.
    pub(crate) fn connected(&mut self, now: Instant) {
        self.last_success = Some(now);
    }

    /// The connected phase begins: nothing written or heard on this connection yet.
    pub(crate) fn link_started(&mut self) {
        self.wrote_on_link = false;
        self.heard_on_link = false;
    }

    pub(crate) fn wrote(&mut self) {
        self.wrote_on_link = true;
    }

    pub(crate) fn heard(&mut self) {
        self.heard_on_link = true;
    }

    /// The connection failed: it ends the reconnect episode when it proved useful.
    pub(crate) fn link_failed(&mut self) {
        if self.proved_useful() {
            self.episode = None;
        }
    }

    /// Something came back on the current connection, or it had nothing to carry.
    pub(crate) fn proved_useful(&self) -> bool {
        self.heard_on_link || !self.wrote_on_link
    }

    /// Whether a reconnect episode is under way.
    pub(crate) fn retrying(&self) -> bool {
        self.episode.is_some()
    }

    /// The current attempt of the episode (1 when none).
    pub(crate) fn attempt(&self) -> u32 {
        self.episode.map_or(1, |e| e.attempt)
    }

    /// Ask the strategy for the next delay; `None` when reconnect is off or it says stop.
    pub(crate) fn retry_delay(&mut self, reconnect: &Reconnect, cause: Cause) -> Option<Duration> {
        if !reconnect.enabled {
            return None;
        }
        let now = Instant::now();
        let episode = self.episode.get_or_insert(Episode {
            started: now,
            attempt: 0,
            last_delay: None,
        });
        episode.attempt = episode.attempt.saturating_add(1);
        let ctx = RetryContext {
            attempt: episode.attempt,
            last_error: LastError {
                cause,
                class: cause.class(),
            },
            last_delay: episode.last_delay,
            elapsed: now - episode.started,
            since_last_success: self.last_success.map(|t| now - t),
            class: cause.class(),
        };
        let delay = reconnect.strategy.next_delay(&ctx)?;
        if let Some(e) = &mut self.episode {
            e.last_delay = Some(delay);
        }
        Some(delay)
    }

    /// Callers waiting for the close to end.
    pub(crate) fn add_closing(
        &mut self,
        reply: impl IntoIterator<Item = oneshot::Sender<DrainReport>>,
    ) {
        self.closing.extend(reply);
    }

    /// Tell every caller waiting for the close.
    pub(crate) fn reply_closing(&mut self, report: DrainReport) {
        for tx in self.closing.drain(..) {
            let _ = tx.send(report.clone());
        }
    }
}
