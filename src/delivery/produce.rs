//! The producer: hands messages to the client in input order, a batch at a time, waiting on
//! backpressure and the rate, never dropping; and, while it waits (in `order`), reports each
//! fate in the order the messages were taken.

mod order;

use super::collect::{client_closed, Note, Notes};
use super::event::Item;
use super::feed::Feed;
use crate::cause::Cause;
use crate::client::{CallerStop, Client, Fate, FateCause};
use crate::input::{InputError, Message};
use crate::pace::{Pacer, Schedule};
use order::Order;
use std::pin::pin;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::watch;
use tokio_util::sync::CancellationToken;

/// Behind the rate by more than this (a stall, an outage), pacing starts afresh rather than
/// bursting to catch up.
const STALL: Duration = Duration::from_secs(1);

/// Messages taken from the input and handed to the client in one call, at most: one admission,
/// one command to the link for all of them. The stop is looked at
/// before each batch, so at least every this many messages.
const BATCH: usize = 64;

/// How the collector stops the producer: `stop` ends reading (a stop, an abandon, the
/// deadline); `expired` or `interrupted`, cancelled first, says why (the deadline passed, or the
/// run was interrupted), so a finite input is still read to its end and each message reported
/// never-delivered with that cause instead of left uncounted. An abandon sets neither: nobody
/// takes the results, so nothing more is read.
pub(super) struct ProducerControls {
    pub stop: CancellationToken,
    pub expired: CancellationToken,
    pub interrupted: CancellationToken,
}

impl ProducerControls {
    /// The cause the rest of a finite input ends with, once the stop came; `None` reads no more.
    fn unsent_cause(&self) -> Option<Cause> {
        if self.expired.is_cancelled() {
            Some(Cause::RunTimeout)
        } else if self.interrupted.is_cancelled() {
            Some(Cause::Interrupted)
        } else {
            None
        }
    }
}

