//! The link's life outside the connected phase: connecting, backing off, deciding whether to
//! retry, what a drop does to pending sends, and closing for good.

use super::actor::{Actor, Episode};
use super::backoff::{LastError, RetryContext};
use super::events::ClientEvent;
use super::fate::{DrainReport, Fate, FateCause};
use super::options::Correlation;
use super::state::{Reason, State};
use super::stats::LinkFailure;
use super::Command;
use crate::cause::Cause;
use crate::transport::Connection;
use std::time::{Duration, SystemTime};
use tokio::sync::oneshot;
use tokio::time::Instant;

/// How the connected phase ended.
pub(crate) enum End {
    /// The link failed with this cause.
    Failed(Cause),
    /// Draining finished (every written send answered) or timed out.
    Drained { timed_out: bool },
    /// `destroy()` (with its reply) or the client dropped.
    Destroy(Option<oneshot::Sender<DrainReport>>, FateCause),
}

/// A request to stop while not connected.
type Stop = (Option<oneshot::Sender<DrainReport>>, FateCause);

impl Actor {
    /// The actor's whole life.
    pub async fn run(mut self) {
        while let Some(conn) = self.connect_phase().await {
            let end = self.run_link(conn).await;
            if !self.after_link(end).await {
                break;
            }
        }
        self.refuse_leftovers().await;
    }

    /// Handle a command while there is no connection. `Some` asks to stop.
    fn idle_command(&mut self, cmd: Option<Command>) -> Option<Stop> {
        match cmd {
            Some(Command::Send(p)) => self.accept(p),
            Some(Command::SendMany(ps)) => ps.into_iter().for_each(|p| self.accept(p)),
            Some(Command::Cancel(id)) => self.cancel(id, Instant::now()),
            Some(Command::Close(tx)) => return Some((Some(tx), FateCause::Closed)),
            Some(Command::Destroy(tx)) => return Some((Some(tx), FateCause::Destroyed)),
            None => return Some((None, FateCause::ClientDropped)),
        }
        None
    }

    /// CONNECTING (and RECONNECTING between attempts) until a link is up, or CLOSED.
    async fn connect_phase(&mut self) -> Option<Connection> {
        loop {
            let connector = self.connector.clone();
            let attempt = connector.connect();
            tokio::pin!(attempt);
            let result = loop {
                tokio::select! {
                    result = &mut attempt => break result,
                    cmd = self.rx.recv() => {
                        if let Some(stop) = self.idle_command(cmd) {
                            self.stop(stop);
                            return None;
                        }
                    }
                }
            };
            match result {
                Ok(conn) => {
                    for code in &conn.security_warnings {
                        self.emit(ClientEvent::SecurityWarning(*code));
                    }
                    self.transition(State::Connected, Reason::Connected);
                    self.last_success = Some(Instant::now());
                    self.shared.counters().last_connected = Some(SystemTime::now());
                    return Some(conn);
                }
                Err(err) => {
                    let cause = err.cause;
                    self.shared.counters().last_failure = Some(LinkFailure {
                        cause,
                        detail: err.detail,
                    });
                    self.emit(ClientEvent::Error {
                        cause,
                        class: cause.class(),
                    });
                    // A failed retry returns to RECONNECTING even when it is the last one, so
                    // giving up leaves from there (RECONNECTING -> CLOSED). A first connect that
                    // is never retried (reconnect off, or a permanent cause) closes directly.
                    let retrying = self.episode.is_some();
                    match self.retry_delay(cause) {
                        Some(delay) => {
                            self.transition(State::Reconnecting, Reason::ConnectFailed(cause));
                            if !self.back_off(delay).await {
                                return None;
                            }
                        }
                        None => {
                            if retrying {
                                self.transition(State::Reconnecting, Reason::ConnectFailed(cause));
                            }
                            self.transition(State::Closed, Reason::GaveUp(cause));
                            self.settle_all(FateCause::Link(cause));
                            return None;
                        }
                    }
                }
            }
        }
    }

