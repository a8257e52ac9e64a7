//! `--record`: every message passed through, with its upstream answer and timings, kept in the
//! relay's store for a trace to share, each in one transaction (never a row left pending). A
//! failed write never changes an answer; failures are counted and said once a second with their
//! count and the last cause.

use super::mirror::{Compared, Outcome};
use super::store::{Settlement, Status, Store};
use crate::client::Fate;
use crate::server::{Inbound, StoreReports};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime};
use tokio::sync::oneshot;
use tokio_util::task::TaskTracker;

/// Keeps each message with its fate.
pub struct Recorder {
    store: Store,
    failed: Arc<Failed>,
    /// Shadow answers on their way to their rows.
    mirrored: TaskTracker,
}

/// Writes that failed, how many of them were said, and the last one's cause.
#[derive(Default)]
struct Failed {
    count: AtomicU64,
    said: AtomicU64,
    last: Mutex<String>,
}

impl Recorder {
    /// Keep every message and its fate in `store`.
    pub fn new(store: Store) -> Recorder {
        Recorder {
            store,
            failed: Arc::default(),
            mirrored: TaskTracker::new(),
        }
    }

    /// Say failed writes through `reports`, once a second while there are new ones.
    pub(crate) fn report_to(&self, reports: StoreReports) {
        self.store.report_to(reports);
        let (store, failed) = (self.store.clone(), Arc::clone(&self.failed));
        tokio::spawn(async move {
            // Ends with the recorder.
            while Arc::strong_count(&failed) > 1 {
                tokio::time::sleep(Duration::from_secs(1)).await;
                let count = failed.count.load(Ordering::Relaxed);
                let new = count - failed.said.swap(count, Ordering::Relaxed);
                if new > 0 {
                    let last = failed
                        .last
                        .lock()
                        .unwrap_or_else(|p| p.into_inner())
                        .clone();
                    let detail = format!(
                        "record: {new} messages could not be written to {} in the last second ({count} in all; last: {last}); their answers are unchanged",
                        store.file().display()
                    );
                    store.report(detail).await;
                }
            }
        });
    }

    /// Writes that failed so far.
    pub fn failures(&self) -> u64 {
        self.failed.count.load(Ordering::Relaxed)
    }

    /// Keep `message`, written `writes` times upstream from `forwarded_at`, ending in `fate`.
    /// Returns where the row is, for its shadow answer.
    pub async fn keep(
        &self,
        message: &Inbound,
        fate: &Fate,
        writes: u32,
        forwarded_at: SystemTime,
    ) -> Option<(u64, i64)> {
        let mut settled = settlement(fate, writes);
        settled.forwarded_at = (writes > 0).then_some(forwarded_at);
        match self.store.record(message, settled).await {
            Ok(row) => Some(row),
            Err(e) => {
                self.failed.failed(e);
                None
            }
        }
    }

    /// Keep the shadow's answer and the comparison's outcome in `row` once `compared` comes
    /// (`None`: the copy was skipped). Never waited for.
    pub fn mirrored(&self, row: (u64, i64), compared: Option<oneshot::Receiver<Compared>>) {
        let (store, failed) = (self.store.clone(), Arc::clone(&self.failed));
        self.mirrored.spawn(async move {
            let compared = match compared {
                Some(compared) => compared.await.unwrap_or(Compared {
                    outcome: Outcome::ShadowSkipped,
                    ack: None,
                }),
                None => Compared {
                    outcome: Outcome::ShadowSkipped,
                    ack: None,
                },
            };
            let outcome = compared.outcome.as_str();
            if let Err(e) = store.mirrored(row, compared.ack, outcome).await {
                failed.failed(e);
            }
        });
    }
}

impl Recorder {
    /// Wait until every shadow answer whose comparison has ended is in its row (at the stop,
    /// once the mirror is finished).
    pub async fn mirrored_written(&self) {
        self.mirrored.close();
        self.mirrored.wait().await;
    }
}

impl Failed {
    fn failed(&self, why: String) {
        *self.last.lock().unwrap_or_else(|p| p.into_inner()) = why;
        self.count.fetch_add(1, Ordering::Relaxed);
    }
}

/// A fate as a row's upstream columns (`forwarded_at` left for the caller).
pub(crate) fn settlement(fate: &Fate, attempts: u32) -> Settlement {
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
