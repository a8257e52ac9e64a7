//! The flight table: every unsettled send, the queue of those to write, the frames in flight on
//! the current connection, which send holds each control ID, and settling sends out of it.
//! ACK crediting is in `correlate`, the timers in `timers`, the write side in `batch`.

mod again;
mod batch;
mod correlate;
mod peer;
pub(crate) use peer::ignores_control_ids;
mod queue;
mod release2;
mod timers;

use super::fate::{Fate, FateCause};
use super::options::{ClientOptions, Correlation};
use super::outbox::Outbox;
use super::pending::{AppAck, Pending};
use super::recent::{CidMap, RecentIds};
use crate::cause::Cause;
use crate::warning::WarningCode;
use queue::Queue;
use std::collections::hash_map::Entry;
use std::collections::{HashMap, VecDeque};
use std::sync::atomic::AtomicUsize;
use std::sync::Arc;
use tokio::time::Instant;

/// Sends by id. A hash map: an ordered map moves entries about on every insert and remove.
/// Each send stays in the one box it was made in (see [`Pending::new`]): the table, the
/// command channel and settling move a pointer, not the whole send.
type Sends = HashMap<u64, Box<Pending>, rustc_hash::FxBuildHasher>;

/// A written frame's place in the order of the current connection.
#[derive(Debug, Clone, Copy)]
struct Slot {
    id: u64,
    /// ACK deadline, set when the batch holding it is flushed.
    deadline: Option<Instant>,
}

pub(crate) struct Flights {
    options: Arc<ClientOptions>,
    /// Every unsettled send, by id (ids follow admission order: see `ordered_ids`).
    sends: Sends,
    /// Sends to write on the current (or next) connection, in order.
    queue: Queue,
    /// Written on the current connection, in write order. FIFO keeps slots of cancelled sends
    /// so their ACK is consumed, not credited to the next send.
    flight: VecDeque<Slot>,
    /// Control ID -> the send that holds it: the earliest admitted unsettled send with that ID.
    by_control: CidMap<u64>,
    /// Control ID -> how many later sends with that ID wait for its holder to settle.
    shared_ids: CidMap<u32>,
    /// Control IDs given up on (timed out, cancelled) on the current connection: a late reply
    /// could not be told from a reply to another send with the same ID, so none is written here.
    given_up_here: CidMap<()>,
    /// The current connection's number, from 1.
    link: u64,
    /// Bytes of the current write's buffer already handed to the stream.
    write_progress: Arc<AtomicUsize>,
    /// Enhanced sends whose `CA` came, in `CA` order (their app-ACK deadlines are monotone).
    app_wait: VecDeque<u64>,
    /// Control IDs recently given up on, to tell a late ACK from an unmatched one.
    late: RecentIds,
    /// FIFO: control IDs of the run's settled sends, on any connection (the last 4096): a
    /// reply naming one of them, not the message at its place, is a repeat or a stale reply.
    settled_ids: RecentIds,
    /// What the current connection showed of the peer (see `peer`).
    here: peer::Here,
    /// What the run learned of the peer, for the rest of it.
    peer: peer::Learned,
}

impl Flights {
    pub(crate) fn new(options: Arc<ClientOptions>) -> Self {
        Flights {
            options,
            sends: Sends::default(),
            queue: Queue::default(),
            flight: VecDeque::new(),
            by_control: CidMap::default(),
            shared_ids: CidMap::default(),
            given_up_here: CidMap::default(),
            link: 0,
            write_progress: Arc::new(AtomicUsize::new(0)),
            app_wait: VecDeque::new(),
            late: RecentIds::default(),
            settled_ids: RecentIds::default(),
            here: peer::Here::default(),
            peer: peer::Learned::default(),
        }
    }

    fn fifo(&self) -> bool {
        self.options.correlation == Correlation::Fifo
    }

    /// A new connection is up: its number, and no control ID given up on it yet.
    pub(crate) fn new_connection(&mut self) {
        self.link += 1;
        self.given_up_here.clear();
        self.begin_here();
    }

    /// No unsettled send is left.
    pub(crate) fn is_empty(&self) -> bool {
        self.sends.is_empty()
    }

    /// Take in a new send, or settle it at once when it cannot be taken (`open` is false once
    /// the client drains or closed).
    pub(crate) fn admit(&mut self, out: &mut Outbox, p: Box<Pending>, open: bool) {
        let id = p.id;
        let fifo = self.fifo();
        let refuse = if !open {
            Some(FateCause::Closed)
        } else if fifo && p.app_ack != AppAck::Never {
            // Its two replies cannot be paired in order: the second would credit the next send.
            out.warn(WarningCode::AckTwoPhaseUnavailable, None);
            Some(FateCause::TwoPhaseUnavailable)
        } else {
            None
        };
        if !fifo && refuse.is_none() {
            if let Some(c) = &p.control_id {
                // A send whose ID is held waits its turn (see `may_write`). One lookup either way.
                match self.by_control.entry(c.clone()) {
                    Entry::Occupied(_) => *self.shared_ids.entry(c.clone()).or_default() += 1,
                    Entry::Vacant(v) => {
                        v.insert(id);
                    }
                }
            }
        }
        let len = p.payload.len();
        self.sends.insert(id, p);
        match refuse {
            Some(cause) => self.settle(out, id, Fate::NeverDelivered { cause }),
            None => self.queue.push_back(id, len),
        }
    }

    /// Decide a send's fate and take it out of the table.
    pub(crate) fn settle(&mut self, out: &mut Outbox, id: u64, fate: Fate) {
        let Some(p) = self.sends.remove(&id) else {
            return;
        };
        if let Some(cid) = &p.control_id {
            self.release_control_id(cid, id);
        }
        self.remember_settled(&p);
        out.settle(p, fate);
    }

