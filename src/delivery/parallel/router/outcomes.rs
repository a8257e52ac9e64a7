//! What the links say, taken in by the router: each outcome renumbered in input order and
//! counted once (in its link's share too), its key released, kept in `--failed-out`; a link
//! closing; the events handed out in batches.

use super::super::super::event::{
    EventBatch, Item, MessageOutcome, RunEvent, RunNote, BATCH_EVENTS,
};
use super::super::super::failed::file_name;
use super::super::super::why;
use super::super::link::{Entry, FromLink};
use super::super::LinkEvent;
use super::Router;
use crate::client::Population;
use tokio::sync::mpsc;

impl Router {
    /// What link `i` said; `true` once every link is done.
    pub(super) async fn heard(&mut self, i: usize, said: FromLink) -> bool {
        match said {
            FromLink::Events(EventBatch::One(event)) => self.link_event(i, event).await,
            FromLink::Events(EventBatch::Many(events)) => {
                for event in events {
                    self.link_event(i, event).await;
                }
            }
            FromLink::Done(summary) => {
                self.links[i].done = Some(summary);
                return self.links.iter().all(|l| l.done.is_some());
            }
        }
        false
    }

    pub(super) async fn link_event(&mut self, i: usize, event: RunEvent) {
        match event {
            RunEvent::Outcome(mut outcome) => {
                let Some(entry) = self.links[i].take(outcome.item.seq) else {
                    // Not one the router handed over: impossible, so say so loudly in tests.
                    debug_assert!(false, "link {i} settled a message it was not given");
                    return;
                };
                self.routes.returned(i, 1);
                outcome.item.seq = entry.seq;
                self.settle(i, entry.key, outcome).await;
            }
            RunEvent::Closing => self.link_closing(i).await,
            // The router says these once for the whole run.
            RunEvent::Note(RunNote::TimedOut | RunNote::Interrupted) => {}
            other => self.emit(Some(i), other).await,
        }
    }

    /// Link `i` says no more outcomes will come: what it took and never settled ends unsent,
    /// and what was ready for it goes to the other links.
    pub(super) async fn link_closing(&mut self, i: usize) {
        self.links[i].closing = true;
        self.routes.close(i);
        let left: Vec<Entry> = self.links[i].ledger.drain(..).flatten().collect();
        self.routes.returned(i, left.len());
        for e in left {
            let outcome = MessageOutcome {
                item: Item::new(e.message, e.seq),
                fate: why::never_handed_over(None),
                cause: None,
            };
            self.settle(i, e.key, outcome).await;
        }
        if !self.closing_sent && self.links.iter().all(|l| l.closing) {
            self.closing_sent = true;
            self.emit(None, RunEvent::Closing).await;
        }
    }

    /// A message's one outcome: counted (in its link's share too), its key released, kept in
    /// `--failed-out`, handed out.
    pub(super) async fn settle(&mut self, link: usize, key: Option<u64>, outcome: MessageOutcome) {
        self.totals.record(&outcome.fate);
        let share = &mut self.links[link].totals;
        share.read += 1;
        share.record(&outcome.fate);
        self.routes.released(key);
        let kept = match &self.options.failed_out {
            Some(dir) if outcome.fate.population() != Population::Accepted => {
                let label = outcome.item.label();
                dir.write(outcome.item.seq, &label, &outcome.item.payload)
                    .err()
                    .map(|error| RunNote::FailedOutWrite {
                        file: file_name(outcome.item.seq, &label),
                        error,
                    })
            }
            _ => None,
        };
        self.emit(Some(link), RunEvent::Outcome(outcome)).await;
        if let Some(note) = kept {
            self.note(note).await;
        }
    }

    /// Hold an event to hand out; a whole batch goes at once.
    pub(super) async fn emit(&mut self, link: Option<usize>, event: RunEvent) {
        self.held_events.push(LinkEvent { link, event });
        if self.held_events.len() >= BATCH_EVENTS {
            self.hand_out().await;
        }
    }

    /// Hand out the events held, in order, as one batch (waiting for room in the channel).
    pub(super) async fn hand_out(&mut self) {
        let batch = match self.held_events.len() {
            0 => return,
            // One event: the buffer is kept, nothing allocated for it.
            1 => match self.held_events.pop() {
                Some(event) => EventBatch::One(event),
                None => return,
            },
            n => EventBatch::Many(std::mem::replace(
                &mut self.held_events,
                Vec::with_capacity(n),
            )),
        };
        if let Err(mpsc::error::TrySendError::Full(batch)) = self.out.try_send(batch) {
            let _ = self.out.send(batch).await;
        }
    }

    pub(super) async fn note(&mut self, note: RunNote) {
        self.emit(None, RunEvent::Note(note)).await;
    }
}
