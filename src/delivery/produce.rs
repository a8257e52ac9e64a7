//! The producer: hands messages to the client in input order, a batch at a time, waiting on
//! backpressure and the rate, never dropping; and, while it waits (in `order`), reports each
//! fate in the order the messages were taken.

mod order;
use super::event::Item;
use super::feed::Feed;
use super::inbox::{client_closed, Note, Notes};
use super::totals::Ending;
use super::why;
use crate::cause::Cause;
use crate::client::{CallerStop, Client, Fate};
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
        let ending = Ending {
            timed_out: self.expired.is_cancelled(),
            interrupted: self.interrupted.is_cancelled(),
            ..Ending::default()
        };
        why::cause(None, &ending)
    }
}

/// Where the producer stands with its input. The transitions are the methods below; each
/// is taken in one place of [`produce`].
#[derive(Debug)]
enum Reading {
    /// Taking messages and handing them to the client.
    Open,
    /// Stopped past the deadline or interrupted: the rest of a finite input is still read, and
    /// each message reported never delivered with this cause, never sent.
    Unsent(Cause),
    /// An input error ended the reading: said once the batch in hand is settled (with `unsent`,
    /// the cause it ends with, when the run had stopped sending).
    Failed {
        error: InputError,
        unsent: Option<Cause>,
    },
    /// Nothing more is read; the fates still awaited pass on.
    Over,
}

impl Reading {
    /// Messages are still taken from the input.
    fn reads(&self) -> bool {
        matches!(self, Reading::Open | Reading::Unsent(_))
    }

    /// The cause the batch in hand ends with, never sent; `None` while the run sends.
    fn unsent(&self) -> Option<Cause> {
        match self {
            Reading::Unsent(cause) => Some(*cause),
            Reading::Failed { unsent, .. } => *unsent,
            Reading::Open | Reading::Over => None,
        }
    }

    /// An input error: no more is read.
    fn failed(self, error: InputError) -> Reading {
        let unsent = self.unsent();
        Reading::Failed { error, unsent }
    }

