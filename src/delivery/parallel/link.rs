//! What the router keeps of each link: the messages handed to it and not yet settled, by the
//! link run's own numbering, its share of the run, and whether it has ended.

use super::super::event::EventBatch;
use super::super::totals::{RunSummary, Totals};
use super::super::RunControls;
use crate::input::Message;
use std::collections::VecDeque;
use tokio::sync::mpsc;

/// What a link's run hands the router.
pub(super) enum FromLink {
    /// Its run's events, a batch at a time as the run handed them out.
    Events(EventBatch),
    Done(RunSummary),
}

/// A message read and routed, not yet handed to its link.
pub(super) struct Pending {
    pub(super) message: Message,
    pub(super) seq: u64,
    pub(super) key: Option<u64>,
    pub(super) link: usize,
}

/// A message handed to a link, until its outcome names it.
pub(super) struct Entry {
    pub(super) seq: u64,
    pub(super) key: Option<u64>,
    pub(super) message: Message,
}

pub(super) struct Link {
    pub(super) tx: Option<mpsc::Sender<Message>>,
    pub(super) controls: RunControls,
    /// By the link run's own numbering (the order it took them), from `base`.
    pub(super) ledger: VecDeque<Option<Entry>>,
    pub(super) base: u64,
    pub(super) totals: Totals,
    pub(super) closing: bool,
    pub(super) done: Option<RunSummary>,
}

impl Link {
    pub(super) fn new(tx: mpsc::Sender<Message>, controls: RunControls) -> Link {
        Link {
            tx: Some(tx),
            controls,
            ledger: VecDeque::new(),
            base: 1,
            totals: Totals::default(),
            closing: false,
            done: None,
        }
    }

    /// Take the entry the link numbered `seq`.
    pub(super) fn take(&mut self, seq: u64) -> Option<Entry> {
        let at = usize::try_from(seq.checked_sub(self.base)?).ok()?;
        let entry = self.ledger.get_mut(at)?.take()?;
        while let Some(None) = self.ledger.front() {
            self.ledger.pop_front();
            self.base += 1;
        }
        Some(entry)
    }
}
