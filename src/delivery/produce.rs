//! The producer: hands messages to the client in input order, waiting on backpressure and the
//! rate, never dropping; and the waiter that reports each fate in the order
//! the messages were handed over.

use super::collect::{client_closed, Note};
use super::event::Item;
use super::feed::Feed;
use crate::cause::Cause;
use crate::client::{Client, Fate, FateCause, SendHandle};
use crate::input::{InputError, Message};
use crate::pace::{Pacer, Schedule};
use std::future::Future;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::{mpsc, watch};
use tokio_util::sync::CancellationToken;

/// Messages handed to the client whose fate is not yet reported, at most (beyond the window).
const ORDER_QUEUE: usize = 1024;

/// Behind the rate by more than this (a stall, an outage), pacing starts afresh rather than
/// bursting to catch up.
const STALL: Duration = Duration::from_secs(1);

/// Messages handed over without a wait before the stop is looked at all the same.
const STOP_CHECK: u32 = 64;

/// How the collector stops the producer: `stop` ends reading (a stop, an abandon, the
/// deadline); `expired` or `interrupted`, cancelled first, says why (the deadline passed, or the
/// run was interrupted), so a finite input is still read to its end and each message reported
/// never-delivered with that cause instead of left uncounted. An abandon sets neither: nobody
/// takes the results, so nothing more is read.
pub(super) struct Halt {
    pub stop: CancellationToken,
    pub expired: CancellationToken,
    pub interrupted: CancellationToken,
}

impl Halt {
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
    notes: mpsc::UnboundedSender<Note>,
    halt: Halt,
    mut gave_up: watch::Receiver<Option<Cause>>,
) {
    let stop = halt.stop.clone();
    let mut pacer =
        pace.map(|s| Pacer::new(s, tokio::time::Instant::now()).restarting_after(STALL));
    let order = spawn_waiter(notes.clone());
    let mut reading = true;
    // Past the deadline or interrupted: the rest of a finite input is read and reported with
    // this cause, never sent.
    let mut unsent: Option<Cause> = None;
    let mut read = 0u64;
    // Payloads the splitter made hold no framing byte: the client need not look again.
    let split = input.is_split();
    // A stop is looked for whenever the producer waits: the token races the wait for the next
    // chunk of input, and is checked after any other wait (for room, the rate, the order queue),
    // the only times another task on this thread can have stopped the run; and at least every
    // `STOP_CHECK` messages, for a stop from another thread. Never once per message.
    let mut look = true;
    let mut unlooked = 0u32;
    loop {
        let stream_over = endless && gave_up.borrow().is_some();
        unlooked += 1;
        if unlooked >= STOP_CHECK {
            look = true;
        }
        let stopped = std::mem::take(&mut look) && {
            unlooked = 0;
            stop.is_cancelled()
        };
        // A message of the chunk in hand is taken without waiting.
        let ready = if reading && !stream_over && !stopped {
            input.try_recv()
        } else {
            None
        };
        let item = match ready {
            Some(result) => match next_item(result, &mut read, &mut reading, &notes) {
                Some(item) => item,
                None => continue,
            },
            None => {
                look = true;
                tokio::select! {
                    biased;
                    () = stop.cancelled(), if reading && unsent.is_none() => {
                        if let (Some(cause), false) = (halt.unsent_cause(), endless) {
                            unsent = Some(cause);
                            continue;
                        }
                        reading = false;
                        input.close();
                        let _ = notes.send(Note::InputEnd(None));
                        continue;
                    }
                    message = input.recv(), if reading && !stream_over => match message {
                        Some(result) => match next_item(result, &mut read, &mut reading, &notes) {
                            Some(item) => item,
                            None => continue,
                        },
                        None => {
                            reading = false;
                            let _ = notes.send(Note::InputEnd(None));
                            continue;
                        }
                    },
                    () = std::future::ready(()), if reading && stream_over => {
                        reading = false;
                        let _ = notes.send(Note::InputEnd(None));
                        continue;
                    }
                    // Input done: what was handed over settles through the waiter.
                    else => return,
                }
            }
        };
        if let Some(cause) = unsent {
            let fate = Fate::NeverDelivered {
                cause: FateCause::Link(cause),
            };
            settle_unsent(&order, &notes, item, fate, &mut look).await;
            continue;
        }
        if client_closed(&client) {
            // Report why without asking the client: it gave up (or is closing after a stop).
            let cause =
                tokio::time::timeout(Duration::from_secs(1), gave_up.wait_for(Option::is_some))
                    .await
                    .ok()
                    .and_then(|r| r.ok().and_then(|c| *c));
            let fate = Fate::NeverDelivered {
                cause: cause.map_or(FateCause::Closed, FateCause::Link),
            };
            look = true;
            settle_unsent(&order, &notes, item, fate, &mut look).await;
            continue;
        }
        if let Some(pacer) = &mut pacer {
            noting_waits(pacer.tick(), &mut look).await;
        }
        let handle = if split {
            noting_waits(client.send_split(item.payload.clone(), &stop), &mut look).await
        } else {
            noting_waits(
                client.send_cancellable(item.payload.clone(), &stop),
                &mut look,
            )
            .await
        };
        if let Err(mpsc::error::SendError((mut item, Awaiting::Handle(handle)))) =
            noting_waits(order.send((item, Awaiting::Handle(handle))), &mut look).await
        {
            // The waiter is gone only when the run is over; settle here all the same.
            let fate = settled(&mut item, handle).await;
            let _ = notes.send(Note::Settled(item, fate));
        }
    }
}

