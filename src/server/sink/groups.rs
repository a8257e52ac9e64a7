//! Commit groups: how a grouping sink's writer gathers the jobs queued into one transaction, and
//! how its commits went (the number of groups and of rows, and a histogram of group sizes in
//! powers of two), counted by the sink's one writer and read at the end.

use serde::{Serialize, Serializer};
#[cfg(any(feature = "sqlite", feature = "postgres"))]
use std::sync::atomic::{AtomicU64, Ordering};
#[cfg(any(feature = "sqlite", feature = "postgres"))]
use tokio::sync::{mpsc, oneshot};

/// Bucket `i` holds groups of `2^i ..= 2^(i+1) - 1` rows; the last holds everything larger.
const BUCKETS: usize = 13;

/// A snapshot of the counts.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CommitGroups {
    /// Transactions committed (or attempted).
    pub groups: u64,
    /// Rows in them.
    pub rows: u64,
    /// Groups per size bucket, `1`, `2-3`, `4-7`, ... `4096+`.
    pub sizes: [u64; BUCKETS],
}

impl CommitGroups {
    /// Rows per group on average; 0 without groups.
    pub fn mean(&self) -> f64 {
        if self.groups == 0 {
            0.0
        } else {
            self.rows as f64 / self.groups as f64
        }
    }

    /// The buckets that hold groups, as `(label, groups)`: `("1", 10)`, `("2-3", 4)`, ...
    pub fn histogram(&self) -> Vec<(String, u64)> {
        (0..BUCKETS)
            .filter(|&i| self.sizes[i] > 0)
            .map(|i| (label(i), self.sizes[i]))
            .collect()
    }
}

fn label(i: usize) -> String {
    let low = 1u64 << i;
    match i {
        0 => "1".into(),
        _ if i == BUCKETS - 1 => format!("{low}+"),
        _ => format!("{low}-{}", (low << 1) - 1),
    }
}

// Only the stores that commit in groups count them.
#[cfg(any(feature = "sqlite", feature = "postgres"))]
fn bucket(rows: usize) -> usize {
    (usize::BITS - 1 - rows.max(1).leading_zeros()).min(BUCKETS as u32 - 1) as usize
}

impl Serialize for CommitGroups {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let mut map = s.serialize_map(Some(4))?;
        map.serialize_entry("groups", &self.groups)?;
        map.serialize_entry("rows", &self.rows)?;
        map.serialize_entry("mean", &((self.mean() * 100.0).round() / 100.0))?;
        let sizes: serde_json::Map<String, serde_json::Value> = self
            .histogram()
            .into_iter()
            .map(|(k, n)| (k, n.into()))
            .collect();
        map.serialize_entry("sizes", &sizes)?;
        map.end()
    }
}

/// One committer's messages as rows for the writer, and where their results go, one per row.
#[cfg(any(feature = "sqlite", feature = "postgres"))]
pub(crate) struct Job<R> {
    pub(crate) rows: Vec<R>,
    pub(crate) reply: oneshot::Sender<Vec<super::SinkResult>>,
}

/// Hand `rows` to the writer behind `jobs` and wait for their results, one a row. A writer that
/// is gone, or drops the job unanswered, fails every row with `stopped`: nothing was committed.
#[cfg(any(feature = "sqlite", feature = "postgres"))]
pub(crate) async fn submit<R>(
    jobs: &mpsc::Sender<Job<R>>,
    rows: Vec<R>,
    stopped: &str,
) -> Vec<super::SinkResult> {
    let len = rows.len();
    let lost = || vec![super::SinkResult::failed(stopped); len];
    let (reply, answer) = oneshot::channel();
    if jobs.send(Job { rows, reply }).await.is_err() {
        return lost();
    }
    answer.await.unwrap_or_else(|_| lost())
}

/// Payload bytes a group holds at most before the last job taken: a writer's copies of one
/// group (PostgreSQL's encoded rows) stay this small, whatever waits in the queue.
#[cfg(any(feature = "sqlite", feature = "postgres"))]
pub(crate) const GROUP_BYTES: usize = 16 * 1024 * 1024;

