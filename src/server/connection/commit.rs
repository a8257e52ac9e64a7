//! Committing a batch of frames: an inbound that cannot be acknowledged truthfully is refused
//! before any sink sees it, the policy decides the others, the sink commits those it lets
//! through (reading ahead meanwhile), and every message is then answered in arrival order.

use super::{End, InboundLink, Shutdown};
use crate::ack::{self, AckCode, Disposition};
use crate::cause::Cause;
use crate::framing::Frame;
use crate::hl7::{self, Scan};
use crate::server::event::ServerEvent;
use crate::server::policy::{Action, Decision};
use crate::server::sink::{pad_results, Inbound, Reply, SinkResult};
use crate::server::{AckMode, ServerConfig, Shared};
use crate::warning::WarningCode;
use std::sync::Arc;
use std::time::{Instant, SystemTime};
use tokio::io::{AsyncRead, AsyncWrite};

/// While a commit is in flight the connection keeps reading, up to this much buffered input: the
/// next batch is ready when the commit returns, and a slow sink still pushes back on the peer.
const READ_AHEAD: usize = 256 * 1024;
/// MSA-3 of the answer to a frame past the size limit; never payload content.
const TOO_LARGE: &str = "Frame too large: bytes past the size limit were discarded, nothing kept";

impl<S: AsyncRead + AsyncWrite + Unpin + Send> InboundLink<'_, S> {
    /// Commit `frames` in order, then write their ACKs in the same order. `Some` ends the
    /// connection.
    pub(super) async fn process(&mut self, frames: Vec<Frame>, shutdown: &Shutdown) -> Option<End> {
        let shared = self.shared;
        let mut messages = Vec::with_capacity(frames.len());
        // Each header is scanned once: for the `Inbound` and again for its ACK.
        let mut scans: Vec<Scan<'_>> = Vec::with_capacity(frames.len());
        let mut decisions: Vec<Decision> = Vec::with_capacity(frames.len());
        // What each message is answered instead of a commit, when it must not be kept.
        let mut refusals: Vec<Option<Disposition>> = Vec::with_capacity(frames.len());
        // Frames past the size limit: only their head arrived, they are never kept.
        let mut oversized: Vec<bool> = Vec::with_capacity(frames.len());
        let mut close_after = false;
        let received_at = SystemTime::now();
        for frame in &frames {
            for warning in &frame.warnings {
                self.warn(*warning);
            }
            let damaged = frame.is_damaged();
            let scan = hl7::scan(&frame.payload);
            let message = Inbound::scanned(
                self.id,
                shared.next_seq(),
                Arc::clone(&self.peer),
                frame.payload.clone(),
                damaged,
                &scan,
                received_at,
            );
            let decision = shared.policy.decide(&message);
            let too_large = frame
                .warnings
                .iter()
                .any(|w| w.code == WarningCode::FrameTooLarge);
            refusals.push(match too_large {
                true => Some(Disposition::Rejected),
                false => refusal(&shared.config, &message, &scan),
            });
            oversized.push(too_large);
            messages.push(message);
            scans.push(scan);
            decisions.push(decision);
            if decision.close_after || decision.reset {
                // Later frames are neither committed nor answered: the connection ends here.
                close_after = true;
                break;
            }
        }

        let started = Instant::now();
        let commit = commit(shared, &messages, &decisions, &refusals);
        tokio::pin!(commit);
        let mut reading = !self.eof && !close_after;
        let results = loop {
            let room = reading && self.buf.len() < READ_AHEAD;
            tokio::select! {
                biased;
                _ = shutdown.immediate.cancelled() => return Some(End::cause(Cause::Shutdown)),
                results = &mut commit => break results,
                _ = shutdown.graceful.cancelled(), if room => reading = false,
                more = self.read_ahead(), if room => reading = more,
            }
        };
        let commit_ms = started.elapsed().as_secs_f64() * 1000.0;

        self.stamp(SystemTime::now());
        self.out.clear();
        let mut results = results.into_iter();
        let each = messages.iter().zip(&decisions).zip(&scans).zip(&refusals);
        for ((((message, decision), scan), refused), too_large) in each.zip(&oversized) {
            let committing = refused.is_none() && decision.action == Action::Commit;
            let (result, duplicate) = match (*refused, decision.action) {
                (Some(disposition), _) => (refused_result(disposition), false),
                (None, Action::Commit) => {
                    let result = results
                        .next()
                        .unwrap_or_else(|| SinkResult::failed("the sink returned no result"));
                    let duplicate = result.duplicate;
                    (result, duplicate)
                }
                (None, Action::Duplicate) => (SinkResult::committed(), true),
                (None, Action::Fail) => (SinkResult::failed("refused by policy"), false),
                (None, Action::Reject) => (SinkResult::rejected("refused by policy"), false),
            };
            if let Some(detail) = result.detail {
                self.note(ServerEvent::SinkFailed {
                    connection: self.id,
                    detail,
                });
            }
            if result.disposition == Disposition::Committed {
                shared.policy.committed(message);
            }
            if let Some(delay) = decision.ack_delay {
                self.send_events().await;
                if let Some(end) = self.flush(shutdown).await {
                    return Some(end);
                }
                tokio::select! {
                    _ = shutdown.immediate.cancelled() => return Some(End::cause(Cause::Shutdown)),
                    _ = tokio::time::sleep(delay) => {}
                }
            }
            let silent = decision.silent || decision.reset;
            let (ack_code, close) = match result.reply {
                Reply::Table if *too_large => {
                    self.ack.text = Some(TOO_LARGE.to_string());
                    let code = self.answer(message, scan, result.disposition, silent).await;
                    self.ack.text = None;
                    (code, None)
                }
                Reply::Table => {
                    let code = self.answer(message, scan, result.disposition, silent).await;
                    (code, None)
                }
                Reply::Saying(text) => {
                    self.ack.text = Some(text.to_string());
                    let code = self.answer(message, scan, result.disposition, silent).await;
                    self.ack.text = None;
                    (code, None)
                }
                Reply::Relayed { acks, close } => (self.pass_on(&acks, silent), close),
            };
            let s = &mut self.tally;
            s.messages += 1;
            match result.disposition {
                // Answered negatively without reaching the sink: nothing failed, it was refused.
                _ if refused.is_some() => s.refused += 1,
                Disposition::Committed if duplicate => s.duplicates += 1,
                Disposition::Committed => s.committed += 1,
                Disposition::CommitFailed => s.commit_failed += 1,
                Disposition::Rejected => s.rejected += 1,
            }
            if self.shared.events.per_message() {
                self.note(ServerEvent::Message {
                    connection: self.id,
                    bytes: message.payload.len(),
                    ack_code,
                    duplicate,
                    commit_ms: committing.then_some(commit_ms),
                    control_id: message.control_id_bytes(),
                    message_type: message.message_type_bytes(),
                });
            }
            if let Some(cause) = close {
                // The later messages of this batch are not answered: the peer learns their fate
                // no better than this one's.
                self.send_events().await;
                if let Some(end) = self.flush(shutdown).await {
                    return Some(end);
                }
                return Some(End::cause(cause));
            }
        }
        self.send_events().await;
        if let Some(end) = self.flush(shutdown).await {
            return Some(end);
        }
        if decisions.last().is_some_and(|d| d.reset) {
            return Some(End {
                abort: true,
                ..End::cause(Cause::ConnectionReset)
            });
        }
        close_after.then_some(End::cause(Cause::Shutdown))
    }
}