/// Hand messages to the client in input order. Ends when the input is done. (The client writes
/// again what a reconnect left unanswered, in order; nothing is handed over twice.)
pub(super) async fn produce(
    client: Arc<Client>,
    pace: Option<Schedule>,
    (mut input, endless): (Feed, bool),
    notes: Notes,
    controls: ProducerControls,
    mut gave_up: watch::Receiver<Option<Cause>>,
) {
    let stop = controls.stop.clone();
    // The wait on the stop of every wait for room, made once.
    let mut stopping = CallerStop {
        token: &stop,
        wait: pin!(stop.cancelled()),
    };
    let mut pacer =
        pace.map(|s| Pacer::new(s, tokio::time::Instant::now()).restarting_after(STALL));
    // One message at a time under a rate: each waits for its tick. No more than the window
    // holds either: the rest of a larger batch would only be carried over, and moved, each turn.
    let window = client.options().window.count.unwrap_or(BATCH);
    let most = if pacer.is_some() {
        1
    } else {
        BATCH.min(window)
    };
    let mut order = Order::new(notes.clone());
    let mut reading = true;
    // Past the deadline or interrupted: the rest of a finite input is read and reported with
    // this cause, never sent.
    let mut unsent: Option<Cause> = None;
    let mut read = 0u64;
    // Payloads the splitter made hold no framing byte: the client need not look again.
    let split = input.is_split();
    // Taken from the input and not yet handed over (or reported unsent): counted read only
    // when they are, so a batch cut short by an abandon leaves nothing counted and unsettled.
    let mut batch: Vec<Item> = Vec::with_capacity(most);
    // The handles of the batch handed over, kept between turns.
    let mut handles = Vec::with_capacity(most);
    // An input error met while taking a batch: said once the batch is handed over.
    let mut failed: Option<InputError> = None;
    // A stop is looked for before each batch (the waits between them are where another task on
    // this thread can have stopped the run, and a batch is at most `BATCH` messages, for a stop
    // from another thread). Never once per message.
    loop {
        if batch.is_empty() {
            if let Some(error) = failed.take() {
                notes.send(Note::InputEnd(Some(error)));
            }
            let stream_over = endless && gave_up.borrow().is_some();
            let stopped = stop.is_cancelled();
            // The messages of the chunk in hand are taken without waiting (after a stop only to
            // be reported unsent).
            if reading && !stream_over && (!stopped || unsent.is_some()) {
                take_ready(&mut input, most, &mut batch, &mut read, &mut failed);
                if failed.is_some() {
                    reading = false;
                }
            }
            if batch.is_empty() && failed.is_none() {
                tokio::select! {
                    biased;
                    () = stop.cancelled(), if reading && unsent.is_none() => {
                        if let (Some(cause), false) = (controls.unsent_cause(), endless) {
                            unsent = Some(cause);
                            continue;
                        }
                        reading = false;
                        input.close();
                        notes.send(Note::InputEnd(None));
                        continue;
                    }
                    message = input.recv(), if reading && !stream_over => match message {
                        Some(result) => {
                            take(result, &mut batch, &mut read, &mut failed);
                            if failed.is_some() {
                                reading = false;
                            } else {
                                take_ready(&mut input, most, &mut batch, &mut read, &mut failed);
                                reading = failed.is_none();
                            }
                        }
                        None => {
                            reading = false;
                            notes.send(Note::InputEnd(None));
                            continue;
                        }
                    },
                    // Fates pass on while the input keeps the producer waiting.
                    () = order.advance(), if !order.is_empty() => continue,
                    () = std::future::ready(()), if reading && stream_over => {
                        reading = false;
                        notes.send(Note::InputEnd(None));
                        continue;
                    }
                    // Input done, and every fate passed on.
                    else => return,
                }
            }
            if batch.is_empty() {
                continue;
            }
        }
        if let Some(cause) = unsent {
            let fate = Fate::NeverDelivered {
                cause: FateCause::Link(cause),
            };
            settle_unsent(&mut order, &notes, std::mem::take(&mut batch), fate).await;
            continue;
        }
        if client_closed(&client) {
            // Report why without asking the client: it gave up (or is closing after a stop).
            let wait =
                tokio::time::timeout(Duration::from_secs(1), gave_up.wait_for(Option::is_some));
            let cause = order
                .meanwhile(wait)
                .await
                .ok()
                .and_then(|r| r.ok().and_then(|c| *c));
            let fate = Fate::NeverDelivered {
                cause: cause.map_or(FateCause::Closed, FateCause::Link),
            };
            settle_unsent(&mut order, &notes, std::mem::take(&mut batch), fate).await;
            continue;
        }
        if let Some(pacer) = &mut pacer {
            order.meanwhile(pacer.tick()).await;
        }
        let send = client.send_some(
            &batch,
            |item| &item.payload,
            split,
            &mut stopping,
            &mut handles,
        );
        order.meanwhile(send).await;
        // What did not go waits for the next turn: room ran out, and the stop is looked at
        // before any more is handed over.
        let taken = handles.len().min(batch.len());
        notes.read(taken as u64);
        order.sent(batch.drain(..taken), handles.drain(..taken));
        handles.clear();
        order.room_for(0).await;
        if !batch.is_empty() && unsent.is_none() && stop.is_cancelled() {
            match (controls.unsent_cause(), endless) {
                (Some(cause), false) => unsent = Some(cause),
                _ => {
                    // Nothing more is read: the rest of the batch was never counted.
                    batch.clear();
                    failed = None;
                    reading = false;
                    input.close();
                    notes.send(Note::InputEnd(None));
                }
            }
        }
    }
}

/// Take the messages of the chunk in hand that are ready, up to `most` in `batch`; an input
/// error ends the taking, kept in `failed`.
fn take_ready(
    input: &mut Feed,
    most: usize,
    batch: &mut Vec<Item>,
    read: &mut u64,
    failed: &mut Option<InputError>,
) {
    while batch.len() < most && failed.is_none() {
        match input.try_recv() {
            Some(result) => take(result, batch, read, failed),
            None => return,
        }
    }
}

/// A message the input gave, numbered in the run's order; an error is kept in `failed`.
fn take(
    result: Result<Message, InputError>,
    batch: &mut Vec<Item>,
    read: &mut u64,
    failed: &mut Option<InputError>,
) {
    match result {
        Ok(message) => {
            *read += 1;
            batch.push(Item::new(message, *read));
        }
        Err(error) => *failed = Some(error),
    }
}

/// Messages never handed to the client, with their fate already decided: reported in input
/// order, after those taken before them.
async fn settle_unsent(order: &mut Order, notes: &Notes, items: Vec<Item>, fate: Fate) {
    notes.read(items.len() as u64);
    for item in items {
        order.decided(item, fate.clone());
    }
    order.room_for(0).await;
}

#[cfg(test)]
mod tests;