/// A row's payload size, for [`GROUP_BYTES`].
#[cfg(any(feature = "sqlite", feature = "postgres"))]
pub(crate) trait Payload {
    fn payload_len(&self) -> usize;
}

/// The group that starts with `first`: it and the jobs already queued behind it, until the group
/// holds at least `max_rows` rows or [`GROUP_BYTES`] of payload (the last job taken may pass
/// either); never waits for more. Returns the jobs, in queue order, and their rows.
#[cfg(any(feature = "sqlite", feature = "postgres"))]
pub(crate) fn gather<R: Payload>(
    first: Job<R>,
    rx: &mut mpsc::Receiver<Job<R>>,
    max_rows: usize,
) -> (Vec<Job<R>>, usize) {
    let weigh = |job: &Job<R>| job.rows.iter().map(Payload::payload_len).sum::<usize>();
    let mut rows = first.rows.len();
    let mut bytes = weigh(&first);
    let mut jobs = vec![first];
    while rows < max_rows && bytes < GROUP_BYTES {
        match rx.try_recv() {
            Ok(job) => {
                rows += job.rows.len();
                bytes += weigh(&job);
                jobs.push(job);
            }
            Err(_) => break,
        }
    }
    (jobs, rows)
}

/// The live counts: written by one writer, read by anyone.
#[cfg(any(feature = "sqlite", feature = "postgres"))]
#[derive(Debug, Default)]
pub(crate) struct GroupCounter {
    groups: AtomicU64,
    rows: AtomicU64,
    sizes: [AtomicU64; BUCKETS],
}

#[cfg(any(feature = "sqlite", feature = "postgres"))]
impl GroupCounter {
    pub(crate) fn record(&self, rows: usize) {
        self.groups.fetch_add(1, Ordering::Relaxed);
        self.rows.fetch_add(rows as u64, Ordering::Relaxed);
        self.sizes[bucket(rows)].fetch_add(1, Ordering::Relaxed);
    }