    /// The stop came: with a cause (past the deadline, interrupted) the rest of a finite input
    /// is reported unsent; without one (an abandon, an endless input) nothing more is read.
    fn stopped(self, cause: Option<Cause>) -> Reading {
        match (self, cause) {
            (Reading::Open, Some(cause)) => Reading::Unsent(cause),
            (Reading::Failed { error, .. }, Some(cause)) => Reading::Failed {
                error,
                unsent: Some(cause),
            },
            _ => Reading::Over,
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
    let most = batch_size(&client, pacer.is_some());
    let mut taking = Taking {
        input: &mut input,
        most,
        read: 0,
        // Taken from the input and not yet handed over (or reported unsent): counted read only
        // when they are, so a batch cut short by an abandon leaves nothing counted and unsettled.
        batch: Vec::with_capacity(most),
        state: Reading::Open,
    };
    let mut order = Order::new(notes.clone());
    // Payloads the splitter made hold no framing byte: the client need not look again.
    let split = taking.input.is_split();
    // The handles of the batch handed over, kept between turns.
    let mut handles = Vec::with_capacity(most);
    // A stop is looked for before each batch (the waits between them are where another task on
    // this thread can have stopped the run, and a batch is at most `BATCH` messages, for a stop
    // from another thread). Never once per message.
    loop {
        if taking.batch.is_empty() {
            let stream_over = endless && gave_up.borrow().is_some();
            match taking
                .next_batch(&mut order, &notes, &controls, endless, stream_over)
                .await
            {
                Next::EventBatch => {}
                Next::Again => continue,
                Next::Done => return,
            }
        }
        let batch = &mut taking.batch;
        if let Some(cause) = taking.state.unsent() {
            let fate = why::never_handed_over(Some(cause));
            settle_unsent(&mut order, &notes, std::mem::take(batch), fate).await;
            continue;
        }
        if client_closed(&client) {
            let fate = closed_fate(&mut order, &mut gave_up).await;
            settle_unsent(&mut order, &notes, std::mem::take(batch), fate).await;
            continue;
        }
        if let Some(pacer) = &mut pacer {
            order.meanwhile(pacer.tick()).await;
        }
        let send = client.send_some(
            batch,
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
        if !batch.is_empty() && taking.state.unsent().is_none() && stop.is_cancelled() {
            taking.stop(&notes, &controls, endless);
        }
    }
}

/// Messages handed over in one call: one at a time under a rate, each waiting for its tick;
/// no more than the window holds either, since the rest of a larger batch would only be
/// carried over, and moved, each turn.
fn batch_size(client: &Client, paced: bool) -> usize {
    let window = client.options().window.count.unwrap_or(BATCH);
    if paced {
        1
    } else {
        BATCH.min(window)
    }
}

/// The fate of messages the client no longer takes, decided without asking it: why it gave up
/// (or that it is closing after a stop).
async fn closed_fate(order: &mut Order, gave_up: &mut watch::Receiver<Option<Cause>>) -> Fate {
    let wait = tokio::time::timeout(Duration::from_secs(1), gave_up.wait_for(Option::is_some));
    let gave_up = order
        .meanwhile(wait)
        .await
        .ok()
        .and_then(|r| r.ok().and_then(|c| *c));
    let ending = Ending {
        gave_up,
        ..Ending::default()
    };
    why::never_handed_over(why::cause(None, &ending))
}

/// What the producer does next once its batch is empty.
enum Next {
    /// A batch is in hand.
    EventBatch,
    /// Look again (the state changed, or fates passed on).
    Again,
    /// The input is done and every fate passed on.
    Done,
}

/// The input side of the producer: what it reads, the batch in hand, and where it stands.
struct Taking<'a> {
    input: &'a mut Feed,
    /// Messages taken in one batch at most.
    most: usize,
    /// Messages taken so far, numbering each in the run's order.
    read: u64,
    batch: Vec<Item>,
    state: Reading,
}

impl Taking<'_> {
    /// Fill the empty batch: the messages of the chunk in hand at once, else the next one the
    /// input gives, while fates pass on; the stop and the end of the input change the state.
    async fn next_batch(
        &mut self,
        order: &mut Order,
        notes: &Notes,
        controls: &ProducerControls,
        endless: bool,
        stream_over: bool,
    ) -> Next {
        if let Reading::Failed { .. } = self.state {
            let Reading::Failed { error, .. } = std::mem::replace(&mut self.state, Reading::Over)
            else {
                unreachable!("matched above")
            };
            notes.send(Note::InputEnd(Some(error)));
        }
        let stopped = controls.stop.is_cancelled();
        // After a stop, taken only to be reported unsent.
        if self.state.reads() && !stream_over && (!stopped || self.state.unsent().is_some()) {
            self.take_ready();
        }
        if !self.batch.is_empty() || matches!(self.state, Reading::Failed { .. }) {
            return if self.batch.is_empty() {
                Next::Again
            } else {
                Next::EventBatch
            };
        }
        let open = matches!(self.state, Reading::Open);
        tokio::select! {
            biased;
            () = controls.stop.cancelled(), if open => {
                self.stop(notes, controls, endless);
                Next::Again
            }
            message = self.input.recv(), if self.state.reads() && !stream_over => match message {
                Some(result) => {
                    self.take(result);
                    self.take_ready();
                    if self.batch.is_empty() { Next::Again } else { Next::EventBatch }
                }
                None => {
                    self.end(notes, None);
                    Next::Again
                }
            },
            // Fates pass on while the input keeps the producer waiting.
            () = order.advance(), if !order.is_empty() => Next::Again,
            () = std::future::ready(()), if self.state.reads() && stream_over => {
                self.end(notes, None);
                Next::Again
            }
            // Input done, and every fate passed on.
            else => Next::Done,
        }
    }

    /// The stop came: past the deadline or interrupted, the rest of a finite input is still
    /// read, to be reported unsent; otherwise nothing more is read, and the rest of the batch in
    /// hand was never counted.
    fn stop(&mut self, notes: &Notes, controls: &ProducerControls, endless: bool) {
        let cause = controls.unsent_cause().filter(|_| !endless);
        self.state = std::mem::replace(&mut self.state, Reading::Over).stopped(cause);
        if let Reading::Over = self.state {
            self.batch.clear();
            self.input.close();
            self.end(notes, None);
        }
    }

    /// Nothing more is read; the collector hears the input ended (with its error, if any).
    fn end(&mut self, notes: &Notes, error: Option<InputError>) {
        self.state = Reading::Over;
        notes.send(Note::InputEnd(error));
    }

    /// Take the messages of the chunk in hand that are ready, up to `most`; an input error
    /// ends the taking.
    fn take_ready(&mut self) {
        while self.batch.len() < self.most && self.state.reads() {
            match self.input.try_recv() {
                Some(result) => self.take(result),
                None => return,
            }
        }
    }

    /// A message the input gave, numbered in the run's order; an error ends the reading.
    fn take(&mut self, result: Result<Message, InputError>) {
        match result {
            Ok(message) => {
                self.read += 1;
                self.batch.push(Item::new(message, self.read));
            }
            Err(error) => {
                self.state = std::mem::replace(&mut self.state, Reading::Over).failed(error);
            }
        }
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
