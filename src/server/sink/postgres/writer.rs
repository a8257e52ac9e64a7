//! The writer: one task, one connection. It commits everything queued when it runs in one
//! transaction and answers each job after the COMMIT; a row the server refuses is answered
//! negatively and the group tried again without it; it watches the link even when idle,
//! reconnects with backoff while the database is away, and says when the link is lost and when
//! it is back. A COMMIT whose outcome is unknown is settled within [`SETTLE_MAX`]; past it the
//! messages get no answer and their connections close (their fate is unknown to us too).

use super::commit::{self, Fate, Insert, Outcome};
use super::settle;
use super::{connect, Conn, Job, Reports, Row, GROUP_ROWS, RETRIES};
use super::{BACKOFF_FIRST, BACKOFF_MAX};
use crate::cause::Cause;
use crate::server::sink::groups::{self, GroupCounter};
use crate::server::sink::{Reply, SinkResult};
use crate::server::ServerEvent;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::mpsc;
use tokio::time::{sleep, sleep_until, Instant};
use tokio_postgres_rustls::MakeRustlsConnect;

use super::conninfo::ConnInfo;

/// How long an unknown COMMIT is settled for at most: within a stop's drain.
const SETTLE_MAX: Duration = Duration::from_secs(15);
/// Rows of one group the server may refuse, each answered negatively, before the rest fail too.
const REFUSED_MAX: usize = 16;

/// What woke the writer.
enum Wake {
    Job(Job),
    /// Every committer is gone: the sink was dropped.
    Stop,
    /// The connection ended, for this reason.
    Closed(String),
    /// Time to try connecting again.
    Retry,
}

/// When to try connecting again, doubling the wait after each failure.
struct Backoff {
    next: Instant,
    wait: std::time::Duration,
}

impl Backoff {
    fn new() -> Backoff {
        Backoff {
            next: Instant::now(),
            wait: BACKOFF_FIRST,
        }
    }
    fn failed(&mut self) {
        self.next = Instant::now() + self.wait;
        self.wait = (self.wait * 2).min(BACKOFF_MAX);
    }
}

/// Since when, and why, the database is away; how many messages were refused meanwhile.
struct Down {
    since: Instant,
    why: String,
    refused: u64,
}

/// The connection, or why there is none; reports each change of state.
struct Link {
    info: ConnInfo,
    tls: MakeRustlsConnect,
    dedupe: bool,
    conn: Option<Conn>,
    down: Option<Down>,
    backoff: Backoff,
    reports: Reports,
}

impl Link {
    async fn lost(&mut self, why: String) {
        self.conn = None;
        self.backoff.failed();
        if let Some(down) = &mut self.down {
            down.why = why;
            return;
        }
        self.down = Some(Down {
            since: Instant::now(),
            why: why.clone(),
            refused: 0,
        });
        report(&self.reports, ServerEvent::StoreLost { detail: why }).await;
    }

    async fn up(&mut self, conn: Conn) {
        self.conn = Some(conn);
        self.backoff = Backoff::new();
        if let Some(down) = self.down.take() {
            let event = ServerEvent::StoreRestored {
                down_ms: down.since.elapsed().as_millis() as u64,
                refused: down.refused,
            };
            report(&self.reports, event).await;
        }
    }

    /// Try once to connect, when the backoff allows.
    async fn reconnect(&mut self) {
        if self.conn.is_some() || Instant::now() < self.backoff.next {
            return;
        }
        match connect(&self.info, &self.tls, self.dedupe).await {
            Ok(conn) => self.up(conn).await,
            Err(failure) => self.lost(failure.what).await,
        }
    }

    /// Count `rows` refused while the link is down.
    fn refused(&mut self, rows: usize) {
        if let Some(down) = &mut self.down {
            down.refused += rows as u64;
        }
    }
}

async fn report(reports: &Reports, event: ServerEvent) {
    let to = reports.lock().unwrap_or_else(|p| p.into_inner()).clone();
    if let Some(to) = to {
        to.send(event).await;
    }
}

pub(super) async fn run(
    info: ConnInfo,
    tls: MakeRustlsConnect,
    dedupe: bool,
    conn: Conn,
    mut rx: mpsc::Receiver<Job>,
    reports: Reports,
    counter: Arc<GroupCounter>,
) {
    let mut link = Link {
        info,
        tls,
        dedupe,
        conn: Some(conn),
        down: None,
        backoff: Backoff::new(),
        reports,
    };
    loop {
        let wake = {
            let down = link.conn.is_none();
            let retry = link.backoff.next;
            let closed = async {
                match &mut link.conn {
                    Some(c) => (&mut c.closed).await.unwrap_or_default(),
                    None => std::future::pending().await,
                }
            };
            tokio::select! {
                job = rx.recv() => job.map_or(Wake::Stop, Wake::Job),
                // The link dropped while idle: said now, not at the next message.
                why = closed => Wake::Closed(why),
                _ = sleep_until(retry), if down => Wake::Retry,
            }
        };
        let first = match wake {
            Wake::Job(job) => job,
            Wake::Stop => return,
            Wake::Closed(why) => {
                link.lost(if why.is_empty() {
                    "connection closed".into()
                } else {
                    why
                })
                .await;
                continue;
            }
            Wake::Retry => {
                link.reconnect().await;
                continue;
            }
        };
        let (jobs, rows) = groups::gather(first, &mut rx, GROUP_ROWS);
        if link.conn.as_ref().is_some_and(|c| c.client.is_closed()) {
            link.lost("connection closed".into()).await;
        }
        link.reconnect().await;
        counter.record(rows);
        let rows: Vec<&Row> = jobs.iter().flat_map(|j| &j.rows).collect();
        let results = commit_rows(&mut link, &rows, &jobs).await;
        drop(rows);
        let mut results = results.into_iter();
        for job in jobs {
            let answers = results.by_ref().take(job.rows.len()).collect();
            // A committer that went away (its connection was dropped) needs no answer.
            let _ = job.reply.send(answers);
        }
    }
}

