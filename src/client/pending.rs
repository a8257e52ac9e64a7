//! One admitted send while the actor holds it ([`Pending`]): its payload, control ID and what
//! its MSH-16 asks of the peer, where it was written, and the fate it would get if cut off now.

use super::admission::Room;
use super::fate::{AckPayload, Fate, FateCause};
use super::fate_cell::FateTx;
use super::{ClientShared, Commit};
use crate::cause::Cause;
use crate::hl7;
use bytes::Bytes;
use std::time::{Duration, SystemTime};
use tokio::sync::oneshot;
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
    /// Where its fate goes, and where its writes are counted (shared with its handle).
    fate_tx: FateTx,
    commit_tx: Option<oneshot::Sender<Commit>>,
    /// The last write of its frame, on any connection.
    pub written: Option<Written>,
    /// Its `CA`, when one came and an application ACK may follow (control-ID correlation).
    pub commit: Option<(AckPayload, Instant)>,
    /// Rewrites that spent its resend budget: a rewrite of a frame the peer could not have
    /// read (written behind the frame after which it closed) spends none.
    pub charged: u32,
    /// Its next write spends no budget (see `charged`).
    pub free_rewrite: bool,
    /// Connections that closed before answering it while it was written alone (a poison
    /// suspect: see `flight::peer`).
    pub poison_closes: u32,
    /// A connection it was written on ended with the peer possibly having read it: from then
    /// on it is never reported never-delivered, whatever a later connection shows.
    pub maybe_read: bool,
}

#[derive(Debug, Clone, Copy)]
pub(crate) struct Written {
    pub started: Instant,
    pub flushed: Option<(Instant, SystemTime)>,
    pub bytes: usize,
    /// The connection it was written on (see [`Flights::link`](super::flight::Flights)).
    pub link: u64,
    /// Where its frame ends in the buffer of the write that carries it.
    pub end: usize,
    /// Its place among the frames written on that connection, from 1.
    pub seq: u64,
    /// Another frame written on that connection was still unanswered when it was written.
    pub pipelined: bool,
}

impl Pending {
    /// A new send, boxed once: it moves from the caller to the actor, into the flight table
    /// and out to be settled, and a whole `Pending` is large enough that copying it at each
    /// of those steps costs more than the one allocation.
    pub(crate) fn new(id: u64, payload: Bytes, room: Room, fate_tx: FateTx) -> Box<Self> {
        let (control_id, msh16) = read_msh(&payload);
        let control_id = control_id
            .filter(|c| !c.is_empty())
            .map(|c| payload.slice_ref(c));
        Box::new(Pending {
            id,
            control_id,
            app_ack: AppAck::of(msh16),
            payload,
            room,
            fate_tx,
            commit_tx: None,
            written: None,
            commit: None,
            charged: 0,
            free_rewrite: false,
            poison_closes: 0,
            maybe_read: false,
        })
    }

    /// Where its `CA` goes, for a send whose MSH-16 asks for an application ACK (only those
    /// report a commit, so only those get a channel for it); `None` for the others.
    pub(crate) fn commit_channel(&mut self) -> Option<oneshot::Receiver<Commit>> {
        if self.app_ack == AppAck::Never {
            return None;
        }
        let (tx, rx) = oneshot::channel();
        self.commit_tx = Some(tx);
        Some(rx)
    }

    /// Its frame was completely handed to connection `link`, whose current write has put
    /// `progress` bytes of its buffer out: only then can a reply on that connection be its own.
    pub(crate) fn written_on(&self, link: u64, progress: usize) -> bool {
        self.written
            .is_some_and(|w| w.link == link && (w.flushed.is_some() || w.end <= progress))
    }

    /// Settle a send that never reached the actor.
    pub(crate) fn settle_detached(self: Box<Self>, shared: &ClientShared, fate: Fate) {
        let Pending { room, fate_tx, .. } = *self;
        // Room first: a caller woken by the fate may send again at once.
        drop(room);
        shared.counters().record_fate(&fate);
        fate_tx.send(fate);
    }

    /// Give back its room (`quietly`: without waking waiters, who are woken once after a read's
    /// worth of ACKs) and hand over where its fate goes; the rest is dropped.
    pub(crate) fn release(self: Box<Self>, quietly: bool) -> FateTx {
        let Pending { room, fate_tx, .. } = *self;
        if quietly {
            room.give_back_quietly();
        }
        fate_tx
    }

    /// Its frame was written once more (the count its handle reports).
    pub(crate) fn count_write(&self) {
        self.fate_tx.count_write();
    }

    pub(crate) fn notify_commit(&mut self, commit: Commit) {
        if let Some(tx) = self.commit_tx.take() {
            let _ = tx.send(commit);
        }
    }

    /// From the last flush (or write start) to now.
    pub(crate) fn latency(&self, now: Instant) -> Duration {
        self.written
            .map(|w| now - w.flushed.map_or(w.started, |(at, _)| at))
            .unwrap_or_default()
    }

    /// The fate of a written send whose ACK will not come.
    pub(crate) fn unknown(&self, cause: FateCause, now: Instant) -> Fate {
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
    pub(crate) fn cut_off(&self, cause: FateCause, now: Instant) -> Fate {
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

/// MSH-10 and MSH-16 of a payload's first MSH: from its first segment when it starts with
/// `MSH` (the usual case, both read in one pass over the header alone), else the full scan's.
fn read_msh(payload: &[u8]) -> crate::input::header::Fields<'_> {
    if payload.starts_with(b"MSH") {
        return crate::input::header::control_id_and_app_ack(payload);
    }
    match hl7::scan(payload).msh {
        Some(msh) => (msh.control_id(), msh.application_ack_type()),
        None => (None, None),
    }
}

/// What a message's MSH-16 (application acknowledgement type, HL7 Table 0155) asks of the peer
/// after it committed the message with `CA`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum AppAck {
    /// Absent, empty, `""` (HL7 null) or `NE`: the `CA` is the final answer.
    Never,
    /// `AL`, or a value outside the table: the application ACK decides; silence is not success.
    Always,
    /// `ER`: only an error is answered, so silence through the window is success.
    OnError,
    /// `SU`: only success is answered; silence is not success.
    OnSuccess,
}

/// Whether a message's MSH-16 asks for an application ACK after the accept ACK (`AL`, `ER`,
/// `SU`, or a value outside HL7 Table 0155): such a message may get two replies, which only
/// control-ID correlation can pair with it.
pub fn asks_for_application_ack(payload: &[u8]) -> bool {
    let msh16 = hl7::scan(payload)
        .msh
        .and_then(|m| m.application_ack_type());
    AppAck::of(msh16) != AppAck::Never
}

impl AppAck {
    pub(crate) fn of(msh16: Option<&[u8]>) -> AppAck {
        match msh16.unwrap_or_default() {
            b"" | b"\"\"" | b"NE" => AppAck::Never,
            b"ER" => AppAck::OnError,
            b"SU" => AppAck::OnSuccess,
            _ => AppAck::Always,
        }
    }
}
