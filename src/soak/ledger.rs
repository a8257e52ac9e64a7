//! The embedded listener's memory of what it committed: control IDs of a run encode their
//! connection and sequence number, so the ledger is one byte per message (commits and duplicates
//! counted), and the de-duplicating sink checks and records each message atomically.

use crate::server::sink::{Inbound, Sink, SinkFuture, SinkResult};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

/// Run prefix length; the whole control ID is 19 characters (HL7's ST limit is 20).
const RUN_LEN: usize = 6;
const CONN_DIGITS: usize = 3;
const SEQ_DIGITS: usize = 10;
/// Length of every control ID of a run, in bytes.
pub(crate) const CONTROL_ID_LEN: usize = RUN_LEN + CONN_DIGITS + SEQ_DIGITS;
/// Connections a run can number.
pub const MAX_CONNECTIONS: usize = 999;

/// Makes and reads the control IDs of one run: `RRRRRR` (run), `CCC` (connection), `SSSSSSSSSS`
/// (sequence number within the connection).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ControlIds {
    run: [u8; RUN_LEN],
}

impl ControlIds {
    /// A run prefix from `seed` (base 36, upper case).
    pub fn new(seed: u64) -> ControlIds {
        const DIGITS: &[u8; 36] = b"0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ";
        let mut run = [b'0'; RUN_LEN];
        let mut n = seed;
        for slot in run.iter_mut().rev() {
            *slot = DIGITS[(n % 36) as usize];
            n /= 36;
        }
        ControlIds { run }
    }

    /// The six-character run prefix every control ID of this run starts with.
    pub fn run(&self) -> &[u8] {
        &self.run
    }

    /// The control ID of message `seq` on connection `conn`.
    pub fn format(&self, conn: usize, seq: u64) -> [u8; CONTROL_ID_LEN] {
        let mut out = [b'0'; CONTROL_ID_LEN];
        out[..RUN_LEN].copy_from_slice(&self.run);
        write_digits(&mut out[RUN_LEN..RUN_LEN + CONN_DIGITS], conn as u64);
        write_digits(&mut out[RUN_LEN + CONN_DIGITS..], seq);
        out
    }

    /// `(connection, sequence)` of one of this run's control IDs; `None` for any other.
    pub fn parse(&self, id: &[u8]) -> Option<(usize, u64)> {
        if id.len() != CONTROL_ID_LEN || id[..RUN_LEN] != self.run {
            return None;
        }
        let conn = read_digits(&id[RUN_LEN..RUN_LEN + CONN_DIGITS])?;
        let seq = read_digits(&id[RUN_LEN + CONN_DIGITS..])?;
        Some((conn as usize, seq))
    }
}

fn write_digits(out: &mut [u8], mut n: u64) {
    for slot in out.iter_mut().rev() {
        *slot = b'0' + (n % 10) as u8;
        n /= 10;
    }
}

fn read_digits(digits: &[u8]) -> Option<u64> {
    digits.iter().try_fold(0u64, |n, &d| {
        d.is_ascii_digit().then(|| n * 10 + u64::from(d - b'0'))
    })
}

/// One message's entry: bit 0 committed, bit 1 commit under way, bits 2..8 duplicates (saturating).
const COMMITTED: u8 = 1;
const IN_PROGRESS: u8 = 2;
const DUP_UNIT: u8 = 4;

/// What the ledger says about an arriving message.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Claim {
    /// First time: commit it (the claim is held until [`Ledger::settle`]).
    New,
    /// Already committed: answer positively, do not commit again.
    Duplicate,
    /// The same message is being committed on another connection right now.
    Busy,
    /// Not one of this run's control IDs.
    Foreign,
}

/// Totals of a ledger.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct LedgerTotals {
    /// Messages of this run committed, each control ID counted once.
    pub committed: u64,
    /// Copies of already committed messages that arrived again: answered as committed, not
    /// committed twice.
    pub duplicates: u64,
    /// Messages whose control ID is not one of this run's.
    pub foreign: u64,
}

/// Committed control IDs of one run, by connection and sequence number.
#[derive(Debug)]
pub struct Ledger {
    ids: ControlIds,
    connections: Vec<Mutex<Vec<u8>>>,
    committed: AtomicU64,
    duplicates: AtomicU64,
    foreign: AtomicU64,
}

impl Ledger {
    /// An empty ledger for the control IDs `ids` makes, on `connections` connections.
    pub fn new(ids: ControlIds, connections: usize) -> Ledger {
        Ledger {
            ids,
            connections: (0..connections).map(|_| Mutex::new(Vec::new())).collect(),
            committed: AtomicU64::new(0),
            duplicates: AtomicU64::new(0),
            foreign: AtomicU64::new(0),
        }
    }

