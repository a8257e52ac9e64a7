//! The collector's state: the count, how the run is ending, and the named steps that end it
//! (abandon, stop, destroy, the deadline, the drain once only application ACKs are left), with
//! each outcome counted, its cause decided (`why`) and kept where asked.

use super::super::event::{EventBatch, Item, Out, RunEvent, RunNote, BATCH_EVENTS};
use super::super::failed::{file_name, FailedOut};
use super::super::feed::Input;
use super::super::inbox::{Note, Notes};
use super::super::produce::{produce, ProducerControls};
use super::super::totals::{Codes, Ending, RunSummary, Totals};
use super::super::why;
use super::super::RunOptions;
use crate::cause::Cause;
use crate::client::{Client, Fate, Population};
use crate::pace::Schedule;
use std::future::Future;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::{mpsc, watch};
use tokio::task::JoinHandle;
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

/// How long the run waits for the client's close once every message has its fate. Nothing is
/// left to drain by then, so the close returns at once; the bound only keeps a client that
/// cannot answer (its actor held in a connect attempt, say) from holding up the run's end.
const CLOSE_WAIT: Duration = Duration::from_secs(5);

/// How long the run waits, once the client is closed and dropped, for its last events (the
/// state changes up to its end) to be handed out. The event stream ends when the actor is gone;
/// after a close that ran out of time the actor may still be alive, and the run ends anyway.
const LAST_EVENTS_WAIT: Duration = Duration::from_secs(1);

/// How the run asks the client to end: a drain awaits the ACKs of what was written, a destroy
/// settles everything at once.
#[derive(Clone, Copy)]
enum Closing {
    Drain,
    Destroy,
}

/// The collector's state: the count, how the run is ending, and the steps it took towards its
/// end. Each step (`abandon`, `stopped`, `destroyed`, `deadline_passed`, `app_ack_check`) is a
/// named transition, taken at most once, whose guard is the matching `may_*` or `*s_*` method.
pub(super) struct Collector {
    client: Arc<Client>,
    options: RunOptions,
    out: Out,
    /// Events made and not yet handed out, in order: sent as one batch at the end of a turn,
    /// or once [`BATCH_EVENTS`] are held.
    held: Vec<RunEvent>,
    started: Instant,
    totals: Totals,
    /// The final ACK codes counted, added to `totals` at the end.
    codes: Codes,
    ending: Ending,
    /// The producer said the input is over.
    input_done: bool,
    /// The run was stopped through its controls.
    stopped: bool,
    /// The run was destroyed through its controls.
    destroyed: bool,
    /// Only application ACKs were left, so the client was asked to drain.
    draining: bool,
    /// Ends reading (a stop, an abandon, the deadline).
    stop: CancellationToken,
    /// Past the deadline nothing more is sent.
    expired: CancellationToken,
    /// Interrupted: the rest of a finite input is reported, never sent.
    interrupted: CancellationToken,
    gave_up: watch::Receiver<Option<Cause>>,
    last_failure: watch::Receiver<Option<Cause>>,
}

impl Collector {
    pub(super) fn new(
        client: Arc<Client>,
        options: RunOptions,
        out: Out,
        gave_up: watch::Receiver<Option<Cause>>,
        last_failure: watch::Receiver<Option<Cause>>,
        started: Instant,
    ) -> Collector {
        Collector {
            client,
            options,
            out,
            held: Vec::new(),
            started,
            totals: Totals::default(),
            codes: Codes::default(),
            ending: Ending::default(),
            input_done: false,
            stopped: false,
            destroyed: false,
            draining: false,
            stop: CancellationToken::new(),
            expired: CancellationToken::new(),
            interrupted: CancellationToken::new(),
            gave_up,
            last_failure,
        }
    }

    /// The producer on `input`, its notes to `notes`, stopped (and told why) by this
    /// collector.
    pub(super) fn producer(&self, input: Input, notes: Notes) -> impl Future<Output = ()> {
        let controls = ProducerControls {
            stop: self.stop.clone(),
            expired: self.expired.clone(),
            interrupted: self.interrupted.clone(),
        };
        produce(
            self.client.clone(),
            self.options
                .rate
                .and_then(|rate| Schedule::new(rate, 1, 0, Duration::ZERO)),
            input.into_parts(),
            notes,
            controls,
            self.gave_up.clone(),
        )
    }

    /// No more is read: every message read is settled (or the producer is gone).
    pub(super) fn end_reading(&self) {
        self.stop.cancel();
    }

    /// The input is over and every message read has its one fate.
    pub(super) fn all_settled(&self) -> bool {
        self.input_done && self.totals.adds_up()
    }

    fn close_client(&self, how: Closing) {
        let client = self.client.clone();
        tokio::spawn(async move {
            match how {
                Closing::Drain => client.close().await,
                Closing::Destroy => client.destroy().await,
            }
        });
    }

