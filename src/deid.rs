//! De-identification: the same messages with their patients replaced, for taking production
//! traffic into a test system.
//!
//! - [`Key`]: 32 random bytes in a file of their own; every replacement is derived from an
//!   HMAC-SHA256 of the original under it, so the same original gets the same replacement in
//!   every message, file and run with the same key (a patient stays one person from
//!   admission to discharge), and other replacements under another key.
//! - [`Policy`]: which values are replaced and how ([`Method`]): the standard rules for the
//!   identifying fields of the common segments, a site's own on top ([`RawPolicy`]).
//! - [`Deidentifier`]: the key and the policy; each thread de-identifies through a [`Session`]
//!   of its own, one message at a time. Everything a rule does not take in stays byte for
//!   byte. A [`Report`] counts replacements per rule, never a value.
//!
//! Methods: `hash` gives a value of the same shape (digits for digits, letters for letters in
//! their case, other characters and the length kept), `name` a name from a built-in list of
//! fictitious names, `shift-date` the date moved earlier by 1 to 365 days, one offset per
//! patient (from the HMAC of the patient's first identifier, PID-3), `blank` empties,
//! `keep` keeps.

mod apply;
mod batch;
mod date;
mod derive;
mod key;
mod names;
mod pass;
mod plan;
mod policy;
mod remember;
mod replace;
mod report;
mod rule;
mod scan;
mod shape;
mod standard;

pub use apply::{Deidentifier, Session};
pub use batch::batch_trailer;
pub use key::{readable_by_others, Key, KeyError};
pub use policy::{Policy, PolicyError, RawPolicy, RawRule};
pub use report::Report;
pub use rule::{Method, Rule, When};

#[cfg(test)]
mod model_tests;
#[cfg(test)]
mod plan_tests;
#[cfg(test)]
mod tests;
