//! The link's life outside the connected phase: connecting, backing off, deciding whether to
//! retry, what follows a dropped link, and closing for good.

use super::Actor;
use crate::cause::Cause;
use crate::client::events::ClientEvent;
use crate::client::fate::{DrainReport, Fate, FateCause};
use crate::client::life::LinkEnd;
use crate::client::pending::Pending;
use crate::client::state::{Reason, State};
use crate::client::stats::LinkFailure;
use crate::client::Command;
use crate::transport::Connection;
use std::time::{Duration, SystemTime};
use tokio::sync::oneshot;
use tokio::time::Instant;

/// A request to stop while not connected.
type Teardown = (Option<oneshot::Sender<DrainReport>>, FateCause);

impl Actor {
    /// The actor's whole life.
    pub(crate) async fn run(mut self) {
        while let Some(conn) = self.connect_phase().await {
            let end = self.run_link(conn).await;
            if let (LinkEnd::Failed(_), Some(host)) = (&end, self.host) {
                self.connector.link_ended(host, self.life.proved_useful());
            }
            if !self.after_link(end).await {
                break;
            }
        }
        self.refuse_leftovers().await;
    }

    /// Handle a command while there is no connection. `Some` asks to stop.
    fn idle_command(&mut self, cmd: Option<Command>) -> Option<Teardown> {
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
            let attempt = connector.attempt(self.host);
            if let Some(host) = attempt.host {
                self.host = Some(host.index);
                self.emit(ClientEvent::Host(host));
            }
            let attempt = attempt.connect;
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
                    self.life.connected(Instant::now());
                    self.out
                        .shared()
                        .counters()
                        .record_connected(SystemTime::now());
                    return Some(conn);
                }
                Err(err) => {
                    let cause = err.cause;
                    self.out
                        .shared()
                        .counters()
                        .record_link_failure(LinkFailure {
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
                    let retrying = self.life.retrying();
                    match self.life.retry_delay(&self.options.reconnect, cause) {
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

    /// RECONNECTING: wait out `delay`, then CONNECTING. `false` when asked to stop meanwhile.
    async fn back_off(&mut self, delay: Duration) -> bool {
        let attempt = self.life.attempt();
        self.out.shared().counters().record_reconnect();
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
    async fn after_link(&mut self, end: LinkEnd) -> bool {
        match end {
            LinkEnd::Failed(cause) => {
                self.life.link_failed();
                self.out.shared().counters().record_link_end(cause);
                self.emit(ClientEvent::Error {
                    cause,
                    class: cause.class(),
                });
                if self.state() == State::Draining {
                    self.transition(State::Disconnected, Reason::LinkFailed(cause));
                    if let Some(report) = self.out.report_mut() {
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
                match self.life.retry_delay(&self.options.reconnect, cause) {
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
            LinkEnd::Drained { timed_out } => {
                if let Some(report) = self.out.report_mut() {
                    report.timed_out = timed_out;
                }
                self.settle_all(FateCause::DrainTimeout);
                self.transition(State::Closed, Reason::Drained);
                self.reply_closing();
                false
            }
            LinkEnd::Destroy(reply, cause) => {
                self.stop((reply, cause));
                false
            }
        }
    }

    fn on_drop(&mut self, cause: Cause, reconnecting: bool) {
        self.flights.on_drop(&mut self.out, cause, reconnecting);
    }

    /// Go to CLOSED from a non-draining state, settling everything.
    fn stop(&mut self, (reply, cause): Teardown) {
        let reason = match cause {
            FateCause::Closed => Reason::CloseRequested,
            _ => Reason::Destroyed,
        };
        self.out.start_report();
        self.life.add_closing(reply);
        self.settle_all(cause);
        if self.state() != State::Closed {
            self.transition(State::Closed, reason);
        }
        self.reply_closing();
    }

    fn reply_closing(&mut self) {
        let report = self.out.take_report();
        self.life.reply_closing(report);
    }

    fn refuse_detached(&self, p: Box<Pending>) {
        p.settle_detached(
            self.out.shared(),
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