/// A message the input gave as the next item, counted as read; an input error ends reading
/// (`None`), said to the collector.
fn next_item(
    result: Result<Message, InputError>,
    read: &mut u64,
    reading: &mut bool,
    notes: &mpsc::UnboundedSender<Note>,
) -> Option<Item> {
    match result {
        Ok(message) => {
            let _ = notes.send(Note::Read);
            *read += 1;
            Some(Item::new(message, *read))
        }
        Err(error) => {
            *reading = false;
            let _ = notes.send(Note::InputEnd(Some(error)));
            None
        }
    }
}

/// A message never handed to the client, with its fate already decided: reported in input
/// order through the waiter, or at once when the waiter is gone (the run is over).
async fn settle_unsent(
    order: &mpsc::Sender<(Item, Awaiting)>,
    notes: &mpsc::UnboundedSender<Note>,
    item: Item,
    fate: Fate,
    look: &mut bool,
) {
    if let Err(mpsc::error::SendError((item, _))) =
        noting_waits(order.send((item, Awaiting::Done(fate.clone()))), look).await
    {
        let _ = notes.send(Note::Settled(item, fate));
    }
}

/// `future`, setting `waited` when it had to wait: other tasks may have run meanwhile.
async fn noting_waits<F: Future>(future: F, waited: &mut bool) -> F::Output {
    let mut future = std::pin::pin!(future);
    std::future::poll_fn(|cx| {
        let poll = future.as_mut().poll(cx);
        *waited |= poll.is_pending();
        poll
    })
    .await
}

/// A submitted message's fate to come, or already decided without the client.
enum Awaiting {
    Handle(SendHandle),
    Done(Fate),
}

/// Await fates in the order messages were handed over, so results come out in input order. The
/// bounded queue in front of it holds back the producer when the oldest message is slow, which
/// keeps memory bounded.
fn spawn_waiter(notes: mpsc::UnboundedSender<Note>) -> mpsc::Sender<(Item, Awaiting)> {
    let (tx, mut rx) = mpsc::channel::<(Item, Awaiting)>(ORDER_QUEUE);
    tokio::spawn(async move {
        while let Some((mut item, awaiting)) = rx.recv().await {
            let fate = match awaiting {
                Awaiting::Handle(handle) => settled(&mut item, handle).await,
                Awaiting::Done(fate) => fate,
            };
            let _ = notes.send(Note::Settled(item, fate));
        }
    });
    tx
}

/// A handle's fate, counting on `item` the times the client wrote it.
async fn settled(item: &mut Item, mut handle: SendHandle) -> Fate {
    let fate = (&mut handle).await;
    item.writes = handle.writes();
    fate
}

#[cfg(test)]
mod tests;
