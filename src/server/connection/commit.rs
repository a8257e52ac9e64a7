//! A batch of frames on its way to the sink: an inbound that cannot be acknowledged truthfully is
//! refused before any sink sees it, the policy decides the others, and the sink commits those it
//! lets through. Each message then comes out with its result, in arrival order, for its answer.

use super::Ledger;
use crate::ack::{self, AckCode, Disposition};
use crate::framing::Frame;
use crate::hl7::{self, Scan};
use crate::server::policy::{Action, Decision};
use crate::server::sink::{pad_results, Inbound, Reply, SinkFuture, SinkResult};
use crate::server::{AckMode, ServerConfig, Shared};
use crate::warning::WarningCode;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::SystemTime;

/// What a complete frame costs besides its payload while it waits for its commit and answer
/// (its message, header scan and decision), counted in the budget so tiny frames are not free.
const FRAME_OVERHEAD: usize = 512;

/// What `frames` hold of the budget besides their bytes while they wait for their commit and
/// answers.
pub(super) fn overhead(frames: &[Frame]) -> usize {
    frames.len() * FRAME_OVERHEAD
}

/// The messages of one batch, each with its header scan, the policy's decision, and its refusal
/// when it must not be kept.
pub(super) struct Batch<'f> {
    /// A slice of their own: the sink takes them together.
    messages: Vec<Inbound>,
    /// What is known of each message, in the same order.
    items: Vec<Item<'f>>,
    /// A decision ends the connection after its message: later frames are neither committed
    /// nor answered.
    close_after: bool,
}

/// What is known of one message of a batch besides the message itself.
pub(super) struct Item<'f> {
    // Each header is scanned once: for the `Inbound` and again for its ACK.
    scan: Scan<'f>,
    decision: Decision,
    /// What the message is answered instead of a commit, when it must not be kept.
    refusal: Option<Disposition>,
    /// Past the size limit: only its head arrived, it is never kept.
    oversized: bool,
}

/// One message of a batch, as it is answered.
pub(super) struct Entry<'b, 'f> {
    pub(super) message: &'b Inbound,
    pub(super) scan: &'b Scan<'f>,
    pub(super) decision: &'b Decision,
    /// Answered without reaching the sink, with this disposition.
    pub(super) refused: Option<Disposition>,
    /// Past the size limit: answered with a phrase saying so.
    pub(super) too_large: bool,
}

impl<'f> Batch<'f> {
    /// Turn `frames` into messages: warnings counted, headers scanned, the policy asked, and
    /// each message refused that cannot be acknowledged truthfully. Stops after a decision that
    /// ends the connection.
    pub(super) fn admit(frames: &'f [Frame], shared: &Shared, ledger: &mut Ledger<'_>) -> Self {
        let mut batch = Batch {
            messages: Vec::with_capacity(frames.len()),
            items: Vec::with_capacity(frames.len()),
            close_after: false,
        };
        let received_at = SystemTime::now();
        for frame in frames {
            for warning in &frame.warnings {
                ledger.warn(*warning);
            }
            let damaged = frame.is_damaged();
            let scan = hl7::scan(&frame.payload);
            let message = Inbound::scanned(
                ledger.id(),
                shared.next_seq(),
                Arc::clone(ledger.peer()),
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
            let refusal = match too_large {
                true => Some(Disposition::Rejected),
                false => refusal(&shared.config, &message, &scan),
            };
            batch.messages.push(message);
            batch.items.push(Item {
                scan,
                decision,
                refusal,
                oversized: too_large,
            });
            if decision.close_after || decision.reset {
                // Later frames are neither committed nor answered: the connection ends here.
                batch.close_after = true;
                break;
            }
        }
        batch
    }

    /// A decision ends the connection after this batch.
    pub(super) fn close_after(&self) -> bool {
        self.close_after
    }

    /// The last message's decision resets the connection.
    pub(super) fn ends_in_reset(&self) -> bool {
        self.items.last().is_some_and(|item| item.decision.reset)
    }

    /// Hand the messages the policy lets through (and none refused) to the sink, one result per
    /// such message, in order.
    pub(super) fn commit<'a>(&'a self, shared: &'a Shared) -> Committing<'a> {
        Committing::Start {
            shared,
            messages: &self.messages,
            items: &self.items,
        }
    }

    /// The batch committed here and now, without a future: every message goes to the sink and
    /// the sink can commit without waiting (`Sink::commit_now`). `None` otherwise.
    pub(super) fn commit_now(&self, shared: &Shared) -> Option<Results> {
        if !self.items.iter().all(chosen) {
            return None;
        }
        let result = shared.sink.commit_now(&self.messages)?;
        Some(match result == SinkResult::committed() {
            true => Results::Committed,
            false => Results::Every(result),
        })
    }

    /// Whether the batch may be committed while earlier ones still are: every message goes to
    /// the sink and is answered as soon as it is committed, and none ends the connection.
    pub(super) fn may_overlap(&self) -> bool {
        !self.close_after
            && self.items.iter().all(|item| {
                chosen(item)
                    && item.decision.ack_delay.is_none()
                    && !item.decision.silent
                    && !item.decision.reset
            })
    }

    /// The messages and their decisions, in arrival order, for a commit that outlives the
    /// frames (the header scans are made again from each message for its answer).
    pub(super) fn into_parts(self) -> (Vec<Inbound>, Vec<Decision>) {
        let decisions = self.items.iter().map(|item| item.decision).collect();
        (self.messages, decisions)
    }

    /// The messages in arrival order.
    pub(super) fn entries(&self) -> impl Iterator<Item = Entry<'_, 'f>> {
        self.messages
            .iter()
            .zip(&self.items)
            .map(|(message, item)| Entry {
                message,
                scan: &item.scan,
                decision: &item.decision,
                refused: item.refusal,
                too_large: item.oversized,
            })
    }
}

impl Entry<'_, '_> {
    /// The message went to the sink.
    pub(super) fn committing(&self) -> bool {
        self.refused.is_none() && self.decision.action == Action::Commit
    }

