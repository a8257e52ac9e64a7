//! MLLP Release 2 on the client: blocks credited in write order, the peer's HL7
//! acknowledgements answered with a commit block, and a peer that answers as Release 1 named.
//!
//! A block names no message, so block number `k` on a connection answers the `k`-th frame
//! written on it, and the next frame is written only once every frame written there had its
//! block: one message at a time awaits its block. Pipelining frames would credit a block to the
//! wrong message as soon as the peer skipped one; written alone, a frame's block can be no
//! other frame's. A frame whose block never comes (timed out, or its send cancelled) leaves the
//! count unknowable: the connection ends, and the next one starts counting afresh.

use super::Flights;
use crate::ack::AckCode;
use crate::cause::Cause;
use crate::client::fate::AckPayload;
use crate::client::life::LinkEnd;
use crate::client::outbox::Outbox;
use crate::client::pending::AppAck;
use crate::client::Commit;
use crate::framing::{Block, Release};
use crate::hl7;
use crate::warning::WarningCode;
use bytes::{BufMut, Bytes, BytesMut};
use std::sync::atomic::Ordering;
use tokio::time::Instant;

impl Flights {
    pub(super) fn release2(&self) -> bool {
        self.options.release == Release::Two
    }

    /// Release 2: a frame written here still awaits its block.
    pub(super) fn awaits_block(&self) -> bool {
        self.release2() && self.here.blocks < self.here.written
    }

    /// One inbound frame under Release 2: a block to credit, or an HL7 message to answer with
    /// a commit block. `Some` ends the link.
    pub(crate) fn on_release2(
        &mut self,
        out: &mut Outbox,
        payload: Bytes,
        offset: u64,
        now: Instant,
    ) -> Option<LinkEnd> {
        match Block::of(&payload) {
            Some(block) => self.on_block(out, block, payload, offset, now),
            None => self.on_release2_message(out, payload, offset, now),
        }
    }

    fn on_block(
        &mut self,
        out: &mut Outbox,
        block: Block,
        payload: Bytes,
        offset: u64,
        now: Instant,
    ) -> Option<LinkEnd> {
        let progress = self.write_progress.load(Ordering::Relaxed);
        let link = self.link;
        let seq = self.here.blocks + 1;
        // A block before any frame awaits one answers nothing written here.
        if seq > self.here.written {
            out.warn(WarningCode::AckUnmatchedControlId, Some(offset));
            return Some(LinkEnd::Failed(Cause::UnsolicitedAck));
        }
        self.here.blocks = seq;
        let answered = self.flight.iter().position(|slot| {
            self.sends
                .get(&slot.id)
                .and_then(|p| p.written)
                .is_some_and(|w| w.link == link && w.seq == seq)
        });
        // Its send was settled meanwhile (cancelled): the block is consumed, credited to none.
        let slot = answered.and_then(|at| self.flight.remove(at))?;
        let id = slot.id;
        let p = self.sends.get_mut(&id)?;
        if !p.written_on(link, progress) {
            out.warn(WarningCode::AckBeforeWrite, Some(offset));
            return Some(LinkEnd::Failed(Cause::UnsolicitedAck));
        }
        let ack = AckPayload::new(payload);
        let written = p.written;
        match block {
            Block::Commit if p.app_ack != AppAck::Never => {
                // Committed; the application ACK follows as a message naming it.
                let latency = p.latency(now);
                p.commit = Some((ack.clone(), now));
                p.notify_commit(Commit {
                    code: AckCode::CA,
                    ack,
                    latency,
                });
                self.credited(id, written, now);
                out.shared().counters().record_commit();
                self.app_wait.push_back(id);
            }
            Block::Commit => self.credit_block(out, id, AckCode::CA, ack, now),
            // Nothing kept: written again while its budget lasts, then negative.
            Block::Nak if p.charged < self.options.max_resends => {
                self.credited(id, written, now);
                self.write_again(id);
            }
            Block::Nak => self.credit_block(out, id, AckCode::CE, ack, now),
        }
        None
    }

    fn credit_block(
        &mut self,
        out: &mut Outbox,
        id: u64,
        code: AckCode,
        ack: AckPayload,
        now: Instant,
    ) {
        let Some(p) = self.sends.remove(&id) else {
            return;
        };
        if let Some(cid) = &p.control_id {
            self.release_control_id(cid, id);
        }
        self.credit(out, p, code, ack, now);
    }

    /// An HL7 message from the peer: answered with a commit block, then credited when it is the
    /// application ACK of a committed send. An acknowledgement where a block was due ends the
    /// link: the peer speaks Release 1.
    fn on_release2_message(
        &mut self,
        out: &mut Outbox,
        payload: Bytes,
        offset: u64,
        now: Instant,
    ) -> Option<LinkEnd> {
        let Some((_, msa2)) = hl7::ack_reply(&payload) else {
            self.here.owed_blocks += 1;
            out.warn(WarningCode::ReplyNotAnAck, Some(offset));
            return None;
        };
        let holder = self.by_control.get(msa2).and_then(|id| self.sends.get(id));
        let names_unblocked = holder
            .is_some_and(|p| p.commit.is_none() && p.written.is_some_and(|w| w.link == self.link));
        if names_unblocked || (self.here.blocks == 0 && self.awaits_block()) {
            out.warn(WarningCode::PeerNotMllp2, Some(offset));
            return Some(LinkEnd::Failed(Cause::PeerNotMllp2));
        }
        self.here.owed_blocks += 1;
        if holder.is_some_and(|p| p.commit.is_some()) {
            return self.on_ack(out, payload, offset, now);
        }
        // The answer of a message its commit block settled already: nothing left to credit.
        None
    }

    /// The commit blocks owed for the peer's messages, added to `buf` after its frames (so the
    /// frames' places in it stay as written); how many.
    pub(super) fn put_owed_blocks(&mut self, buf: &mut BytesMut) -> u32 {
        let owed = std::mem::take(&mut self.here.owed_blocks);
        for _ in 0..owed {
            buf.put_slice(Block::Commit.wire());
        }
        owed
    }
}

impl Flights {
    /// [`Flights::take_batch`] when commit blocks are owed: they go after the frames, or alone.
    pub(super) fn take_with_blocks(
        &mut self,
        batch: &mut Vec<u64>,
        spare: &mut BytesMut,
    ) -> Option<(BytesMut, Instant, bool)> {
        if let Some((mut buf, at, full)) = self.take_frames(batch, spare) {
            self.put_owed_blocks(&mut buf);
            return Some((buf, at, full));
        }
        let mut buf = std::mem::take(spare);
        buf.clear();
        batch.clear();
        self.put_owed_blocks(&mut buf);
        Some((buf, Instant::now(), false))
    }
}