    /// Ask the strategy for the next delay; `None` when reconnect is off or it says stop.
    fn retry_delay(&mut self, cause: Cause) -> Option<Duration> {
        if !self.options.reconnect.enabled {
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
        let delay = self.options.reconnect.strategy.next_delay(&ctx)?;
        if let Some(e) = &mut self.episode {
            e.last_delay = Some(delay);
        }
        Some(delay)
    }

    /// RECONNECTING: wait out `delay`, then CONNECTING. `false` when asked to stop meanwhile.
    async fn back_off(&mut self, delay: Duration) -> bool {
        let attempt = self.episode.map_or(1, |e| e.attempt);
        self.shared.counters().reconnect_attempts += 1;
        self.emit(ClientEvent::Reconnecting { attempt, delay });
        let sleep = tokio::time::sleep(delay);
        tokio::pin!(sleep);
        loop {
            tokio::select! {
                () = &mut sleep => break,
                cmd = self.rx.recv() => {
                    if let Some(stop) = self.idle_command(cmd) {
                        self.stop(stop);
                        return false;
                    }
                }
            }
        }
        self.transition(State::Connecting, Reason::BackoffElapsed);
        true
    }

    /// Decide what follows the connected phase. `true` to connect again.
    async fn after_link(&mut self, end: End) -> bool {
        match end {
            End::Failed(cause) => {
                if self.heard_on_link || !self.wrote_on_link {
                    self.episode = None;
                }
                {
                    // A detail from an earlier failure must not pass for this one's.
                    let mut counters = self.shared.counters();
                    if counters.last_failure.as_ref().map(|f| f.cause) != Some(cause) {
                        counters.last_failure = None;
                    }
                }
                self.emit(ClientEvent::Error {
                    cause,
                    class: cause.class(),
                });
                if self.state == State::Draining {
                    self.transition(State::Disconnected, Reason::LinkFailed(cause));
                    if let Some(report) = &mut self.report {
                        report.link_failed = true;
                    }
                    if cause == Cause::TlsClientCert {
                        self.on_drop(cause, false);
                    }
                    self.settle_all(FateCause::Link(cause));
                    self.transition(State::Closed, Reason::Drained);
                    self.reply_closing();
                    return false;
                }
                match self.retry_delay(cause) {
                    Some(delay) => {
                        self.transition(State::Reconnecting, Reason::LinkFailed(cause));
                        self.on_drop(cause, true);
                        self.back_off(delay).await
                    }
                    None => {
                        self.transition(State::Disconnected, Reason::LinkFailed(cause));
                        self.on_drop(cause, false);
                        self.transition(State::Closed, Reason::GaveUp(cause));
                        false
                    }
                }
            }
            End::Drained { timed_out } => {
                if let Some(report) = &mut self.report {
                    report.timed_out = timed_out;
                }
                self.settle_all(FateCause::DrainTimeout);
                self.transition(State::Closed, Reason::Drained);
                self.reply_closing();
                false
            }
            End::Destroy(reply, cause) => {
                self.stop((reply, cause));
                false
            }
        }
    }

    /// What a dropped link does to pending sends; `reconnecting` when another connection follows.
    fn on_drop(&mut self, cause: Cause, reconnecting: bool) {
        let now = Instant::now();
        self.flight.clear();
        self.answered.clear();
        self.app_wait.clear();
        let ids = self.ordered_ids();
        let fifo = self.options.correlation == Correlation::Fifo;
        let final_cause = (!reconnecting).then_some(cause);
        // A server that refused our client certificate decrypted none of what we wrote: every
        // send is as unwritten.
        let unread = cause == Cause::TlsClientCert;
        for id in ids {
            let p = &self.sends[&id];
            let fate = if unread {
                match (reconnecting, fifo) {
                    (false, _) => Some(Fate::NeverDelivered {
                        cause: FateCause::Link(cause),
                    }),
                    (true, true) => Some(Fate::NeverDelivered {
                        cause: FateCause::Link(Cause::FifoUnsafe),
                    }),
                    (true, false) => None,
                }
            } else if fifo {
                // Order cannot be resumed on a new session.
                Some(match p.written {
                    Some(_) => p.unknown(FateCause::Link(Cause::InFlightOrphan), now),
                    None => Fate::NeverDelivered {
                        cause: FateCause::Link(Cause::FifoUnsafe),
                    },
                })
            } else if let Some(cause) = final_cause {
                Some(p.cut_off(FateCause::Link(cause), now))
            } else if p.commit.is_some() {
                // The peer holds it; sending it again would commit it twice.
                Some(p.cut_off(FateCause::Link(Cause::ConnectionLost), now))
            } else {
                None
            };
            if let Some(fate) = fate {
                self.settle(id, fate);
            }
        }
        // Control-ID mode writes every remaining send again, in admission order.
        self.queue = self.ordered_ids().into();
    }

    /// Go to CLOSED from a non-draining state, settling everything.
    fn stop(&mut self, (reply, cause): Stop) {
        let reason = match cause {
            FateCause::Closed => Reason::CloseRequested,
            _ => Reason::Destroyed,
        };
        self.report.get_or_insert_with(DrainReport::default);
        self.closing.extend(reply);
        self.settle_all(cause);
        if self.state != State::Closed {
            self.transition(State::Closed, reason);
        }
        self.reply_closing();
    }

    fn reply_closing(&mut self) {
        let report = self.report.take().unwrap_or_default();
        for tx in self.closing.drain(..) {
            let _ = tx.send(report.clone());
        }
    }

    fn refuse_detached(&self, p: super::actor::Pending) {
        p.settle_detached(
            &self.shared,
            Fate::NeverDelivered {
                cause: FateCause::Closed,
            },
        );
    }

    /// After CLOSED: settle whatever is still in the command channel.
    async fn refuse_leftovers(&mut self) {
        self.rx.close();
        while let Some(cmd) = self.rx.recv().await {
            match cmd {
                Command::Send(p) => self.refuse_detached(p),
                Command::SendMany(ps) => ps.into_iter().for_each(|p| self.refuse_detached(p)),
                Command::Close(tx) | Command::Destroy(tx) => {
                    let _ = tx.send(DrainReport::default());
                }
                Command::Cancel(_) => {}
            }
        }
    }
}