    /// FIFO: a settled send's control ID, so a later reply naming it credits no other send.
    fn remember_settled(&mut self, p: &Pending) {
        if let (true, Some(cid)) = (self.fifo(), &p.control_id) {
            self.settled_ids.insert(cid.clone());
        }
    }

    /// Cancel one send: never delivered if unwritten, unknown if written, committed-only after `CA`.
    pub(crate) fn cancel(&mut self, out: &mut Outbox, id: u64, now: Instant) {
        let Some(p) = self.sends.get(&id) else {
            return;
        };
        let fate = p.cut_off(FateCause::Cancelled, now);
        let given_up = p.written.is_some().then(|| p.control_id.clone()).flatten();
        self.give_up(given_up);
        self.queue.remove(id);
        self.settle(out, id, fate);
    }

    /// The ids of every unsettled send, in admission order.
    fn ordered_ids(&self) -> Vec<u64> {
        let mut ids: Vec<u64> = self.sends.keys().copied().collect();
        ids.sort_unstable();
        ids
    }

    /// Settle every pending send as cut off by `cause` (CA'd ones as committed-only).
    pub(crate) fn settle_all(&mut self, out: &mut Outbox, cause: FateCause) {
        let now = Instant::now();
        for id in self.ordered_ids() {
            let fate = self.sends[&id].cut_off(cause, now);
            self.settle(out, id, fate);
        }
        self.queue.clear();
        self.flight.clear();
        self.app_wait.clear();
    }

    /// Draining: nothing more is written; unwritten sends are never delivered.
    pub(crate) fn cut_off_queue(&mut self, out: &mut Outbox) {
        let now = Instant::now();
        for id in self.queue.take_all() {
            if let Some(p) = self.sends.get(&id) {
                let fate = p.cut_off(FateCause::Closed, now);
                self.settle(out, id, fate);
            }
        }
    }

    /// What a dropped link does to pending sends; `reconnecting` when another connection follows.
    /// Every send that stays goes again on the next connection, in admission order.
    pub(crate) fn on_drop(&mut self, out: &mut Outbox, cause: Cause, reconnecting: bool) {
        let now = Instant::now();
        // What the close says of the peer: where the frames it never read start, and a poison
        // message to give up on.
        let (unread_after, poison) = self.peer_closed(out, cause, now);
        self.flight.clear();
        self.app_wait.clear();
        let link = self.link;
        // A server that refused our client certificate decrypted none of what we wrote, and
        // a server that is not MLLP kept none of it: a send written only here is as unwritten.
        let unread = cause == Cause::TlsClientCert || self.here.foreign.is_some();
        let link_cause = self
            .here
            .foreign
            .map_or(FateCause::Link(cause), FateCause::NotMllp);
        let rewrites = self.rewrites_written();
        // A permanent failure (an answer naming another message, a stray answer) would come
        // back with every rewrite: what was written ends here even when a link that never
        // gives up connects again; what was not written waits for it.
        let rewriting = reconnecting && cause.class() != crate::cause::Class::Permanent;
        for id in self.ordered_ids() {
            let Some(p) = self.sends.get_mut(&id) else {
                continue;
            };
            // Behind the frame after which the peer closed: it never read it, so writing it
            // again spends no budget.
            let behind = unread_after
                .is_some_and(|after| p.written.is_some_and(|w| w.link == link && w.seq > after));
            if behind && rewrites {
                p.free_rewrite = true;
            }
            if !unread && p.written.is_some_and(|w| w.link == link) {
                p.maybe_read = true;
            }
            let p = &self.sends[&id];
            let fate = if poison == Some(id) {
                Some(p.unknown(FateCause::Poison, now))
            } else if unread && !p.maybe_read {
                let past_cap = !p.free_rewrite && p.charged >= self.options.max_resends;
                (!reconnecting || past_cap).then_some(Fate::NeverDelivered { cause: link_cause })
            } else {
                let again = if p.written.is_some() {
                    rewriting
                } else {
                    reconnecting
                };
                self.after_drop(p, link_cause, again, now)
            };
            if let Some(fate) = fate {
                self.settle(out, id, fate);
            }
        }
        self.forget_settled_suspect();
        self.queue = Queue::of(self.ordered_ids(), &self.sends);
    }

    /// The fate a drop gives a send the peer may have read, `None` while it waits for the next
    /// connection. A written send is never reported never-delivered: it may have been kept.
    fn after_drop(
        &self,
        p: &Pending,
        cause: FateCause,
        reconnecting: bool,
        now: Instant,
    ) -> Option<Fate> {
        let fifo = self.fifo();
        let orphan = FateCause::Link(Cause::InFlightOrphan);
        if !reconnecting {
            return Some(match p.written {
                Some(_) if fifo => p.unknown(orphan, now),
                _ => p.cut_off(cause, now),
            });
        }
        if p.commit.is_some() {
            // The peer holds it; sending it again would commit it twice.
            return Some(p.cut_off(FateCause::Link(Cause::ConnectionLost), now));
        }
        // Never written: it waits for the next connection, spending no budget.
        p.written?;
        if !self.rewrites_written() {
            // FIFO writes a message once: order cannot be resumed on a new session, and the
            // peer may have it.
            return Some(p.unknown(orphan, now));
        }
        // Its budget spent: it ends as the drop left it instead.
        let past_cap = !p.free_rewrite && p.charged >= self.options.max_resends;
        past_cap.then(|| p.cut_off(if fifo { orphan } else { cause }, now))
    }
}