/// Whether `message` must be answered without being kept, and how: it cannot be acknowledged
/// truthfully (no MSH, an empty MSH-10, a batch or concatenated frame, a damaged frame), or a
/// negative code is forced. Under `--ack none` nothing is answered, so everything is kept.
fn refusal(config: &ServerConfig, message: &Inbound, scan: &Scan<'_>) -> Option<Disposition> {
    let forced = match config.ack {
        AckMode::None => return None,
        AckMode::Auto => None,
        AckMode::Forced(code) => Some(code),
    };
    let defect = ack::refusal(&message.payload, scan, message.damaged, config.batch_ack);
    defect.or_else(|| match forced {
        Some(code) if !code.is_positive() && !message.is_ack => {
            Some(match code.application_level() {
                AckCode::AR => Disposition::Rejected,
                _ => Disposition::CommitFailed,
            })
        }
        _ => None,
    })
}

/// The result of a message refused before the commit: nothing kept, and no sink detail.
fn refused_result(disposition: Disposition) -> SinkResult {
    SinkResult {
        disposition,
        detail: None,
        duplicate: false,
        reply: Reply::Table,
    }
}

/// Hand the messages the policy lets through (and none refused) to the sink, one result per such
/// message.
async fn commit(
    shared: &Shared,
    messages: &[Inbound],
    decisions: &[Decision],
    refusals: &[Option<Disposition>],
) -> Vec<SinkResult> {
    let sink = &shared.sink;
    let chosen =
        |(d, r): (&Decision, &Option<Disposition>)| d.action == Action::Commit && r.is_none();
    if decisions.iter().zip(refusals).all(chosen) {
        let results = sink.commit_batch(messages).await;
        return pad_results(results, messages.len());
    }
    let chosen: Vec<Inbound> = messages
        .iter()
        .zip(decisions.iter().zip(refusals))
        .filter(|(_, dr)| chosen(*dr))
        .map(|(m, _)| m.clone())
        .collect();
    if chosen.is_empty() {
        return Vec::new();
    }
    let results = sink.commit_batch(&chosen).await;
    pad_results(results, chosen.len())
}
