//! The write side of the flight table: which queued sends may go now, coalesced into one
//! buffer, and their ACK clocks started once the buffer is flushed.

use super::correlate::may_write;
use super::{Flights, Slot};
use crate::client::events::ClientEvent;
use crate::client::outbox::Outbox;
use crate::client::pending::Written;
use crate::framing::{CR, FS, VT};
use bytes::{BufMut, BytesMut};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::SystemTime;
use tokio::time::Instant;

/// Bytes of frames coalesced into one write, at most (a larger single frame goes alone).
const WRITE_BYTES: usize = 256 * 1024;

impl Flights {
    /// A write begins: its progress starts from nothing, published through the returned counter.
    pub(crate) fn start_write(&self) -> Arc<AtomicUsize> {
        self.write_progress.store(0, Ordering::Relaxed);
        self.write_progress.clone()
    }

    /// Pipeline off: may the next send go? Control-ID mode leaves a settled send's slot behind
    /// until pruned; unpruned, it would hold the next send back with nothing left to wake the loop.
    fn nothing_in_flight(&mut self) -> bool {
        self.prune_flight();
        self.flight.is_empty() && self.sends.len() == self.queue.len() && !self.awaits_block()
    }

    /// Whether the queue's head may only be written on a new connection (its control ID was
    /// given up on here) and nothing written here is still outstanding.
    pub(crate) fn waits_for_new_link(&self) -> bool {
        let Some(head) = self.queue.front().and_then(|id| self.sends.get(&id)) else {
            return false;
        };
        self.sends.len() == self.queue.len()
            && head
                .control_id
                .as_ref()
                .is_some_and(|cid| self.given_up_here.contains_key(cid))
    }

    /// Coalesce queued frames into one buffer: one write for everything that may go now. Sends
    /// go in order: one that may not be written yet holds back those behind it. The buffer is
    /// `spare` (the last write's) when it is big enough, so a write allocates none. With it, the
    /// clock reading the frames were taken at, and whether frames that may go now were left for
    /// the next write (it was full).
    pub(crate) fn take_batch(
        &mut self,
        batch: &mut Vec<u64>,
        spare: &mut BytesMut,
    ) -> Option<(BytesMut, Instant, bool)> {
        if self.here.owed_blocks == 0 {
            return self.take_frames(batch, spare);
        }
        self.take_with_blocks(batch, spare)
    }

    /// [`Flights::take_batch`], frames only.
    pub(super) fn take_frames(
        &mut self,
        batch: &mut Vec<u64>,
        spare: &mut BytesMut,
    ) -> Option<(BytesMut, Instant, bool)> {
        if self.queue.is_empty() {
            return None;
        }
        let now = Instant::now();
        let limit = if self.holding(now) {
            return None;
        } else if !self.one_at_a_time() {
            self.queue.len()
        } else if self.nothing_in_flight() {
            1
        } else {
            return None;
        };
        // At most WRITE_BYTES of frames per write (one frame at least): the buffer is a copy of
        // payloads the sends still hold, so a window of large messages is not copied whole.
        // One look at each send: whether it may go, its frame's size, and its frame written.
        self.prune_flight();
        let busy = !self.flight.is_empty();
        let mut buf = std::mem::take(spare);
        buf.clear();
        batch.clear();
        let link = self.link;
        let mut seq = self.here.written;
        let (mut take, mut full) = (0usize, false);
        let correlation = self.options.correlation;
        for id in self.queue.ids().take(limit) {
            // Settled meanwhile (its slot stays in the queue until taken): nothing to write.
            let Some(p) = self.sends.get_mut(&id) else {
                take += 1;
                continue;
            };
            let (by_control, shared, given_up) =
                (&self.by_control, &self.shared_ids, &self.given_up_here);
            if !may_write(correlation, by_control, shared, given_up, p) {
                break;
            }
            let frame = p.payload.len() + 3;
            if !buf.is_empty() && buf.len() + frame > WRITE_BYTES {
                full = true;
                break;
            }
            take += 1;
            seq += 1;
            // A rewrite spends the budget, unless the peer could not have read the last write.
            if p.written.is_some() && !std::mem::take(&mut p.free_rewrite) {
                p.charged += 1;
            }
            // Payloads holding VT or FS were refused at admission: frame without a second scan.
            buf.reserve(frame);
            buf.put_u8(VT);
            buf.put_slice(&p.payload);
            buf.put_slice(&[FS, CR]);
            p.written = Some(Written {
                started: now,
                flushed: None,
                bytes: frame,
                link,
                end: buf.len(),
                seq,
                pipelined: busy || !batch.is_empty(),
            });
            p.count_write();
            self.flight.push_back(Slot { id, deadline: None });
            batch.push(id);
        }
        self.queue.drop_front(take);
        self.here.written = seq;
        if buf.is_empty() {
            *spare = buf;
            return None;
        }
        Some((buf, now, full))
    }

    /// The batch is on the wire: its ACK clocks start now (`at`, when the clock was read for it
    /// already).
    pub(crate) fn on_flushed(
        &mut self,
        out: &Outbox,
        batch: &mut Vec<u64>,
        n: usize,
        at: Option<Instant>,
    ) {
        let now = at.unwrap_or_else(Instant::now);
        let wall = SystemTime::now();
        let deadline = now + self.options.ack_timeout;
        for slot in self.flight.iter_mut().rev() {
            if slot.deadline.is_some() {
                break;
            }
            slot.deadline = Some(deadline);
        }
        let frames = batch.len() as u64;
        for id in batch.drain(..) {
            let Some(p) = self.sends.get_mut(&id) else {
                continue;
            };
            if let Some(w) = p.written.as_mut() {
                w.flushed = Some((now, wall));
                if self.options.write_events {
                    out.emit(ClientEvent::Written {
                        control_id: p
                            .control_id
                            .as_ref()
                            .map(|c| String::from_utf8_lossy(c).into_owned()),
                        bytes: p.payload.len(),
                    });
                }
            }
        }
        out.shared().counters().record_written(frames, n as u64);
    }

    /// The queue's depth and bytes and how many sends are in flight, for the stats.
    pub(crate) fn figures(&self) -> (usize, usize, usize) {
        let in_flight = self.sends.len() - self.queue.len().min(self.sends.len());
        (self.queue.len(), self.queue.bytes(), in_flight)
    }
}
