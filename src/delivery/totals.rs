//! A run's accounting: messages read, their fates in the one [`FateTally`], rewrites and
//! reconnects, the check that every message read has exactly one fate, how the run ended, and
//! what the run observed.

use crate::ack::AckCode;
use crate::cause::{Cause, Class};
use crate::client::{Fate, FateTally, Population};
use crate::outcome::Observed;
use std::time::Duration;

/// Everything counted during a run.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Totals {
    /// Messages taken from the input.
    pub read: u64,
    /// Their fates, by population and final ACK code.
    pub fates: FateTally,
    /// Rewrites: frames written again after their first write (after a reconnect, or after a
    /// peer dropped pipelined frames).
    pub resent: u64,
    /// Reconnect attempts of the client.
    pub reconnects: u64,
}

impl Totals {
    /// Count one message's fate.
    pub fn record(&mut self, fate: &Fate) {
        self.fates.record(fate);
    }

    /// Count one fate, its final ACK code in `codes` until [`Codes::fold_into`]: a slot a
    /// code rather than a lookup by string in the tally's map for every message.
    pub(super) fn record_with(&mut self, fate: &Fate, codes: &mut Codes) {
        self.fates.add(fate.population(), None);
        if let Some(code) = fate.ack_code() {
            codes.0[code as usize] += 1;
        }
    }

    /// The messages counted in `population`.
    pub fn count(&self, population: Population) -> u64 {
        self.fates.count(population)
    }

    /// Messages written to the peer at least once: all but the never-delivered and the refused.
    pub fn written(&self) -> u64 {
        self.settled().saturating_sub(
            self.count(Population::NeverDelivered) + self.count(Population::Refused),
        )
    }

    /// Messages with a fate.
    pub fn settled(&self) -> u64 {
        self.fates.settled()
    }

    /// The one-fate rule: every message read ended in exactly one population.
    pub fn adds_up(&self) -> bool {
        self.settled() == self.read
    }

    /// What the run observed, for its exit code: the failure class the client gave up on when
    /// a message went undelivered or unanswered, unknown fates, negatives, an interruption,
    /// unreadable input, and whether the one-fate count closed.
    pub fn observed(&self, ending: Ending) -> Observed {
        let undelivered = self.count(Population::NeverDelivered) + self.count(Population::Refused);
        let unknown = self.count(Population::UnknownFate) + self.count(Population::CommittedOnly);
        let link_failed = undelivered + unknown > 0;
        // An ACK-timeout close is our own decision about a written message, not a connection
        // failure: with reconnects off it answers as the same peer does with them on (3).
        let gave_up = ending.gave_up.filter(|&c| c != Cause::AckTimeout);
        let class = gave_up.map(Cause::class);
        Observed {
            permanent: link_failed && class == Some(Class::Permanent),
            // Never delivered without a give-up (a duplicate control ID, resends exhausted):
            // trying later may work.
            transient: (link_failed && class == Some(Class::Transient))
                || (undelivered > 0 && ending.gave_up.is_none()),
            unknown_fate: unknown > 0,
            negative: self.count(Population::Negative) > 0,
            thresholds_missed: false,
            interrupted: ending.interrupted,
            unaccounted: !self.adds_up(),
            input_failed: ending.input_failed || ending.abandoned,
        }
    }
}

/// Final ACK codes counted by [`Totals::record_with`] and not yet in the totals.
#[derive(Debug, Default)]
pub(super) struct Codes([u64; AckCode::ALL.len()]);

impl Codes {
    /// Add the codes counted to `totals`.
    pub(super) fn fold_into(self, totals: &mut Totals) {
        for code in AckCode::ALL {
            let n = self.0[code as usize];
            if n > 0 {
                *totals
                    .fates
                    .by_code
                    .entry(code.as_str().to_string())
                    .or_default() += n;
            }
        }
    }
}

/// How a run ended, beyond the per-message fates.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct Ending {
    /// The client stopped reconnecting because of this cause.
    pub gave_up: Option<Cause>,
    /// Stopped or destroyed through [`RunControls`](super::RunControls).
    pub interrupted: bool,
    /// Reading the input failed part way.
    pub input_failed: bool,
    /// Abandoned ([`RunControls::abandon`](super::RunControls::abandon)) before the input was all
    /// read, so reading stopped there.
    pub abandoned: bool,
    /// The deadline passed.
    pub timed_out: bool,
    /// The link's last failure, when it had not connected again since.
    pub last_failure: Option<Cause>,
}

/// What a run comes to: its totals, how it ended, and how long it took.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RunSummary {
    /// Everything counted.
    pub totals: Totals,
    /// How the run ended.
    pub ending: Ending,
    /// From the start of the run to its end.
    pub elapsed: Duration,
}

#[cfg(test)]
mod tests;
