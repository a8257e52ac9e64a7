//! What a run observed, as facts: the failure classes it met, unknown fates, negative answers,
//! missed thresholds, an interruption, an accounting that did not close. A program embedding
//! the library decides what they come to; the `mllp` command turns them into its exit code.

/// What a run observed. Each field is one fact; [`Observed::merge`] joins two runs' facts.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Observed {
    /// A failure that retrying cannot mend.
    pub permanent: bool,
    /// A failure that trying later may mend.
    pub transient: bool,
    /// A message written without a final answer.
    pub unknown_fate: bool,
    /// A negative acknowledgement.
    pub negative: bool,
    /// A soak threshold missed, or its accounting not closed.
    pub thresholds_missed: bool,
    /// Stopped from outside (Ctrl-C) before the run was done.
    pub interrupted: bool,
    /// Not every message read ended in exactly one fate: a bug, reported as such.
    pub unaccounted: bool,
    /// The input could not be read to its end (unreadable part way, or abandoned).
    pub input_failed: bool,
}

impl Observed {
    /// What either run observed (several probes, say).
    pub fn merge(self, other: Observed) -> Observed {
        Observed {
            permanent: self.permanent || other.permanent,
            transient: self.transient || other.transient,
            unknown_fate: self.unknown_fate || other.unknown_fate,
            negative: self.negative || other.negative,
            thresholds_missed: self.thresholds_missed || other.thresholds_missed,
            interrupted: self.interrupted || other.interrupted,
            unaccounted: self.unaccounted || other.unaccounted,
            input_failed: self.input_failed || other.input_failed,
        }
    }
}
