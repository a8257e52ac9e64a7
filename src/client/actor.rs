//! The actor that owns the link: connect, back off, reconnect, and settle sends when the link or
//! the client ends. The connected phase (writing, reading, correlation, timers) is in `link`.

use super::admission::Room;
use super::correlate::AppAck;
use super::events::ClientEvent;
use super::fate::{AckPayload, DrainReport, Fate, FateCause};
use super::options::{ClientOptions, Correlation};
use super::recent::{CidMap, KeyHasher, RecentIds};
use super::state::{self, Reason, State};
use super::{Command, Commit, Shared};
use crate::cause::Cause;
use crate::hl7;
use crate::transport::Connector;
use crate::warning::{Warning, WarningCode};
use bytes::Bytes;
use std::collections::{HashMap, VecDeque};
use std::hash::BuildHasherDefault;
use std::sync::atomic::{AtomicU32, AtomicUsize};
use std::sync::Arc;
use std::time::{Duration, SystemTime};
use tokio::sync::{broadcast, mpsc, oneshot};
use tokio::time::Instant;

/// One admitted send, owned by the actor until its fate is decided.
pub(crate) struct Pending {
    pub id: u64,
    pub payload: Bytes,
    pub control_id: Option<Bytes>,
    /// What MSH-16 asks of the peer after a `CA`.
    pub app_ack: AppAck,
    /// Its room in the window: dropping the send, settled or not, gives it back.
    room: Room,
    fate_tx: Option<oneshot::Sender<Fate>>,
    commit_tx: Option<oneshot::Sender<Commit>>,
    /// The last write of its frame, on any connection.
    pub written: Option<Written>,
    /// Its `CA`, when one came and an application ACK may follow (control-ID correlation).
    pub commit: Option<(AckPayload, Instant)>,
    /// How many times its frame was written, on any connection (shared with its handle).
    pub writes: Arc<AtomicU32>,
}

#[derive(Debug, Clone, Copy)]
pub(crate) struct Written {
    pub started: Instant,
    pub flushed: Option<(Instant, SystemTime)>,
    pub bytes: usize,
    /// The connection it was written on (see [`Actor::link`]).
    pub link: u64,
    /// Where its frame ends in the buffer of the write that carries it.
    pub end: usize,
}

impl Pending {
    pub fn new(
        id: u64,
        payload: Bytes,
        room: Room,
        fate_tx: oneshot::Sender<Fate>,
        commit_tx: oneshot::Sender<Commit>,
        writes: Arc<AtomicU32>,
    ) -> Self {
        let (control_id, app_ack) = match first_msh(&payload) {
            // The header's field index makes these reads O(1): no rescan of the segment.
            Some(msh) => (
                msh.control_id()
                    .filter(|c| !c.is_empty())
                    .map(|c| payload.slice_ref(c)),
                AppAck::of(msh.application_ack_type()),
            ),
            None => (None, AppAck::Never),
        };
        Pending {
            id,
            control_id,
            app_ack,
            payload,
            room,
            fate_tx: Some(fate_tx),
            commit_tx: Some(commit_tx),
            written: None,
            commit: None,
            writes,
        }
    }

    /// Its frame was completely handed to connection `link`, whose current write has put
    /// `progress` bytes of its buffer out: only then can a reply on that connection be its own.
    pub fn written_on(&self, link: u64, progress: usize) -> bool {
        self.written
            .is_some_and(|w| w.link == link && (w.flushed.is_some() || w.end <= progress))
    }

    /// Settle a send that never reached the actor.
    pub fn settle_detached(self, shared: &Shared, fate: Fate) {
        // Room first: a caller woken by the fate may send again at once.
        drop(self.room);
        shared.counters().record_fate(&fate);
        if let Some(tx) = self.fate_tx {
            let _ = tx.send(fate);
        }
    }

    pub fn notify_commit(&mut self, commit: Commit) {
        if let Some(tx) = self.commit_tx.take() {
            let _ = tx.send(commit);
        }
    }

    /// From the last flush (or write start) to now.
    pub fn latency(&self, now: Instant) -> Duration {
        self.written
            .map(|w| now - w.flushed.map_or(w.started, |(at, _)| at))
            .unwrap_or_default()
    }

    /// The fate of a written send whose ACK will not come.
    pub fn unknown(&self, cause: FateCause, now: Instant) -> Fate {
        let w = self
            .written
            .expect("unknown fate is only for written sends");
        let (flushed, wall) = w.flushed.unwrap_or((w.started, SystemTime::now()));
        Fate::UnknownFate {
            cause,
            flushed_at: wall,
            elapsed: now - flushed,
            bytes: w.bytes,
        }
    }

