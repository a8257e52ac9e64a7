//! The mirror's counts: how each copy ended. Atomic adds only, so taking a copy takes no lock.

use std::sync::atomic::{AtomicU64, Ordering};

/// How one message's copy ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Outcome {
    /// Both answered, and alike where compared.
    Same,
    /// Both answered, and differently.
    Different,
    /// Written to the shadow, and no final answer came.
    ShadowUnanswered,
    /// Never written to the shadow: its queue or the budget was full, or the relay stopped
    /// first.
    ShadowSkipped,
}

impl Outcome {
    /// The outcome's name in events and records.
    pub fn as_str(self) -> &'static str {
        match self {
            Outcome::Same => "same",
            Outcome::Different => "different",
            Outcome::ShadowUnanswered => "shadow-unanswered",
            Outcome::ShadowSkipped => "shadow-skipped",
        }
    }
}

/// The counts at one moment.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Counts {
    /// Copies whose answers were alike.
    pub same: u64,
    /// Copies whose answers differed.
    pub different: u64,
    /// Copies the shadow never finally answered.
    pub shadow_unanswered: u64,
    /// Copies never written to the shadow.
    pub shadow_skipped: u64,
    /// Copies waiting for the shadow or their comparison now.
    pub queued: u64,
}

#[derive(Debug, Default)]
pub(super) struct Tally([AtomicU64; 4]);

impl Tally {
    pub(super) fn add(&self, outcome: Outcome) {
        self.0[outcome as usize].fetch_add(1, Ordering::Relaxed);
    }

    pub(super) fn read(&self, queued: u64) -> Counts {
        let n = |o: Outcome| self.0[o as usize].load(Ordering::Relaxed);
        Counts {
            same: n(Outcome::Same),
            different: n(Outcome::Different),
            shadow_unanswered: n(Outcome::ShadowUnanswered),
            shadow_skipped: n(Outcome::ShadowSkipped),
            queued,
        }
    }
}