    fn slot(&self, conn: usize) -> Option<MutexGuard<'_, Vec<u8>>> {
        let lock = self.connections.get(conn)?;
        Some(lock.lock().unwrap_or_else(|p| p.into_inner()))
    }

    /// Check and mark an arriving control ID in one step.
    pub fn claim(&self, id: Option<&[u8]>) -> Claim {
        let Some((conn, seq)) = id.and_then(|id| self.ids.parse(id)) else {
            self.foreign.fetch_add(1, Ordering::Relaxed);
            return Claim::Foreign;
        };
        let Some(mut entries) = self.slot(conn) else {
            self.foreign.fetch_add(1, Ordering::Relaxed);
            return Claim::Foreign;
        };
        let index = seq as usize;
        if entries.len() <= index {
            entries.resize(index + 1, 0);
        }
        let entry = &mut entries[index];
        if *entry & COMMITTED != 0 {
            if *entry >> 2 < 63 {
                *entry += DUP_UNIT;
            }
            self.duplicates.fetch_add(1, Ordering::Relaxed);
            Claim::Duplicate
        } else if *entry & IN_PROGRESS != 0 {
            Claim::Busy
        } else {
            *entry |= IN_PROGRESS;
            Claim::New
        }
    }

    /// End a [`Claim::New`]: committed, or released for a later attempt.
    pub fn settle(&self, id: &[u8], committed: bool) {
        let Some((conn, seq)) = self.ids.parse(id) else {
            return;
        };
        let Some(mut entries) = self.slot(conn) else {
            return;
        };
        if let Some(entry) = entries.get_mut(seq as usize) {
            *entry &= !IN_PROGRESS;
            if committed {
                *entry |= COMMITTED;
                self.committed.fetch_add(1, Ordering::Relaxed);
            }
        }
    }

    /// Whether message `seq` of connection `conn` was committed.
    pub(crate) fn is_committed(&self, conn: usize, seq: u64) -> bool {
        self.slot(conn)
            .and_then(|entries| entries.get(seq as usize).copied())
            .is_some_and(|e| e & COMMITTED != 0)
    }

    /// The counts so far.
    pub fn totals(&self) -> LedgerTotals {
        LedgerTotals {
            committed: self.committed.load(Ordering::Relaxed),
            duplicates: self.duplicates.load(Ordering::Relaxed),
            foreign: self.foreign.load(Ordering::Relaxed),
        }
    }
}

/// A de-duplicating sink over a [`Ledger`]: commits to memory, or to `inner` (an out-dir sink).
/// A duplicate is answered as committed; a message whose first copy is still being committed
/// elsewhere is answered as a failure, never falsely positive.
pub(crate) struct LedgerSink {
    ledger: Arc<Ledger>,
    inner: Option<Arc<dyn Sink>>,
}

impl LedgerSink {
    /// A sink recording in `ledger`, committing through `inner` when given.
    pub(crate) fn new(ledger: Arc<Ledger>, inner: Option<Arc<dyn Sink>>) -> LedgerSink {
        LedgerSink { ledger, inner }
    }

    async fn commit_one(&self, message: &Inbound) -> SinkResult {
        let id = message.control_id();
        match self.ledger.claim(id) {
            Claim::Duplicate => SinkResult::committed(),
            Claim::Busy => SinkResult::failed("the same control ID is being committed"),
            claim => {
                let result = match &self.inner {
                    Some(inner) => inner.commit(message).await,
                    None => SinkResult::committed(),
                };
                if let (Claim::New, Some(id)) = (claim, id) {
                    let ok = result.disposition == crate::ack::Disposition::Committed;
                    self.ledger.settle(id, ok);
                }
                result
            }
        }
    }
}

impl Sink for LedgerSink {
    fn commit<'a>(&'a self, message: &'a Inbound) -> SinkFuture<'a, SinkResult> {
        Box::pin(self.commit_one(message))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn control_ids_round_trip_and_reject_others() {
        let ids = ControlIds::new(123_456_789);
        let id = ids.format(7, 42);
        assert_eq!(id.len(), 19);
        assert_eq!(ids.parse(&id), Some((7, 42)));
        assert_eq!(ControlIds::new(1).parse(&id), None);
        assert_eq!(ids.parse(b"short"), None);
        let mut bad = id;
        bad[10] = b'x';
        assert_eq!(ids.parse(&bad), None);
    }

    #[test]
    fn claims_count_commits_and_duplicates_once_each() {
        let ids = ControlIds::new(9);
        let ledger = Ledger::new(ids, 2);
        let id = ids.format(1, 5);
        assert_eq!(ledger.claim(Some(&id)), Claim::New);
        assert_eq!(ledger.claim(Some(&id)), Claim::Busy);
        ledger.settle(&id, true);
        assert_eq!(ledger.claim(Some(&id)), Claim::Duplicate);
        assert_eq!(ledger.claim(Some(&id)), Claim::Duplicate);
        assert!(ledger.is_committed(1, 5));
        assert!(!ledger.is_committed(1, 4));
        assert!(!ledger.is_committed(0, 5));
        assert_eq!(ledger.claim(Some(&ids.format(5, 1))), Claim::Foreign);
        assert_eq!(ledger.claim(None), Claim::Foreign);
        let other = ids.format(0, 1);
        assert_eq!(ledger.claim(Some(&other)), Claim::New);
        ledger.settle(&other, false);
        assert_eq!(ledger.claim(Some(&other)), Claim::New);
        assert_eq!(
            ledger.totals(),
            LedgerTotals {
                committed: 1,
                duplicates: 2,
                foreign: 2
            }
        );
    }
}