    /// The fate of a send cut off by `cause`, by what had happened to it so far.
    pub fn cut_off(&self, cause: FateCause, now: Instant) -> Fate {
        if let Some((ack, at)) = &self.commit {
            Fate::CommittedOnly {
                cause: match cause {
                    FateCause::DrainTimeout => cause,
                    _ => FateCause::Link(Cause::ConnectionLost),
                },
                ack: ack.clone(),
                latency: self.written.map(|w| *at - w.started).unwrap_or_default(),
            }
        } else if self.written.is_some() {
            self.unknown(cause, now)
        } else {
            Fate::NeverDelivered { cause }
        }
    }
}

/// The first MSH of a payload: its first segment when it starts with `MSH` (the usual case,
/// read without scanning the rest of the message), else the full scan's.
fn first_msh(payload: &[u8]) -> Option<hl7::Msh<'_>> {
    if payload.starts_with(b"MSH") {
        let end = memchr::memchr2(b'\r', b'\n', payload).unwrap_or(payload.len());
        return hl7::Msh::parse(&payload[..end]);
    }
    hl7::scan(payload).msh
}

/// Sends by id. A hash map: an ordered map moves whole `Pending`s about on every insert and
/// remove, which cost more than anything else the actor did per send.
pub(crate) type Sends = HashMap<u64, Pending, BuildHasherDefault<KeyHasher>>;

/// A written frame's place in the order of the current connection.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Slot {
    pub id: u64,
    /// ACK deadline, set when the batch holding it is flushed.
    pub deadline: Option<Instant>,
}

pub(crate) struct Actor {
    pub connector: Arc<dyn Connector>,
    pub options: Arc<ClientOptions>,
    pub shared: Arc<Shared>,
    pub events: broadcast::Sender<ClientEvent>,
    pub rx: mpsc::Receiver<Command>,
    pub state: State,
    /// Every unsettled send, by id (ids follow admission order: see `ordered_ids`).
    pub sends: Sends,
    /// Sends to write on the current (or next) connection, in order.
    pub queue: VecDeque<u64>,
    /// Written on the current connection, in write order. FIFO keeps slots of cancelled sends
    /// so their ACK is consumed, not credited to the next send.
    pub flight: VecDeque<Slot>,
    /// Control ID -> the send that holds it: the earliest admitted unsettled send with that ID.
    pub by_control: CidMap<u64>,
    /// Control ID -> how many later sends with that ID wait for its holder to settle.
    pub shared_ids: CidMap<u32>,
    /// Control IDs given up on (timed out, cancelled) on the current connection: a late reply
    /// could not be told from a reply to another send with the same ID, so none is written here.
    pub given_up_here: CidMap<()>,
    /// The current connection's number, from 1.
    pub link: u64,
    /// Bytes of the current write's buffer already handed to the stream.
    pub write_progress: Arc<AtomicUsize>,
    /// Enhanced sends whose `CA` came, in `CA` order (their app-ACK deadlines are monotone).
    pub app_wait: VecDeque<u64>,
    /// Control IDs recently given up on, to tell a late ACK from an unmatched one.
    pub late: RecentIds,
    /// FIFO: control IDs already credited on the current connection, to know a repeated ACK.
    pub answered: RecentIds,
    /// Collects what closing or destroying settles.
    pub report: Option<DrainReport>,
    /// Callers of `close()` waiting for the drain to end.
    pub closing: Vec<oneshot::Sender<DrainReport>>,
    pub episode: Option<Episode>,
    /// Whether the current connection wrote a frame, and whether anything came back on it: a
    /// link that takes frames and answers nothing before it drops does not end a reconnect
    /// episode, so a peer that closes every connection at once meets the retry limits.
    pub wrote_on_link: bool,
    pub heard_on_link: bool,
    pub last_success: Option<Instant>,
    /// Set while the link loop credits a read's worth of ACKs, to the read's wall-clock time
    /// (taken once for all its ACKs). Meanwhile room is given back at once but waiters are
    /// woken once after, so they find all of it, not one send's worth.
    pub read_wall: Option<SystemTime>,
}

/// One reconnect episode: from the first failure to the next connection that proved useful
/// (something came back on it, or it had nothing to carry).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Episode {
    pub started: Instant,
    pub attempt: u32,
    pub last_delay: Option<Duration>,
}

