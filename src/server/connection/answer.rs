//! Answering: each message's ACK (and, in enhanced mode, its application ACK) is built into the
//! write buffer, counted, and written out in one go.

use super::{Connection, End, Shutdown};
use crate::ack::{self, AckCode, AckContext, BuiltAck, Disposition, NackReason};
use crate::cause::{classify_io, Cause};
use crate::framing::encode_frame;
use crate::hl7::Shape;
use crate::server::event::{NackWhy, ServerEvent};
use crate::server::sink::Inbound;
use crate::server::AckMode;
use crate::warning::Warning;
use tokio::io::{AsyncRead, AsyncWrite, AsyncWriteExt};

impl<S: AsyncRead + AsyncWrite + Unpin + Send> Connection<'_, S> {
    /// Build this message's ACK (and, in enhanced mode, its application ACK) into the write
    /// buffer; the first code written, if any.
    pub(super) async fn answer(
        &mut self,
        message: &Inbound,
        disposition: Disposition,
        silent: bool,
        stamp: &str,
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
        let ctx = AckContext {
            control_id: shared.next_ack_control_id(),
            timestamp: stamp.to_string(),
            text: match disposition {
                Disposition::Committed => None,
                Disposition::CommitFailed => Some("message not committed".into()),
                Disposition::Rejected => Some("message rejected by the receiver".into()),
            },
            forced,
        };
        let batch = shared.config.batch_ack && message.shape == Shape::Batch;
        let built = if batch {
            ack::build_batch_ack(&message.payload, disposition, message.damaged, &ctx).map(|b| {
                BuiltAck {
                    payload: b.payload,
                    code: b.code,
                    reason: b.reason,
                    warnings: b.warnings,
                }
            })
        } else {
            ack::build_ack(&message.payload, disposition, message.damaged, &ctx)
        };
        let Some(built) = built else {
            // An inbound ACK: committed like any message, never answered.
            self.tally.inbound_acks += 1;
            return None;
        };
        let code = self.write_ack(built, disposition).await?;
        // Enhanced mode: the application ACK follows the accept ACK, same MSA-2.
        if code.is_commit_level() && !batch {
            let app_ctx = AckContext {
                control_id: shared.next_ack_control_id(),
                ..ctx
            };
            if let Some(app) =
                ack::build_application_ack(&message.payload, disposition, message.damaged, &app_ctx)
            {
                self.write_ack(app, disposition).await;
            }
        }
        Some(code)
    }

    /// Frame one built ACK into the write buffer and count it.
    async fn write_ack(&mut self, built: BuiltAck, disposition: Disposition) -> Option<AckCode> {
        let shared = self.shared;
        for code in &built.warnings {
            self.warn(Warning::new(*code)).await;
        }
        if let Err(e) = encode_frame(&built.payload, &mut self.out) {
            // Cannot happen for a built ACK; if it ever does, say so rather than send it broken.
            self.warn(Warning::new(e.code)).await;
            return None;
        }
        if !built.code.is_positive() {
            // Defects always name their reason; a committed message without one (or with
            // handler-rejected) is negative only because a code was forced.
            let why = match (built.reason, disposition) {
                (None | Some(NackReason::HandlerRejected), Disposition::Committed) => {
                    NackWhy::Forced
                }
                (Some(reason), _) => NackWhy::Reason(reason),
                (None, _) => NackWhy::CommitFailed,
            };
            self.tally.nack(why.as_str());
            shared
                .events
                .emit(ServerEvent::Nack {
                    connection: self.id,
                    ack_code: built.code,
                    why,
                })
                .await;
        }
        self.tally.ack(built.code);
        Some(built.code)
    }

    /// Write the pending ACKs in one go, bounded by the write timeout.
    pub(super) async fn flush(&mut self, shutdown: &Shutdown) -> Option<End> {
        if self.out.is_empty() {
            return None;
        }
        let limit = self.shared.config.write_timeout;
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