/// The answer for a row whose transaction committed.
fn answer(fate: &Fate) -> SinkResult {
    match fate {
        Fate::Stored(_) => SinkResult::committed(),
        Fate::Duplicate => SinkResult::duplicate(),
        Fate::Dropped => SinkResult::failed(
            "postgres: the database kept nothing for this message (a trigger or a rule dropped or deleted the row)",
        ),
    }
}

/// Commit `rows` in one transaction, again without each row the server refuses; one result a
/// row, in order.
async fn commit_rows(link: &mut Link, rows: &[&Row], jobs: &[Job]) -> Vec<SinkResult> {
    let mut results: Vec<Option<SinkResult>> = vec![None; rows.len()];
    let (mut refused, mut retries) = (0, 0);
    let mut how = Insert::Copy;
    loop {
        let open: Vec<usize> = (0..rows.len()).filter(|&i| results[i].is_none()).collect();
        let Some(c) = link.conn.as_ref().filter(|_| !open.is_empty()) else {
            if !open.is_empty() {
                let why = link.down.as_ref().map_or("", |d| d.why.as_str());
                let failed = SinkResult::failed(format!("postgres: not connected: {why}"));
                link.refused(open.len());
                fill(&mut results, &open, failed);
            }
            break;
        };
        let group: Vec<&Row> = open.iter().map(|&i| rows[i]).collect();
        match commit::group(c, &group, how).await {
            Outcome::Committed(fates) => {
                for (&i, fate) in open.iter().zip(&fates) {
                    results[i] = Some(answer(fate));
                }
                break;
            }
            // Nothing kept: the next way, at last row by row, which names the row refused.
            Outcome::Split => how = how.slower(),
            Outcome::Refused { index, why } if refused < REFUSED_MAX => {
                refused += 1;
                // The rest most likely goes in whole.
                how = Insert::Copy;
                results[open[index]] = Some(SinkResult::failed(format!(
                    "postgres: the database refused this message: {why}"
                )));
            }
            Outcome::NotCommitted { again: true, .. } if retries + 1 < RETRIES => retries += 1,
            Outcome::Refused { why, .. }
            | Outcome::NotCommitted {
                why, lost: false, ..
            } => {
                let failed = SinkResult::failed(format!("postgres: not committed: {why}"));
                fill(&mut results, &open, failed);
                break;
            }
            Outcome::NotCommitted { why, .. } => {
                link.lost(why.clone()).await;
                let failed = SinkResult::failed(format!("postgres: not committed: {why}"));
                fill(&mut results, &open, failed);
                break;
            }
            Outcome::Unknown { key, fates } => {
                let why =
                    "the connection dropped during COMMIT; looking its rows up before answering";
                link.lost(why.into()).await;
                let settled = settle(link, key, &group, &fates, jobs).await;
                for (n, &i) in open.iter().enumerate() {
                    results[i] = Some(match &settled {
                        Some(stored) if stored[n] => answer(&fates[n]),
                        Some(_) => SinkResult::failed(
                            "postgres: the connection dropped during COMMIT, which did not keep this message",
                        ),
                        None => unsettled(),
                    });
                }
                break;
            }
        }
    }
    results
        .into_iter()
        .map(|r| r.unwrap_or_else(|| SinkResult::failed("postgres: no result")))
        .collect()
}

fn fill(results: &mut [Option<SinkResult>], open: &[usize], with: SinkResult) {
    for &i in open {
        results[i] = Some(with.clone());
    }
}

/// A message whose COMMIT could not be settled: no answer (either would be a guess), and its
/// connection closes, so its fate is as unknown to the peer as to us.
fn unsettled() -> SinkResult {
    SinkResult::failed(format!(
        "postgres: the connection dropped during COMMIT and the rows could not be looked up within {}s: not answered",
        SETTLE_MAX.as_secs()
    ))
    .replying(Reply::Relayed {
        acks: Vec::new(),
        close: Some(Cause::ConnectionLost),
    })
}

/// Reconnect (with backoff) and look the rows of the transaction holding lock `key` up, once it
/// is over; `None` past [`SETTLE_MAX`], or once no committer waits for the answers (a stop).
async fn settle(
    link: &mut Link,
    key: i64,
    rows: &[&Row],
    fates: &[Fate],
    jobs: &[Job],
) -> Option<Vec<bool>> {
    let deadline = Instant::now() + SETTLE_MAX;
    let mut wait = BACKOFF_FIRST;
    loop {
        if Instant::now() >= deadline || jobs.iter().all(|j| j.reply.is_closed()) {
            return None;
        }
        if let Ok(c) = connect(&link.info, &link.tls, link.dedupe).await {
            let left = deadline.saturating_duration_since(Instant::now());
            let lock_ms = left.as_millis().clamp(1, 1000) as u64;
            match settle::settled(&c, key, rows, fates, lock_ms).await {
                Ok(Some(stored)) => {
                    link.up(c).await;
                    return Some(stored);
                }
                // The old transaction still holds its lock: ask again.
                Ok(None) => continue,
                Err(_) => {}
            }
        }
        let now = Instant::now();
        if now >= deadline {
            return None;
        }
        sleep(wait.min(deadline - now)).await;
        wait = (wait * 2).min(BACKOFF_MAX);
    }
}