impl Actor {
    pub fn new(
        connector: Arc<dyn Connector>,
        options: Arc<ClientOptions>,
        shared: Arc<Shared>,
        events: broadcast::Sender<ClientEvent>,
        rx: mpsc::Receiver<Command>,
    ) -> Self {
        Actor {
            connector,
            options,
            shared,
            events,
            rx,
            state: State::Connecting,
            sends: Sends::default(),
            queue: VecDeque::new(),
            flight: VecDeque::new(),
            by_control: CidMap::default(),
            shared_ids: CidMap::default(),
            given_up_here: CidMap::default(),
            link: 0,
            write_progress: Arc::new(AtomicUsize::new(0)),
            app_wait: VecDeque::new(),
            late: RecentIds::default(),
            answered: RecentIds::default(),
            report: None,
            closing: Vec::new(),
            episode: None,
            wrote_on_link: false,
            heard_on_link: false,
            last_success: None,
            read_wall: None,
        }
    }

    pub fn emit(&self, event: ClientEvent) {
        // No subscriber is fine: events are also counted in the stats.
        let _ = self.events.send(event);
    }

    pub fn warn(&self, code: WarningCode, byte_offset: Option<u64>) {
        *self
            .shared
            .counters()
            .warnings_by_code
            .entry(code)
            .or_default() += 1;
        self.emit(ClientEvent::Warning(Warning { code, byte_offset }));
    }

    pub fn transition(&mut self, to: State, reason: Reason) {
        match state::apply(self.state, to, reason) {
            Ok(t) => {
                self.state = to;
                self.shared.counters().state = to;
                self.emit(ClientEvent::StateChange(t));
            }
            // The actor only asks for table transitions; reaching this is a bug, reported not applied.
            Err(illegal) => debug_assert!(false, "{illegal}"),
        }
    }

    /// Decide a send's fate: give back its room, count it, tell its handle and the report.
    pub fn settle(&mut self, id: u64, fate: Fate) {
        let Some(p) = self.sends.remove(&id) else {
            return;
        };
        if p.commit.is_some() {
            self.shared.counters().awaiting_app_ack -= 1;
        }
        if let Some(cid) = &p.control_id {
            self.release_control_id(cid, id);
        }
        if self.read_wall.is_some() {
            p.room.give_back_quietly();
        } else {
            drop(p.room);
        }
        self.shared.counters().record_fate_at(&fate, self.read_wall);
        if let Some(report) = &mut self.report {
            report.record(id, &fate);
        }
        if let Some(tx) = p.fate_tx {
            let _ = tx.send(fate);
        }
    }

    /// Take in a new send, or settle it at once when it cannot be taken.
    pub fn accept(&mut self, p: Pending) {
        let id = p.id;
        let fifo = self.options.correlation == Correlation::Fifo;
        let refuse = if matches!(
            self.state,
            State::Draining | State::Disconnected | State::Closed
        ) {
            Some(FateCause::Closed)
        } else if fifo && p.app_ack != AppAck::Never {
            // Its two replies cannot be paired in order: the second would credit the next send.
            self.warn(WarningCode::AckTwoPhaseUnavailable, None);
            Some(FateCause::TwoPhaseUnavailable)
        } else {
            None
        };
        if !fifo && refuse.is_none() {
            if let Some(c) = &p.control_id {
                // A send whose ID is held waits its turn (see `may_write`).
                if self.by_control.contains_key(c) {
                    *self.shared_ids.entry(c.clone()).or_default() += 1;
                } else {
                    self.by_control.insert(c.clone(), id);
                }
            }
        }
        self.sends.insert(id, p);
        match refuse {
            Some(cause) => self.settle(id, Fate::NeverDelivered { cause }),
            None => self.queue.push_back(id),
        }
    }

    /// Cancel one send: never delivered if unwritten, unknown if written, committed-only after `CA`.
    pub fn cancel(&mut self, id: u64, now: Instant) {
        let Some(p) = self.sends.get(&id) else {
            return;
        };
        let fate = p.cut_off(FateCause::Cancelled, now);
        let given_up = p.written.is_some().then(|| p.control_id.clone()).flatten();
        self.give_up(given_up);
        self.queue.retain(|q| *q != id);
        self.settle(id, fate);
    }

    /// The ids of every unsettled send, in admission order.
    pub fn ordered_ids(&self) -> Vec<u64> {
        let mut ids: Vec<u64> = self.sends.keys().copied().collect();
        ids.sort_unstable();
        ids
    }

    /// Settle every pending send as cut off by `cause` (CA'd ones as committed-only).
    pub fn settle_all(&mut self, cause: FateCause) {
        let now = Instant::now();
        for id in self.ordered_ids() {
            let fate = self.sends[&id].cut_off(cause, now);
            self.settle(id, fate);
        }
        self.queue.clear();
        self.flight.clear();
        self.app_wait.clear();
    }
}
