//! The write side of a connection: each message's ACK (and, in enhanced mode, its application
//! ACK) is built into the write buffer, counted, and written out in one go.

use super::commit::Entry;
use super::stop::StopWait;
use super::{End, Ledger, Part};
use crate::ack::{self, AckCode, AckContext, AckTemplate, BuiltAck, Disposition, NackReason};
use crate::cause::{classify_io, Cause};
use crate::framing::{close_frame, encode_frame_vec, Block, Release, VT};
use crate::hl7::{self, Shape};
use crate::server::clock::Utc;
use crate::server::event::NackWhy;
use crate::server::limits::Buffered;
use crate::server::{AckMode, Shared};
use crate::warning::Warning;
use bytes::Bytes;
use std::time::{Duration, SystemTime, UNIX_EPOCH};
use tokio::io::{AsyncWrite, AsyncWriteExt};

/// The answers of one connection: the ACKs built and not yet written, and what is reused from
/// one ACK to the next.
pub(super) struct Answers<'a> {
    shared: &'a Shared,
    /// ACK frames waiting to be written together; each accept ACK is written straight into it.
    out: Vec<u8>,
    /// Reused for every ACK: the control ID is rewritten in place, MSH-7 once a second.
    ack: AckContext,
    /// The last positive ACK, patched for the next message from the same sender.
    template: AckTemplate,
    /// The second `ack.timestamp` shows, as the times it holds: `[from, until)`.
    stamped: Option<(SystemTime, SystemTime)>,
    /// The last batch or application ACK's payload buffer, reused for the next.
    ack_buf: Vec<u8>,
    /// The counter `ack.control_id` ends in (0: none yet).
    ack_counter: u64,
}