    pub(crate) fn snapshot(&self) -> CommitGroups {
        CommitGroups {
            groups: self.groups.load(Ordering::Relaxed),
            rows: self.rows.load(Ordering::Relaxed),
            sizes: std::array::from_fn(|i| self.sizes[i].load(Ordering::Relaxed)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A writer gone before the job, or one that drops it unanswered, fails every row: nothing
    /// is reported committed that no writer kept.
    #[cfg(any(feature = "sqlite", feature = "postgres"))]
    #[tokio::test]
    async fn rows_that_no_writer_answers_all_fail() {
        use super::super::Disposition;
        let failed_all = |results: Vec<super::super::SinkResult>| {
            results.len() == 3
                && results.iter().all(|r| {
                    r.disposition == Disposition::CommitFailed
                        && r.detail.as_deref() == Some("the writer stopped")
                })
        };
        let (tx, rx) = mpsc::channel::<Job<u8>>(1);
        drop(rx);
        assert!(failed_all(
            submit(&tx, vec![1, 2, 3], "the writer stopped").await
        ));

        let (tx, mut rx) = mpsc::channel::<Job<u8>>(1);
        let writer = tokio::spawn(async move { drop(rx.recv().await) });
        assert!(failed_all(
            submit(&tx, vec![1, 2, 3], "the writer stopped").await
        ));
        writer.await.unwrap();

        let (tx, mut rx) = mpsc::channel::<Job<u8>>(1);
        let writer = tokio::spawn(async move {
            let job = rx.recv().await.unwrap();
            let results = job
                .rows
                .iter()
                .map(|_| super::super::SinkResult::committed());
            let _ = job.reply.send(results.collect());
        });
        let results = submit(&tx, vec![1, 2, 3], "the writer stopped").await;
        assert!(results
            .iter()
            .all(|r| r.disposition == Disposition::Committed));
        assert_eq!(results.len(), 3);
        writer.await.unwrap();
    }

    #[test]
    fn groups_fall_in_power_of_two_buckets() {
        let counter = GroupCounter::default();
        for rows in [1, 2, 3, 4, 7, 8, 4095, 4096, 10_000] {
            counter.record(rows);
        }
        let g = counter.snapshot();
        assert_eq!(
            (g.groups, g.rows),
            (9, 1 + 2 + 3 + 4 + 7 + 8 + 4095 + 4096 + 10_000)
        );
        let want: Vec<(String, u64)> = [
            ("1", 1),
            ("2-3", 2),
            ("4-7", 2),
            ("8-15", 1),
            ("2048-4095", 1),
            ("4096+", 2),
        ]
        .iter()
        .map(|(k, n)| (k.to_string(), *n))
        .collect();
        assert_eq!(g.histogram(), want);
        let json = serde_json::to_value(&g).unwrap();
        assert_eq!(json["sizes"]["4096+"], 2);
        assert_eq!(json["groups"], 9);
    }

    #[cfg(any(feature = "sqlite", feature = "postgres"))]
    impl Payload for usize {
        fn payload_len(&self) -> usize {
            *self
        }
    }

    #[cfg(any(feature = "sqlite", feature = "postgres"))]
    fn job(
        rows: usize,
    ) -> (
        Job<usize>,
        oneshot::Receiver<Vec<crate::server::SinkResult>>,
    ) {
        let (reply, answer) = oneshot::channel();
        let rows = (0..rows).collect();
        (Job { rows, reply }, answer)
    }

    #[cfg(any(feature = "sqlite", feature = "postgres"))]
    #[tokio::test]
    async fn a_group_stops_at_its_payload_bytes() {
        let (tx, mut rx) = mpsc::channel(16);
        let mut answers = Vec::new();
        for _ in 0..4 {
            let (reply, answer) = oneshot::channel();
            let rows = vec![GROUP_BYTES / 3 + 1];
            tx.send(Job { rows, reply }).await.unwrap();
            answers.push(answer);
        }
        // Just over a third of the bytes each: the third job passes the limit, the fourth waits.
        let first = rx.recv().await.unwrap();
        let (jobs, rows) = gather(first, &mut rx, 4096);
        assert_eq!((jobs.len(), rows), (3, 3));
        let (jobs, _) = gather(rx.recv().await.unwrap(), &mut rx, 4096);
        assert_eq!(jobs.len(), 1);
    }

    #[cfg(any(feature = "sqlite", feature = "postgres"))]
    #[tokio::test(start_paused = true)]
    async fn a_group_takes_what_is_queued_up_to_the_row_limit_and_never_waits() {
        let (tx, mut rx) = mpsc::channel(16);
        let mut answers = Vec::new();
        for rows in [3, 1, 2, 4, 5] {
            let (j, a) = job(rows);
            tx.send(j).await.unwrap();
            answers.push(a);
        }
        // 3 + 1 + 2 reaches 6: the fourth job waits for the next group.
        let first = rx.recv().await.unwrap();
        let (jobs, rows) = gather(first, &mut rx, 6);
        let sizes: Vec<usize> = jobs.iter().map(|j| j.rows.len()).collect();
        assert_eq!((sizes, rows), (vec![3, 1, 2], 6));
        // The last job taken may pass the limit: 4 + 5 = 9 > 6.
        let first = rx.recv().await.unwrap();
        let (jobs, rows) = gather(first, &mut rx, 6);
        assert_eq!((jobs.len(), rows), (2, 9));
        // Nothing queued: the group is the first job alone, taken at once while a later job
        // is still to come.
        let later = tokio::spawn({
            let tx = tx.clone();
            async move {
                tokio::time::sleep(std::time::Duration::from_secs(1)).await;
                tx.send(job(7).0).await.unwrap();
            }
        });
        let (j, _a) = job(2);
        let (jobs, rows) = gather(j, &mut rx, 6);
        assert_eq!((jobs.len(), rows), (1, 2));
        later.await.unwrap();
        let (jobs, rows) = gather(rx.recv().await.unwrap(), &mut rx, 6);
        assert_eq!((jobs.len(), rows), (1, 7));
    }
}
