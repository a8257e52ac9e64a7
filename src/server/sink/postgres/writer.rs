//! The writer: one task, one connection. It commits everything queued when it runs in one
//! transaction and answers each job after the COMMIT; it watches the link even when idle,
//! reconnects with backoff while the database is away, and says when the link is lost and when
//! it is back.

use super::failure;
use super::{connect, Conn, Job, Reports, GROUP_ROWS, GROUP_TIMEOUT, RETRIES};
use super::{BACKOFF_FIRST, BACKOFF_MAX};
use crate::server::sink::groups::{self, GroupCounter};
use crate::server::sink::SinkResult;
use crate::server::ServerEvent;
use futures_util::future::join_all;
use std::sync::Arc;
use tokio::sync::mpsc;
use tokio::time::{sleep, sleep_until, timeout, Instant};
use tokio_postgres_rustls::MakeRustlsConnect;

use super::conninfo::ConnInfo;

/// What became of a commit group.
enum Outcome {
    /// COMMIT answered: each row inserted or found (duplicate).
    Committed(Vec<bool>),
    /// Nothing kept (rolled back, or never committed). `lost`: the connection is gone.
    NotCommitted { why: String, lost: bool },
    /// COMMIT sent, no reply: the transaction `txid` may or may not have committed.
    Unknown { txid: i64, inserted: Vec<bool> },
}

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
        match connect(&self.info, &self.tls, None).await {
            Ok(conn) => self.up(conn).await,
            Err(failure) => self.lost(failure.what).await,
        }
    }

    /// Answer `jobs` negatively for `why`, counting them while the link is down.
    fn refuse(&mut self, jobs: Vec<Job>, why: &str) {
        if let Some(down) = &mut self.down {
            down.refused += jobs.iter().map(|j| j.rows.len() as u64).sum::<u64>();
        }
        answer_failed(jobs, why);
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
    conn: Conn,
    mut rx: mpsc::Receiver<Job>,
    reports: Reports,
    counter: Arc<GroupCounter>,
) {
    let mut link = Link {
        info,
        tls,
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
        let Some(c) = &link.conn else {
            let why = link.down.as_ref().map_or("", |d| d.why.as_str());
            let why = format!("postgres: not connected: {why}");
            link.refuse(jobs, &why);
            continue;
        };
        counter.record(rows);
        let mut outcome = commit_group(c, &jobs).await;
        for _ in 1..RETRIES {
            match &outcome {
                Outcome::NotCommitted { why, lost: false } if why.contains("(40") => {
                    outcome = commit_group(c, &jobs).await;
                }
                _ => break,
            }
        }
        let inserted = match outcome {
            Outcome::Committed(inserted) => inserted,
            Outcome::NotCommitted { why, lost } => {
                if lost {
                    link.lost(why.clone()).await;
                }
                link.refuse(jobs, &format!("postgres: not committed: {why}"));
                continue;
            }
            Outcome::Unknown { txid, inserted } => {
                link.lost("the connection dropped during COMMIT; asking the database whether it took effect".into())
                    .await;
                let (c, committed) = settle(&link.info, &link.tls, txid).await;
                link.up(c).await;
                if !committed {
                    answer_failed(
                        jobs,
                        "postgres: the connection dropped during COMMIT, which did not take effect",
                    );
                    continue;
                }
                inserted
            }
        };
        let mut inserted = inserted.into_iter();
        for job in jobs {
            let results = job
                .rows
                .iter()
                .map(|_| match inserted.next() {
                    Some(true) => SinkResult::committed(),
                    Some(false) => SinkResult::duplicate(),
                    None => SinkResult::failed("postgres: no result"),
                })
                .collect();
            // A committer that went away (its connection was dropped) needs no answer.
            let _ = job.reply.send(results);
        }
    }
}

fn answer_failed(jobs: Vec<Job>, why: &str) {
    for job in jobs {
        let _ = job
            .reply
            .send(vec![SinkResult::failed(why); job.rows.len()]);
    }
}