impl<'a> Answers<'a> {
    pub(super) fn new(shared: &'a Shared) -> Answers<'a> {
        Answers {
            shared,
            out: Vec::new(),
            ack: AckContext::default(),
            template: AckTemplate::default(),
            stamped: None,
            ack_buf: Vec::new(),
            ack_counter: 0,
        }
    }

    /// ACKs are built and not yet written.
    pub(super) fn unsent(&self) -> bool {
        !self.out.is_empty()
    }

    /// Start a batch's answers, stamped `now`, with nothing left over.
    pub(super) fn begin(&mut self, now: SystemTime) {
        self.stamp(now);
        self.out.clear();
    }

    /// Set the ACKs' MSH-7 to `now`, formatted only when the second changes: within the second
    /// already shown, two comparisons and no arithmetic.
    fn stamp(&mut self, now: SystemTime) {
        if self
            .stamped
            .is_some_and(|(from, until)| from <= now && now < until)
        {
            return;
        }
        let second = now.duration_since(UNIX_EPOCH).map_or(0, |d| d.as_secs());
        let from = UNIX_EPOCH + Duration::from_secs(second);
        self.ack.timestamp = Utc::from_system(now).hl7();
        self.stamped = Some((from, from + Duration::from_secs(1)));
    }

    /// Build this message's ACK (and, in enhanced mode, its application ACK) into the write
    /// buffer, with `text` for MSA-3 when it is negative; the first code written, if any.
    pub(super) fn answer(
        &mut self,
        entry: &Entry<'_, '_>,
        disposition: Disposition,
        text: Option<String>,
        silent: bool,
        ledger: &mut Ledger<'_>,
    ) -> Option<AckCode> {
        self.ack.text = text;
        let code = self.build(entry, disposition, silent, ledger);
        self.ack.text = None;
        code
    }

    /// [`answer`](Self::answer) in the committing program's `words`: MSA-3 whatever the code,
    /// and ERR-8 when negative.
    pub(super) fn answer_worded(
        &mut self,
        entry: &Entry<'_, '_>,
        disposition: Disposition,
        words: String,
        silent: bool,
        ledger: &mut Ledger<'_>,
    ) -> Option<AckCode> {
        self.ack.worded = true;
        let code = self.answer(entry, disposition, Some(words), silent, ledger);
        self.ack.worded = false;
        code
    }

    fn build(
        &mut self,
        entry: &Entry<'_, '_>,
        disposition: Disposition,
        silent: bool,
        ledger: &mut Ledger<'_>,
    ) -> Option<AckCode> {
        let shared = self.shared;
        let forced = match shared.config.ack {
            AckMode::None => {
                ledger.unanswered();
                return None;
            }
            AckMode::Auto => None,
            AckMode::Forced(code) => Some(code),
        };
        if silent {
            ledger.unanswered();
            return None;
        }
        let start = self.out.len();
        shared.next_ack_control_id(&mut self.ack.control_id, &mut self.ack_counter);
        self.ack.forced = forced;
        let batch = shared.config.batch_ack && entry.message.shape == Shape::Batch;
        let code = if batch {
            self.batch_ack(entry, disposition, ledger)?
        } else {
            self.accept_ack(entry, disposition, ledger)?
        };
        self.block(start, Some(code), disposition);
        // Enhanced mode: the application ACK follows the accept ACK, same MSA-2.
        if code.is_commit_level() && !batch {
            shared.next_ack_control_id(&mut self.ack.control_id, &mut self.ack_counter);
            if let Some(app) = ack::application_answer(
                entry.scan,
                disposition,
                entry.message.damaged,
                &self.ack,
                std::mem::take(&mut self.ack_buf),
            ) {
                self.write_ack(app, disposition, ledger);
            }
        }
        Some(code)
    }

    /// A batch's one ACK; none for an inbound ACK (then its block alone, in Release 2).
    fn batch_ack(
        &mut self,
        entry: &Entry<'_, '_>,
        disposition: Disposition,
        ledger: &mut Ledger<'_>,
    ) -> Option<AckCode> {
        let message = entry.message;
        let Some(b) =
            ack::build_batch_ack(&message.payload, disposition, message.damaged, &self.ack)
        else {
            self.inbound_ack(disposition, ledger);
            return None;
        };
        let built = BuiltAck {
            payload: b.payload,
            code: b.code,
            reason: b.reason,
            warnings: b.warnings,
        };
        self.write_ack(built, disposition, ledger)
    }

    /// A message's accept (or original-mode) ACK, framed where it is written; none for an
    /// inbound ACK (then its block alone, in Release 2).
    #[inline]
    fn accept_ack(
        &mut self,
        entry: &Entry<'_, '_>,
        disposition: Disposition,
        ledger: &mut Ledger<'_>,
    ) -> Option<AckCode> {
        let (message, scan) = (entry.message, entry.scan);
        // A message not refused has no defect: the refusal looked for one and found none.
        let defect = match entry.refused {
            None => None,
            Some(_) => ack::defect_of(scan, message.damaged),
        };
        debug_assert!(
            message.is_ack || defect == ack::defect_of(scan, message.damaged),
            "a message the refusal let through has a defect"
        );
        // Framed where it is written: the VT, the answer after it, then its end.
        let start = self.out.len();
        self.out.push(VT);
        let answered = ack::answer_into(
            scan,
            message.is_ack,
            disposition,
            defect,
            &self.ack,
            &mut self.out,
            Some(&mut self.template),
        );
        let Some((answered, unframed)) = answered else {
            self.out.truncate(start);
            self.inbound_ack(disposition, ledger);
            return None;
        };
        for code in &answered.warnings {
            ledger.warn(Warning::new(*code));
        }
        if let Err(e) = close_frame(&mut self.out, start, unframed) {
            // Cannot happen for a built ACK; if it ever does, say so rather than send it
            // broken.
            ledger.warn(Warning::new(e.code));
            return None;
        }
        Some(self.count(answered.code, answered.reason, disposition, ledger))
    }

    /// An inbound ACK: committed like any message, never answered (Release 2: but for its
    /// block).
    fn inbound_ack(&mut self, disposition: Disposition, ledger: &mut Ledger<'_>) {
        ledger.inbound_ack();
        let start = self.out.len();
        self.block(start, None, disposition);
    }

    /// Release 2: the answer written since `start` (the HL7 ACK with `code`, or none for an
    /// inbound ACK) becomes its block: commit only for a message committed and answered
    /// positively, NAK otherwise.
    fn block(&mut self, start: usize, code: Option<AckCode>, disposition: Disposition) {
        if self.shared.config.release != Release::Two {
            return;
        }
        let kept = disposition == Disposition::Committed && code.is_none_or(AckCode::is_positive);
        self.out.truncate(start);
        let block = if kept { Block::Commit } else { Block::Nak };
        self.out.extend_from_slice(block.wire());
    }

    /// Frame answers that came from elsewhere into the write buffer as they are, and count
    /// them by their MSA-1; the first one's code, if it has a known one. Each in this
    /// connection's release: a Release 1 peer gets no block, a Release 2 peer a block first.
    pub(super) fn pass_on(
        &mut self,
        acks: &[Bytes],
        silent: bool,
        ledger: &mut Ledger<'_>,
    ) -> Option<AckCode> {
        if silent || acks.is_empty() {
            ledger.unanswered();
            return None;
        }
        let release2 = self.shared.config.release == Release::Two;
        let mut first = None;
        for (i, payload) in acks.iter().enumerate() {
            let block = Block::of(payload);
            if !release2 && block.is_some() {
                // A Release 1 peer never reads a block: the HL7 answer after it, if any, is
                // what it is told.
                continue;
            }
            let code = hl7::ack_reply(payload).and_then(|(code, _)| AckCode::parse(code));
            if release2 && i == 0 && block.is_none() {
                // Release 2: the first answer is the frame's block, commit only for a positive
                // code; an application answer after it goes as an ordinary message.
                let kept = code.is_some_and(AckCode::is_positive);
                let block = if kept { Block::Commit } else { Block::Nak };
                self.out.extend_from_slice(block.wire());
                if let Some(code) = code {
                    ledger.ack(code);
                }
                first = code;
                continue;
            }
            if let Err(e) = encode_frame_vec(payload, &mut self.out) {
                // An answer holding a framing byte cannot be passed on intact: say so, send
                // nothing of it.
                ledger.warn(Warning::new(e.code));
                continue;
            }
            if let Some(code) = code {
                ledger.ack(code);
            }
            if i == 0 {
                first = code;
            }
        }
        first
    }

    /// Frame one built ACK into the write buffer and count it.
    fn write_ack(
        &mut self,
        built: BuiltAck,
        disposition: Disposition,
        ledger: &mut Ledger<'_>,
    ) -> Option<AckCode> {
        for code in &built.warnings {
            ledger.warn(Warning::new(*code));
        }
        let framed = encode_frame_vec(&built.payload, &mut self.out);
        self.ack_buf = built.payload;
        if let Err(e) = framed {
            // Cannot happen for a built ACK; if it ever does, say so rather than send it broken.
            ledger.warn(Warning::new(e.code));
            return None;
        }
        Some(self.count(built.code, built.reason, disposition, ledger))
    }

    /// Count an ACK written with `code`, and a negative one's reason.
    fn count(
        &self,
        code: AckCode,
        reason: Option<NackReason>,
        disposition: Disposition,
        ledger: &mut Ledger<'_>,
    ) -> AckCode {
        if !code.is_positive() {
            // Defects always name their reason; otherwise a forced negative code (refused before
            // the commit) or a committed message is negative only because a code was forced.
            let forced = matches!(self.shared.config.ack, AckMode::Forced(c) if !c.is_positive());
            let why = match reason {
                Some(reason) if reason != NackReason::HandlerRejected => NackWhy::Reason(reason),
                _ if forced || disposition == Disposition::Committed => NackWhy::Forced,
                Some(reason) => NackWhy::Reason(reason),
                None => NackWhy::CommitFailed,
            };
            ledger.nack(code, why);
        }
        ledger.ack(code);
        code
    }

    /// Write the pending ACKs to `stream` in one go, bounded by the write timeout; `budget` holds
    /// them meanwhile.
    pub(super) async fn flush<S: AsyncWrite + Unpin>(
        &mut self,
        stream: &mut S,
        budget: &mut Buffered,
        ledger: &mut Ledger<'_>,
        immediate: &mut StopWait<'_>,
    ) -> Option<End> {
        if self.out.is_empty() {
            return None;
        }
        let limit = self.shared.config.write_timeout;
        // Bytes already built: counted while the peer takes them, and reading waits meanwhile.
        budget.set(Part::Unsent, self.out.len());
        let out = &self.out;
        let write = async {
            stream.write_all(out).await?;
            stream.flush().await
        };
        let Some(result) = immediate.guard(tokio::time::timeout(limit, write)).await else {
            return Some(End::cause(Cause::Shutdown));
        };
        let written = self.out.len() as u64;
        self.out.clear();
        budget.set(Part::Unsent, 0);
        match result {
            Ok(Ok(())) => {
                ledger.bytes_out(written);
                None
            }
            Ok(Err(e)) => Some(End::cause(classify_io(&e))),
            // The peer does not take its ACKs.
            Err(_elapsed) => Some(End::cause(Cause::DeadPeer)),
        }
    }
}
