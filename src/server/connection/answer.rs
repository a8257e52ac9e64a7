//! Answering: each message's ACK (and, in enhanced mode, its application ACK) is built into the
//! write buffer, counted, and written out in one go.

use super::{End, InboundLink, Part, Shutdown};
use crate::ack::{self, AckCode, BuiltAck, Disposition, NackReason};
use crate::cause::{classify_io, Cause};
use crate::framing::encode_frame;
use crate::hl7::{self, Scan, Shape};
use crate::server::clock::Utc;
use crate::server::event::{NackWhy, ServerEvent};
use crate::server::sink::Inbound;
use crate::server::AckMode;
use crate::warning::Warning;
use bytes::Bytes;
use std::time::{SystemTime, UNIX_EPOCH};
use tokio::io::{AsyncRead, AsyncWrite, AsyncWriteExt};

impl<S: AsyncRead + AsyncWrite + Unpin + Send> InboundLink<'_, S> {
    /// Set the ACKs' MSH-7 to `now`, formatted only when the second changes.
    pub(super) fn stamp(&mut self, now: SystemTime) {
        let second = now.duration_since(UNIX_EPOCH).map_or(0, |d| d.as_secs());
        if self.stamped != Some(second) {
            self.ack.timestamp = Utc::from_system(now).hl7();
            self.stamped = Some(second);
        }
    }

    /// Build this message's ACK (and, in enhanced mode, its application ACK) into the write
    /// buffer; the first code written, if any. `scan` is the message's header scan.
    pub(super) async fn answer(
        &mut self,
        message: &Inbound,
        scan: &Scan<'_>,
        disposition: Disposition,
        silent: bool,
    ) -> Option<AckCode> {
        let shared = self.shared;
        let forced = match shared.config.ack {
            AckMode::None => {
                self.tally.unanswered += 1;
                return None;
            }
            AckMode::Auto => None,
            AckMode::Forced(code) => Some(code),
        };
        if silent {
            self.tally.unanswered += 1;
            return None;
        }
        shared.next_ack_control_id(&mut self.ack.control_id);
        self.ack.forced = forced;
        let ctx = &self.ack;
        let batch = shared.config.batch_ack && message.shape == Shape::Batch;
        let built = if batch {
            ack::build_batch_ack(&message.payload, disposition, message.damaged, ctx).map(|b| {
                BuiltAck {
                    payload: b.payload,
                    code: b.code,
                    reason: b.reason,
                    warnings: b.warnings,
                }
            })
        } else {
            ack::answer(
                scan,
                disposition,
                message.damaged,
                ctx,
                std::mem::take(&mut self.ack_buf),
                Some(&mut self.template),
            )
        };
        let Some(built) = built else {
            // An inbound ACK: committed like any message, never answered.
            self.tally.inbound_acks += 1;
            return None;
        };
        let code = self.write_ack(built, disposition)?;
        // Enhanced mode: the application ACK follows the accept ACK, same MSA-2.
        if code.is_commit_level() && !batch {
            shared.next_ack_control_id(&mut self.ack.control_id);
            if let Some(app) = ack::application_answer(
                scan,
                disposition,
                message.damaged,
                &self.ack,
                std::mem::take(&mut self.ack_buf),
            ) {
                self.write_ack(app, disposition);
            }
        }
        Some(code)
    }

    /// Frame answers that came from elsewhere into the write buffer as they are, and count
    /// them by their MSA-1; the first one's code, if it has a known one.
    pub(super) fn pass_on(&mut self, acks: &[Bytes], silent: bool) -> Option<AckCode> {
        if silent || acks.is_empty() {
            self.tally.unanswered += 1;
            return None;
        }
        let mut first = None;
        for (i, payload) in acks.iter().enumerate() {
            if let Err(e) = encode_frame(payload, &mut self.out) {
                // An answer holding a framing byte cannot be passed on intact: say so, send
                // nothing of it.
                self.warn(Warning::new(e.code));
                continue;
            }
            let code = hl7::ack_reply(payload).and_then(|(code, _)| AckCode::parse(code));
            if let Some(code) = code {
                self.acks.count(code);
            }
            if i == 0 {
                first = code;
            }
        }
        first
    }

    /// Frame one built ACK into the write buffer and count it.
    fn write_ack(&mut self, built: BuiltAck, disposition: Disposition) -> Option<AckCode> {
        for code in &built.warnings {
            self.warn(Warning::new(*code));
        }
        let framed = encode_frame(&built.payload, &mut self.out);
        self.ack_buf = built.payload;
        if let Err(e) = framed {
            // Cannot happen for a built ACK; if it ever does, say so rather than send it broken.
            self.warn(Warning::new(e.code));
            return None;
        }
        if !built.code.is_positive() {
            // Defects always name their reason; otherwise a forced negative code (refused before
            // the commit) or a committed message is negative only because a code was forced.
            let forced = matches!(self.shared.config.ack, AckMode::Forced(c) if !c.is_positive());
            let why = match built.reason {
                Some(reason) if reason != NackReason::HandlerRejected => NackWhy::Reason(reason),
                _ if forced || disposition == Disposition::Committed => NackWhy::Forced,
                Some(reason) => NackWhy::Reason(reason),
                None => NackWhy::CommitFailed,
            };
            self.tally.nack(why.as_str());
            self.note(ServerEvent::Nack {
                connection: self.id,
                ack_code: built.code,
                why,
            });
        }
        self.acks.count(built.code);
        Some(built.code)
    }

    /// Write the pending ACKs in one go, bounded by the write timeout.
    pub(super) async fn flush(&mut self, shutdown: &Shutdown) -> Option<End> {
        if self.out.is_empty() {
            return None;
        }
        let limit = self.shared.config.write_timeout;
        // Bytes already built: counted while the peer takes them, and reading waits meanwhile.
        self.buffered.set(Part::Unsent, self.out.len());
        let write = async {
            self.stream.write_all(&self.out).await?;
            self.stream.flush().await
        };
        let result = tokio::select! {
            biased;
            _ = shutdown.immediate.cancelled() => return Some(End::cause(Cause::Shutdown)),
            result = tokio::time::timeout(limit, write) => result,
        };
        let written = self.out.len() as u64;
        self.out.clear();
        self.buffered.set(Part::Unsent, 0);
        match result {
            Ok(Ok(())) => {
                self.tally.bytes_out += written;
                None
            }
            Ok(Err(e)) => Some(End::cause(classify_io(&e))),
            // The peer does not take its ACKs.
            Err(_) => Some(End::cause(Cause::DeadPeer)),
        }
    }
}
