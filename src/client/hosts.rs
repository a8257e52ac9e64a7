//! Failover hosts: one link over an ordered list of endpoints. It connects to the current host;
//! after `failover_after` failed connects in a row, or when the reconnect policy gives up on that
//! host, it moves to the next one (a connection that took frames and ended before a single
//! answer came back counts as a failed connect: a proxy whose engine is down accepts and closes); after `failback_after` away from the first, the next connect
//! goes to the first again. Sends are unaffected by the move: pending ones go on the new
//! connection as on any reconnect.
//!
//! With `failover_after`, the reconnect policy sees one episode across the hosts (its backoff
//! grows and its limits count across the moves, and giving up ends the link), since the moves
//! wrap around and a fresh policy per host would never give up. Without it, each host gets the
//! whole policy in turn and giving up on the last ends the link.

use super::{RetryContext, RetryStrategy};
use crate::resolve::BoxFuture;
use crate::transport::{Attempt, Connection, Connector, HostTurn, LinkError, Move, TcpConnector};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::time::Instant;

/// An ordered list of hosts behind one [`Connector`].
#[derive(Debug)]
pub struct HostList {
    hosts: Vec<TcpConnector>,
    failover_after: Option<u32>,
    failback_after: Option<Duration>,
    state: Mutex<State>,
}

#[derive(Debug, Default)]
struct State {
    current: usize,
    /// Failed connects in a row on the current host.
    failures: u32,
    /// When the link left the first host.
    left_first: Option<Instant>,
    /// The reconnect policy's view starts afresh on a new host: the attempt number and time
    /// into the episode it had there (`None`: rebase at the next decision).
    base: Option<(u32, Duration)>,
    /// The link came to the current host by failing back (else by failing over).
    failed_back: bool,
}

impl HostList {
    /// `hosts` in order of preference; `None` when there is none.
    pub fn new(hosts: Vec<TcpConnector>) -> Option<HostList> {
        (!hosts.is_empty()).then(|| HostList {
            hosts,
            failover_after: None,
            failback_after: None,
            state: Mutex::new(State {
                base: Some((0, Duration::ZERO)),
                ..State::default()
            }),
        })
    }

    /// Move on after `n` failed connects in a row to one host (at least 1).
    pub fn with_failover_after(mut self, n: u32) -> HostList {
        self.failover_after = Some(n.max(1));
        self
    }

    /// Go back to the first host at the first connect `d` after leaving it.
    pub fn with_failback_after(mut self, d: Duration) -> HostList {
        self.failback_after = Some(d);
        self
    }

    /// The host the next connect goes to, as `host:port`, and its place in the list.
    pub fn current(&self) -> (usize, String) {
        let i = self.lock().current;
        (i, self.hosts[i].endpoint())
    }

