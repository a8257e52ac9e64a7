//! The collector: settles each message's one fate, keeps the count, and hands outcomes and
//! notes out in order. A stop ends sending and drains (the rest of a finite input is reported
//! never-delivered, `interrupted`); a destroy settles everything at once. The deadline ends the
//! run at once when it passes: what was not written is
//! never delivered, what was written and not answered is of unknown fate, both `run-timeout`.

use super::event::{Item, MessageOutcome, RunEvent, RunNote};
use super::failed::{file_name, FailedOut};
use super::feed::Input;
use super::produce::{produce, Halt};
use super::totals::{Ending, RunSummary, Totals};
use super::{RunControls, RunOptions};
use crate::cause::Cause;
use crate::client::{Client, ClientEvent, Fate, FateCause, Population, Reason, State};
use crate::input::InputError;
use crate::pace::Schedule;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::{mpsc, watch};
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

/// What the producer and the per-send waiters tell the collector.
pub(super) enum Note {
    Read,
    Settled(Item, Fate),
    InputEnd(Option<InputError>),
}

/// Whether the client is gone for good (it gave up, or was closed).
pub(super) fn client_closed(client: &Client) -> bool {
    matches!(client.state(), State::Closed | State::Disconnected)
}

/// Where the run's events go; a reader that went away makes every send a no-op.
#[derive(Clone)]
pub(super) struct Out(pub mpsc::Sender<RunEvent>);

impl Out {
    async fn emit(&self, event: RunEvent) {
        let _ = self.0.send(event).await;
    }

    async fn note(&self, note: RunNote) {
        self.emit(RunEvent::Note(note)).await;
    }
}