    /// Guard of [`Collector::abandon`]: nothing has stopped the reading yet.
    pub(super) fn may_abandon(&self) -> bool {
        !self.stop.is_cancelled()
    }

    /// Nobody takes the results any more: read no more messages and drain.
    pub(super) fn abandon(&mut self) {
        if !self.may_abandon() {
            return;
        }
        self.ending.abandoned = !self.input_done;
        self.stop.cancel();
        self.close_client(Closing::Drain);
    }

    /// Guard of the deadline checks: there is a deadline and it has not passed yet.
    pub(super) fn watches_deadline(&self) -> bool {
        self.options.deadline.is_some() && !self.ending.timed_out
    }

    /// When to look again, while the rest still fits before the deadline; `None` once sending
    /// must stop.
    pub(super) fn deadline_check(&self) -> Option<Instant> {
        let deadline = self.options.deadline.unwrap_or(self.started);
        let stop_at = deadline
            .checked_sub(reserve(&self.options, &self.totals))
            .unwrap_or(self.started);
        let now = Instant::now();
        (now < stop_at).then(|| stop_at.min(now + DEADLINE_CHECK))
    }

    /// The deadline (less the room to report the rest) passed: nothing more is sent, and the
    /// client settles everything at once.
    pub(super) async fn deadline_passed(&mut self) {
        self.ending.timed_out = true;
        self.note(RunNote::TimedOut).await;
        // Expired first: the producer reads it when it sees the stop.
        self.expired.cancel();
        self.stop.cancel();
        self.close_client(Closing::Destroy);
    }

    /// Guard of [`Collector::app_ack_check`]: the input is over and no drain was asked yet.
    pub(super) fn checks_app_acks(&self) -> bool {
        self.input_done && !self.draining
    }

    /// Drain once every message left is committed and waits only for its application ACK.
    pub(super) fn app_ack_check(&mut self) {
        if only_app_acks_left(&self.totals, &self.client) {
            self.draining = true;
            self.close_client(Closing::Drain);
        }
    }

    /// Guard of [`Collector::stopped`].
    pub(super) fn may_stop(&self) -> bool {
        !self.stopped && !self.destroyed
    }

    /// Stopped through the controls: no more is sent, written messages drain.
    pub(super) async fn stopped(&mut self) {
        self.stopped = true;
        self.ending.interrupted = true;
        self.interrupted.cancel();
        self.stop.cancel();
        self.note(RunNote::Interrupted).await;
        self.close_client(Closing::Drain);
    }

    /// Guard of [`Collector::destroyed`].
    pub(super) fn may_destroy(&self) -> bool {
        !self.destroyed
    }

    /// Destroyed through the controls: everything settles at once.
    pub(super) fn destroyed(&mut self) {
        self.destroyed = true;
        self.ending.interrupted = true;
        self.interrupted.cancel();
        self.stop.cancel();
        self.close_client(Closing::Destroy);
    }

    /// The producer's count of messages read so far.
    pub(super) fn counted_read(&mut self, read: u64) {
        self.totals.read = read;
    }

    /// Whether the events held go out before `note`'s are added: together they would pass a
    /// batch.
    pub(super) fn full_for(&self, note: &Note) -> bool {
        match note {
            Note::Settled(events) => {
                !self.held.is_empty() && self.held.len() + events.len() > BATCH_EVENTS
            }
            _ => false,
        }
    }

    /// One note from the producer, taken without waiting: its events are held for
    /// [`Collector::flush`]. `read`: the producer's count of messages read, which counts every
    /// message this note settles.
    pub(super) fn take_note(&mut self, note: Note, read: u64) {
        self.counted_read(read);
        match note {
            Note::InputEnd(error) => {
                self.input_done = true;
                if let Some(error) = error {
                    self.ending.input_failed = true;
                    self.held.push(RunEvent::Note(RunNote::InputError(error)));
                }
            }
            Note::One(mut event) => {
                let kept = self.settled(&mut event);
                if self.held.is_empty() {
                    // Alone (each one at window 1): straight into the channel when it has room.
                    if let Err(mpsc::error::TrySendError::Full(EventBatch::One(event))) =
                        self.out.0.try_send(EventBatch::One(event))
                    {
                        self.held.push(event);
                    }
                } else {
                    self.held.push(event);
                }
                self.held.extend(kept.map(RunEvent::Note));
            }
            Note::Settled(mut events) if self.options.failed_out.is_some() => {
                // A note of a failure to keep one goes right after its outcome.
                for mut event in events.drain(..) {
                    let kept = self.settled(&mut event);
                    self.held.push(event);
                    self.held.extend(kept.map(RunEvent::Note));
                }
            }
            Note::Settled(mut events) => {
                for event in &mut events {
                    // Nothing is kept without a failed-messages directory: no note comes.
                    let _ = self.settled(event);
                }
                // The note's Vec is the batch: its outcomes are not moved again.
                if self.held.is_empty() {
                    self.held = events;
                } else {
                    self.held.append(&mut events);
                }
            }
        }
    }

