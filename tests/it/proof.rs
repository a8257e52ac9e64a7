//! The reliability proof, rerunnable: every fault a link can suffer between a sender and a
//! receiver, and a receiver killed at random moments, each checked for what a user is promised:
//! every message in exactly one reported fate, everything reported accepted stored byte for
//! byte, and no duplicate where the resend policy promises none. Each test prints its table
//! (`--nocapture`); the long variants are `#[ignore]`d and run with `--ignored`.

mod matrix;
mod receiver;
mod sigkill;
mod stores;
mod stores_fault;
mod table;