/// One transaction for every row of `jobs`: BEGIN with synchronous commit, the inserts
/// pipelined, COMMIT; bounded by [`GROUP_TIMEOUT`].
async fn commit_group(c: &Conn, jobs: &[Job]) -> Outcome {
    let lost = |e: &tokio_postgres::Error| e.as_db_error().is_none();
    let why = |e: &tokio_postgres::Error| failure::of(e).what;
    let begin = "BEGIN; SET LOCAL synchronous_commit TO on; SELECT txid_current()";
    let txid = match timeout(GROUP_TIMEOUT, c.client.simple_query(begin)).await {
        Err(_) => return not_committed("BEGIN timed out".into(), true),
        Ok(Err(e)) => return not_committed(why(&e), lost(&e)),
        Ok(Ok(messages)) => messages.iter().find_map(|m| match m {
            tokio_postgres::SimpleQueryMessage::Row(row) => row.get(0)?.parse::<i64>().ok(),
            _ => None,
        }),
    };
    let Some(txid) = txid else {
        return not_committed("no transaction id".into(), false);
    };
    let inserts = jobs.iter().flat_map(|j| &j.rows).map(|row| {
        let bytes = row.payload.len() as i64;
        let payload: &[u8] = &row.payload;
        let dedupe = row.dedupe.then_some(true);
        async move {
            c.client
                .execute(
                    &c.insert,
                    &[
                        &row.received_at,
                        &row.peer,
                        &row.fields[0],
                        &row.fields[1],
                        &row.fields[2],
                        &row.fields[3],
                        &row.fields[4],
                        &bytes,
                        &payload,
                        &dedupe,
                    ],
                )
                .await
        }
    });
    let counts = match timeout(GROUP_TIMEOUT, join_all(inserts)).await {
        Err(_) => return not_committed("inserts timed out".into(), true),
        Ok(counts) => counts,
    };
    let mut inserted = Vec::with_capacity(counts.len());
    for count in counts {
        match count {
            Ok(n) => inserted.push(n > 0),
            Err(e) => {
                let gone = lost(&e);
                if !gone {
                    let _ = c.client.batch_execute("ROLLBACK").await;
                }
                return not_committed(why(&e), gone);
            }
        }
    }
    match timeout(GROUP_TIMEOUT, c.client.batch_execute("COMMIT")).await {
        Ok(Ok(())) => Outcome::Committed(inserted),
        // The server refused the COMMIT: it rolled back.
        Ok(Err(e)) if !lost(&e) => not_committed(why(&e), false),
        // Sent, and no reply: it may have committed.
        _ => Outcome::Unknown { txid, inserted },
    }
}

fn not_committed(why: String, lost: bool) -> Outcome {
    Outcome::NotCommitted { why, lost }
}

/// Reconnect (with backoff, for as long as it takes: no answer may go out before) and ask what
/// became of transaction `txid`. The server knows it: committed, aborted (including rolled back
/// by a crash), or still in progress (its old session has not yet noticed the drop).
async fn settle(info: &ConnInfo, tls: &MakeRustlsConnect, txid: i64) -> (Conn, bool) {
    let mut wait = BACKOFF_FIRST;
    loop {
        if let Ok(c) = connect(info, tls, None).await {
            loop {
                let status = c
                    .client
                    .query_one("SELECT txid_status($1)", &[&txid])
                    .await
                    .map(|row| row.get::<_, Option<String>>(0));
                match status.as_ref().map(|s| s.as_deref()) {
                    Ok(Some("committed")) => return (c, true),
                    Ok(Some("in progress")) => sleep(BACKOFF_FIRST).await,
                    // Aborted, or too old to be known (never the case this soon).
                    Ok(_) => return (c, false),
                    Err(_) => break,
                }
            }
        }
        sleep(wait).await;
        wait = (wait * 2).min(BACKOFF_MAX);
    }
}