    /// Whether a whole batch of events is held: it goes out before any more is taken.
    pub(super) fn holds_a_batch(&self) -> bool {
        self.held.len() >= BATCH_EVENTS
    }

    /// Hand out the events held, in order, as one batch (waiting for room in the channel).
    pub(super) async fn flush(&mut self) {
        let batch = match self.held.len() {
            0 => return,
            // One event (each one at window 1): the buffer is kept, nothing allocated for it.
            1 => match self.held.pop() {
                Some(event) => EventBatch::One(event),
                None => return,
            },
            // The next batch is most often a note's Vec, taken as it is: none is made here.
            _ => EventBatch::Many(std::mem::take(&mut self.held)),
        };
        self.out.send(batch).await;
    }

    /// A note about the run, after the events held.
    async fn note(&mut self, note: RunNote) {
        self.held.push(RunEvent::Note(note));
        self.flush().await;
    }

    /// One message's fate, in its outcome: counted, its cause decided, kept in the
    /// failed-messages directory when it did not end accepted; the note of a failure to keep
    /// it.
    fn settled(&mut self, event: &mut RunEvent) -> Option<RunNote> {
        let RunEvent::Outcome(outcome) = event else {
            return None;
        };
        outcome.cause = match outcome.fate {
            // Its own fate stands: the run's state is not looked at.
            Fate::Accepted { .. } => None,
            _ => {
                let ending = Ending {
                    gave_up: *self.gave_up.borrow(),
                    last_failure: *self.last_failure.borrow(),
                    ..self.ending
                };
                why::cause(Some(&outcome.fate), &ending)
            }
        };
        self.totals.record_with(&outcome.fate, &mut self.codes);
        self.totals.resent += u64::from(outcome.item.rewrites());
        match &self.options.failed_out {
            Some(dir) if outcome.fate.population() != Population::Accepted => {
                keep(dir, &outcome.item).err()
            }
            _ => None,
        }
    }

    /// Every message has its fate: close the client, hand out its last events and the note of
    /// why it gave up, and sum the run up.
    pub(super) async fn finish(mut self, mut events: JoinHandle<()>) -> RunSummary {
        self.held.push(RunEvent::Closing);
        self.flush().await;
        let Collector {
            client,
            out,
            started,
            mut totals,
            codes,
            mut ending,
            gave_up,
            last_failure,
            ..
        } = self;
        let _ = tokio::time::timeout(CLOSE_WAIT, client.close()).await;
        codes.fold_into(&mut totals);
        let stats = client.stats();
        totals.reconnects = stats.reconnect_attempts;
        drop(client);
        if tokio::time::timeout(LAST_EVENTS_WAIT, &mut events)
            .await
            .is_err()
        {
            events.abort();
        }
        ending.gave_up = *gave_up.borrow();
        ending.last_failure = *last_failure.borrow();
        // What went wrong, in the words of the failure that made the client give up.
        if let Some(failure) = stats
            .last_failure
            .filter(|f| ending.gave_up == Some(f.cause))
        {
            out.send(EventBatch::One(RunEvent::Note(RunNote::GaveUp(failure))))
                .await;
        }
        RunSummary {
            totals,
            ending,
            elapsed: started.elapsed(),
        }
    }
}

/// Write a message that did not end accepted to the failed-messages directory.
fn keep(dir: &FailedOut, item: &Item) -> Result<(), RunNote> {
    let label = item.label();
    match dir.write(item.seq, &label, &item.payload) {
        Ok(_) => Ok(()),
        Err(error) => Err(RunNote::FailedOutWrite {
            file: file_name(item.seq, &label),
            error,
        }),
    }
}

/// How often, before the deadline, the run checks whether the rest still fits before it.
const DEADLINE_CHECK: Duration = Duration::from_millis(100);

/// Room kept before the deadline for closing the link and the summary, and per message left
/// for its outcome, whatever else it needs.
const CLOSING: Duration = Duration::from_millis(150);
const PER_OUTCOME: Duration = Duration::from_micros(10);

/// How long before the deadline sending must stop so that every message not yet settled is
/// reported, and written to the failed-messages directory, by then.
fn reserve(options: &RunOptions, totals: &Totals) -> Duration {
    let left = options
        .messages
        .map_or(0, |all| all.saturating_sub(totals.settled()));
    let per = PER_OUTCOME
        + options
            .failed_out
            .as_ref()
            .map_or(Duration::ZERO, FailedOut::cost_per_file);
    CLOSING + per.saturating_mul(left.min(u64::from(u32::MAX)) as u32)
}

/// Every message not yet settled is committed (`CA`) and waits for its application ACK: nothing
/// a reconnect could still deliver, so the run may close and let the drain bound the wait.
fn only_app_acks_left(totals: &Totals, client: &Client) -> bool {
    let open = totals.read.saturating_sub(totals.settled());
    open > 0 && open == client.stats().awaiting_app_ack as u64
}