    /// The host the next connect goes to, failing back first when it is time; and the move
    /// from `last`, the host of the link's previous connection, when it was another.
    fn pick(&self, last: Option<usize>) -> HostTurn {
        let mut s = self.lock();
        let back = self
            .failback_after
            .zip(s.left_first)
            .is_some_and(|(after, left)| left.elapsed() >= after);
        if back && s.current != 0 {
            s.current = 0;
            s.failures = 0;
            s.left_first = None;
            s.base = None;
            s.failed_back = true;
        }
        let moved = last.filter(|&l| l != s.current).map(|l| {
            let from = self.hosts[l].endpoint();
            match s.failed_back {
                true => Move::Failback { from },
                false => Move::Failover { from },
            }
        });
        HostTurn {
            endpoint: self.hosts[s.current].endpoint(),
            index: s.current,
            moved,
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Move to the next host; with `wrap`, from the last back to the first. Whether it moved.
    fn move_on(&self, state: &mut State, wrap: bool) -> bool {
        let next = state.current + 1;
        if next >= self.hosts.len() && !wrap {
            return false;
        }
        state.current = next % self.hosts.len();
        state.failed_back = false;
        state.failures = 0;
        state.base = None;
        state.left_first = match state.current {
            0 => None,
            _ => state.left_first.or(Some(Instant::now())),
        };
        true
    }

    /// The reconnect policy `inner`, applied to each host afresh: when it gives up on one host,
    /// the link moves to the next; it gives up only on the last.
    pub fn per_host(self: &Arc<Self>, inner: Arc<dyn RetryStrategy>) -> Arc<dyn RetryStrategy> {
        Arc::new(PerHost {
            inner,
            hosts: self.clone(),
        })
    }

    /// Without reconnecting: each host tried once, in order, and giving up after the last.
    /// A failure on one (a failed connect, or a connection lost) moves the link to the next at
    /// once.
    pub fn once_each(self: &Arc<Self>) -> Arc<dyn RetryStrategy> {
        Arc::new(OnceEach(self.clone()))
    }
}

impl Connector for HostList {
    fn connect(&self) -> BoxFuture<'_, Result<Connection, LinkError>> {
        self.attempt(None).connect
    }

    fn attempt(&self, last: Option<usize>) -> Attempt<'_> {
        let turn = self.pick(last);
        let i = turn.index;
        let connect = Box::pin(async move {
            let result = self.hosts[i].connect().await;
            // A connect that succeeds proves nothing yet: the connection's end says whether
            // the host answered (`link_ended`).
            if result.is_err() {
                self.failed(i);
            }
            result
        });
        Attempt {
            host: Some(turn),
            connect,
        }
    }

    fn link_ended(&self, index: usize, answered: bool) {
        if answered {
            let mut s = self.lock();
            if s.current == index {
                s.failures = 0;
            }
        } else {
            self.failed(index);
        }
    }
}

impl HostList {
    /// A failed connect to host `i`: counted while the link is still on it (another link's
    /// count may have moved it already), and the link moves on at `failover_after` in a row.
    fn failed(&self, i: usize) {
        let mut s = self.lock();
        if s.current == i {
            s.failures += 1;
            if self.failover_after.is_some_and(|n| s.failures >= n) {
                self.move_on(&mut s, true);
            }
        }
    }
}

/// See [`HostList::per_host`].
#[derive(Debug)]
struct PerHost {
    inner: Arc<dyn RetryStrategy>,
    hosts: Arc<HostList>,
}

impl RetryStrategy for PerHost {
    fn next_delay(&self, ctx: &RetryContext) -> Option<Duration> {
        if self.hosts.failover_after.is_some() {
            return self.inner.next_delay(ctx);
        }
        let mut s = self.hosts.lock();
        // This host's share of the episode: the attempts and time since the link came to it.
        let (attempts, elapsed) = *s
            .base
            .get_or_insert((ctx.attempt.saturating_sub(1), ctx.elapsed));
        let here = RetryContext {
            attempt: ctx.attempt.saturating_sub(attempts).max(1),
            elapsed: ctx.elapsed.saturating_sub(elapsed),
            ..*ctx
        };
        if let Some(delay) = self.inner.next_delay(&here) {
            return Some(delay);
        }
        if !self.hosts.move_on(&mut s, false) {
            return None;
        }
        s.base = Some((ctx.attempt.saturating_sub(1), ctx.elapsed));
        let fresh = RetryContext {
            attempt: 1,
            elapsed: Duration::ZERO,
            last_delay: None,
            ..*ctx
        };
        Some(self.inner.next_delay(&fresh).unwrap_or(Duration::ZERO))
    }

    fn validate(&self) -> Result<(), super::OptionsError> {
        self.inner.validate()
    }
}

#[cfg(test)]
mod tests;

/// See [`HostList::once_each`].
#[derive(Debug)]
struct OnceEach(Arc<HostList>);

impl RetryStrategy for OnceEach {
    fn next_delay(&self, _: &RetryContext) -> Option<Duration> {
        let hosts = &self.0;
        let mut s = hosts.lock();
        hosts.move_on(&mut s, false).then_some(Duration::ZERO)
    }
}
