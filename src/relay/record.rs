//! `--record`: every message passed through, with its upstream answer and timings, kept in the
//! relay's store for a trace to share. A failed write is counted, never changes an answer.

use super::store::{Settlement, Status, Store};
use crate::client::Fate;
use crate::server::Inbound;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::SystemTime;

/// Keeps each message with its fate.
pub struct Recorder {
    store: Store,
    failures: AtomicU64,
}

impl Recorder {
    /// Keep every message and its fate in `store`.
    pub fn new(store: Store) -> Recorder {
        Recorder {
            store,
            failures: AtomicU64::new(0),
        }
    }

    /// Writes that failed so far.
    pub fn failures(&self) -> u64 {
        self.failures.load(Ordering::Relaxed)
    }

    /// Keep `message`, written `writes` times upstream from `forwarded_at`, ending in `fate`.
    pub async fn keep(
        &self,
        message: &Inbound,
        fate: &Fate,
        writes: u32,
        forwarded_at: SystemTime,
    ) {
        let mut settled = settlement(fate, writes);
        settled.forwarded_at = (writes > 0).then_some(forwarded_at);
        if self.store.record(message, settled).await.is_err() {
            self.failures.fetch_add(1, Ordering::Relaxed);
        }
    }
}

/// A fate as a row's upstream columns (`forwarded_at` left for the caller).
pub fn settlement(fate: &Fate, attempts: u32) -> Settlement {
    let (status, code, ack) = match fate {
        Fate::Accepted { code, ack, .. } => (Status::Accepted, Some(*code), Some(ack)),
        Fate::Negative { code, ack, .. } => (Status::Negative, Some(*code), Some(ack)),
        Fate::CommittedOnly { ack, .. } => (
            Status::UnknownFate,
            Some(crate::ack::AckCode::CA),
            Some(ack),
        ),
        Fate::UnknownFate { .. } => (Status::UnknownFate, None, None),
        _ => (Status::NeverDelivered, None, None),
    };
    Settlement {
        status,
        ack_code: code.map(|c| c.as_str().to_string()),
        ack: ack.map(|a| a.bytes().clone()),
        attempts,
        forwarded_at: None,
        settled_at: SystemTime::now(),
    }
}