/// The whole run: returns once every message read has its fate and the client is closed.
pub(super) async fn collect(
    client: Arc<Client>,
    input: Input,
    options: RunOptions,
    controls: RunControls,
    out: Out,
) -> RunSummary {
    let started = Instant::now();
    // Past the deadline nothing more is sent.
    let expired = CancellationToken::new();
    // Interrupted: the rest of a finite input is reported, never sent.
    let interrupted = CancellationToken::new();
    // Woken now and then before the deadline to see whether the rest still fits before it.
    let timer = tokio::time::sleep_until(started);
    tokio::pin!(timer);
    let (gave_up_tx, gave_up) = watch::channel(None::<Cause>);
    let (failure_tx, last_failure) = watch::channel(None::<Cause>);
    let mut events = tokio::spawn(watch_events(
        client.subscribe(),
        out.clone(),
        gave_up_tx,
        failure_tx,
    ));
    let stop = CancellationToken::new();
    let (notes_tx, mut notes) = mpsc::unbounded_channel();
    let producer = tokio::spawn(produce(
        client.clone(),
        options
            .rate
            .and_then(|rate| Schedule::new(rate, 1, 0, Duration::ZERO)),
        input.into_parts(),
        notes_tx,
        Halt {
            stop: stop.clone(),
            expired: expired.clone(),
            interrupted: interrupted.clone(),
        },
        gave_up.clone(),
    ));
    let closing = |client: &Arc<Client>, destroy: bool| {
        let client = client.clone();
        tokio::spawn(async move {
            if destroy {
                client.destroy().await
            } else {
                client.close().await
            }
        });
    };

    let mut totals = Totals::default();
    let mut ending = Ending::default();
    let mut input_done = false;
    let (mut stopped, mut destroyed, mut draining) = (false, false, false);
    while !(input_done && totals.adds_up()) {
        // Nobody takes the results any more: read no more messages, drain, end quietly.
        if controls.abandon.is_cancelled() && !stop.is_cancelled() {
            ending.abandoned = !input_done;
            stop.cancel();
            closing(&client, false);
        }
        let note = tokio::select! {
            note = notes.recv() => note,
            () = &mut timer, if options.deadline.is_some() && !ending.timed_out => {
                let deadline = options.deadline.unwrap_or(started);
                let stop_at = deadline
                    .checked_sub(reserve(&options, &totals))
                    .unwrap_or(started);
                let now = Instant::now();
                if now < stop_at {
                    timer.as_mut().reset(stop_at.min(now + DEADLINE_CHECK));
                    continue;
                }
                ending.timed_out = true;
                out.note(RunNote::TimedOut).await;
                // Expired first: the producer reads it when it sees the stop.
                expired.cancel();
                stop.cancel();
                closing(&client, true);
                continue;
            }
            // Only application ACKs left to wait for: close, so the drain timeout bounds them.
            // (An async block: no timer is made on the turns this branch is off.)
            () = async { tokio::time::sleep(APP_ACK_CHECK).await }, if input_done && !draining => {
                if only_app_acks_left(&totals, &client) {
                    draining = true;
                    closing(&client, false);
                }
                continue;
            }
            () = controls.stop.cancelled(), if !stopped && !destroyed => {
                stopped = true;
                ending.interrupted = true;
                interrupted.cancel();
                stop.cancel();
                out.note(RunNote::Interrupted).await;
                closing(&client, false);
                continue;
            }
            () = controls.destroy.cancelled(), if !destroyed => {
                destroyed = true;
                ending.interrupted = true;
                interrupted.cancel();
                stop.cancel();
                closing(&client, true);
                continue;
            }
            () = controls.abandon.cancelled(), if !stop.is_cancelled() => continue,
        };
        match note {
            None => break, // producer and every waiter are gone: nothing more can settle
            Some(Note::Read) => totals.read += 1,
            Some(Note::InputEnd(error)) => {
                input_done = true;
                if let Some(error) = error {
                    ending.input_failed = true;
                    out.note(RunNote::InputError(error)).await;
                }
            }
            Some(Note::Settled(item, fate)) => {
                let last_failure = *last_failure.borrow();
                let cause = final_cause(&fate, *gave_up.borrow(), &ending, last_failure);
                totals.record(&fate);
                totals.resent += u64::from(item.rewrites());
                let kept = match &options.failed_out {
                    Some(dir) if fate.population() != Population::Accepted => {
                        keep(dir, &item).err()
                    }
                    _ => None,
                };
                out.emit(RunEvent::Outcome(MessageOutcome { item, fate, cause }))
                    .await;
                if let Some(note) = kept {
                    out.note(note).await;
                }
            }
        }
    }
    stop.cancel();
    let _ = producer.await;
    out.emit(RunEvent::Closing).await;
    let _ = tokio::time::timeout(Duration::from_secs(5), client.close()).await;
    let stats = client.stats();
    totals.reconnects = stats.reconnect_attempts;
    drop(client);
    // The client's last events, up to its end.
    if tokio::time::timeout(Duration::from_secs(1), &mut events)
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
        out.note(RunNote::GaveUp(failure)).await;
    }
    RunSummary {
        totals,
        ending,
        elapsed: started.elapsed(),
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

/// How often, once the input is done, the run checks whether only application ACKs are left.
const APP_ACK_CHECK: Duration = Duration::from_millis(100);

/// Every message not yet settled is committed (`CA`) and waits for its application ACK: nothing
/// a reconnect could still deliver, so the run may close and let the drain bound the wait.
fn only_app_acks_left(totals: &Totals, client: &Client) -> bool {
    let open = totals.read.saturating_sub(totals.settled());
    open > 0 && open == client.stats().awaiting_app_ack as u64
}

/// The cause a message's outcome shows when the run, not the link, ended it: the cause the
/// client gave up on, `run-timeout` past the deadline, or after a stop the link's last failure,
/// else `interrupted`. `None` keeps the fate's own cause.
fn final_cause(
    fate: &Fate,
    gave_up: Option<Cause>,
    ending: &Ending,
    last_failure: Option<Cause>,
) -> Option<Cause> {
    let ended_by_us = |cause: &FateCause| {
        matches!(
            cause,
            FateCause::Closed | FateCause::Destroyed | FateCause::Cancelled
        )
    };
    match fate {
        Fate::NeverDelivered { cause } | Fate::UnknownFate { cause, .. }
            if ending.timed_out && ended_by_us(cause) =>
        {
            Some(Cause::RunTimeout)
        }
        Fate::NeverDelivered { cause } if ended_by_us(cause) => gave_up
            .or(last_failure)
            .or(ending.interrupted.then_some(Cause::Interrupted)),
        _ => None,
    }
}

/// The client's events, handed out; and the cause it gave up on, and its last failure (cleared
/// by a connect), kept for the outcomes.
async fn watch_events(
    mut events: tokio::sync::broadcast::Receiver<ClientEvent>,
    out: Out,
    gave_up: watch::Sender<Option<Cause>>,
    last_failure: watch::Sender<Option<Cause>>,
) {
    use tokio::sync::broadcast::error::RecvError;
    loop {
        match events.recv().await {
            Ok(event) => {
                match &event {
                    ClientEvent::StateChange(t) => {
                        if let Reason::GaveUp(cause) = t.reason {
                            gave_up.send_replace(Some(cause));
                        }
                        if t.to == State::Connected {
                            last_failure.send_replace(None);
                        }
                    }
                    ClientEvent::Error { cause, .. } => {
                        last_failure.send_replace(Some(*cause));
                    }
                    _ => {}
                }
                out.emit(RunEvent::Client(event)).await;
            }
            Err(RecvError::Lagged(_)) => continue,
            Err(RecvError::Closed) => return,
        }
    }
}
