//! Two sets of messages compared: the outputs of two engines, before and after a migration.
//!
//! - [`KeyPaths`]: what pairs a message of side A with one of side B (MSH-10 unless told;
//!   `PID-3.1` and `MSH-9` for engines that renumber).
//! - [`Comparer`]: two messages field by field, escapes decoded, trailing empty parts equal to
//!   absent ones, [`Ignore`]d paths and segments left out; each [`Difference`] with both values.
//! - [`Pairing`]: the two sides paired in memory bounded by the indexed side's keys: that
//!   side's messages go to a temporary file and only their keys and places stay in memory, the
//!   other side is read once, as it comes.

mod compare;
mod ignore;
mod key;
mod pair;
mod spill;

pub use compare::{Comparer, Difference};
pub use ignore::{Ignore, Ignored};
pub use key::{Key, KeyPaths};
pub use pair::{Event, Pairing, PairingError, Side, Summary};

#[cfg(test)]
mod model_tests;
#[cfg(test)]
mod tests;