    /// What became of the message, and whether it was a duplicate: its refusal, the policy's
    /// verdict, or (when it went to the sink) the next of the sink's `results`.
    pub(super) fn result(
        &self,
        results: &mut impl Iterator<Item = SinkResult>,
    ) -> (SinkResult, bool) {
        match (self.refused, self.decision.action) {
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
        }
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
    let defect = ack::refusal(
        &message.payload,
        scan,
        message.is_ack,
        message.damaged,
        config.batch_ack,
    );
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

/// The sink's results for the messages that went to it, in order.
pub(super) enum Results {
    /// One each.
    Each(std::vec::IntoIter<SinkResult>),
    /// Every one committed: the batch was written as one piece.
    Committed,
    /// The same for every one: the batch failed as one piece.
    Every(SinkResult),
}

impl From<Vec<SinkResult>> for Results {
    fn from(results: Vec<SinkResult>) -> Results {
        Results::Each(results.into_iter())
    }
}

impl Iterator for Results {
    type Item = SinkResult;

    fn next(&mut self) -> Option<SinkResult> {
        match self {
            Results::Each(each) => each.next(),
            // Made for each message rather than cloned: nothing in it to copy.
            Results::Committed => Some(SinkResult::committed()),
            Results::Every(result) => Some(result.clone()),
        }
    }
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

/// A batch's commit. The sink is asked only when it is first polled, as an `async fn` would;
/// when every message goes to it, its own future is awaited as it is, so a connection's batch
/// future holds little more than the sink's box.
pub(super) enum Committing<'a> {
    Start {
        shared: &'a Shared,
        messages: &'a [Inbound],
        items: &'a [Item<'a>],
    },
    /// The whole batch, at the sink: `len` results are due.
    All {
        sink: SinkFuture<'a, Vec<SinkResult>>,
        len: usize,
    },
    /// Only some of the messages go to the sink.
    Chosen(SinkFuture<'a, Vec<SinkResult>>),
}

impl Future for Committing<'_> {
    type Output = Vec<SinkResult>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Vec<SinkResult>> {
        let this = self.get_mut();
        if let Committing::Start {
            shared,
            messages,
            items,
        } = *this
        {
            *this = match items.iter().all(chosen) {
                true => Committing::All {
                    sink: shared.sink.commit_batch(messages),
                    len: messages.len(),
                },
                false => Committing::Chosen(Box::pin(commit_chosen(shared, messages, items))),
            };
        }
        match this {
            Committing::All { sink, len } => sink.as_mut().poll(cx).map(|r| pad_results(r, *len)),
            Committing::Chosen(commit) => commit.as_mut().poll(cx),
            Committing::Start { .. } => unreachable!("started above"),
        }
    }
}

/// The message goes to the sink: the policy commits it and nothing refused it.
fn chosen(item: &Item<'_>) -> bool {
    item.decision.action == Action::Commit && item.refusal.is_none()
}

/// Hand the messages the policy lets through (and none refused) to the sink, one result per
/// such message: some of the batch's messages are held back.
async fn commit_chosen(
    shared: &Shared,
    messages: &[Inbound],
    items: &[Item<'_>],
) -> Vec<SinkResult> {
    let sink = &shared.sink;
    let chosen: Vec<Inbound> = messages
        .iter()
        .zip(items)
        .filter(|(_, item)| chosen(item))
        .map(|(m, _)| m.clone())
        .collect();
    if chosen.is_empty() {
        return Vec::new();
    }
    let results = sink.commit_batch(&chosen).await;
    pad_results(results, chosen.len())
}
