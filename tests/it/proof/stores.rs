//! The store fault matrix: each store (`listen --out-dir`, `--sqlite`, `--postgres`, the relay's
//! `--queue` and `--record`) under each fault that can befall it (the process killed, the
//! database's backend killed or the server stopped at once, the file or directory moved,
//! replaced or deleted, the disk full, write permission or a privilege taken away, a trigger
//! that drops rows, refuses them or deletes them after the INSERT), with messages sent one at a time on either side of the
//! fault. Every cell checks the two rules: no positive answer without the message durable in
//! the store its path named when it was answered, no negative answer with the message kept
//! anywhere. The table is printed (`--nocapture`); the long form is `#[ignore]`d.

use super::stores_fault::{Cell, Fault, Kind};
use crate::support::mllp_client::{marked, MllpClient};
use std::collections::BTreeSet;
use std::fmt::Write;
use std::net::SocketAddr;
use std::time::Duration;

/// One message's answer: its code, or none (the connection closed or the wait passed: its fate
/// is unknown, and judged by neither rule).
pub type Answer = (String, Option<String>);

/// What a cell added up to.
#[derive(Debug, Default)]
pub struct Tally {
    pub store: &'static str,
    pub fault: &'static str,
    pub answers: usize,
    pub positive: usize,
    pub negative: usize,
    pub unanswered: usize,
    /// Answered positively, not durable where the path named.
    pub lost: Vec<String>,
    /// Answered negatively, kept somewhere.
    pub kept: Vec<String>,
    /// Why the cell was not run here.
    pub skipped: Option<String>,
    /// What else broke the cell.
    pub failures: Vec<String>,
}

/// A sender of one message at a time, reconnecting when its connection goes.
pub struct Sender {
    addr: SocketAddr,
    client: Option<MllpClient>,
}

impl Sender {
    pub fn new(addr: SocketAddr) -> Sender {
        Sender { addr, client: None }
    }

    /// Send message `id` and wait for its answer.
    pub async fn send(&mut self, id: &str) -> Answer {
        for _ in 0..100 {
            if self.client.is_none() {
                self.client = MllpClient::try_connect(self.addr).await;
            }
            if let Some(client) = &mut self.client {
                if client.try_send(&marked(id, "")).await {
                    let answer = client.ack_within(Duration::from_secs(25)).await;
                    let code = match answer {
                        Ok(Some(ack)) => Some(ack.code),
                        _ => {
                            self.client = None;
                            None
                        }
                    };
                    return (id.to_string(), code);
                }
                self.client = None;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        panic!("{id}: the store's process never took a connection");
    }
}

/// Judge `answers` against what the store kept: ids stored at the path now (`at_path`), and
/// anywhere at all (`anywhere`, moved copies included). Answers up to `free_before` (the fault
/// came after them) may be durable in the file the path named then, wherever it went.
pub fn judge(
    tally: &mut Tally,
    answers: &[Answer],
    at_path: &BTreeSet<String>,
    anywhere: &BTreeSet<String>,
    free_before: usize,
    gone_before: bool,
) {
    for (n, (id, code)) in answers.iter().enumerate() {
        tally.answers += usize::from(code.is_some());
        match code.as_deref() {
            None => tally.unanswered += 1,
            Some("AA" | "CA") => {
                tally.positive += 1;
                let durable = if n < free_before {
                    // Deleted by the fault itself: nothing left to look at.
                    gone_before || anywhere.contains(id)
                } else {
                    at_path.contains(id)
                };
                if !durable {
                    tally.lost.push(id.clone());
                }
            }
            Some(_) => {
                tally.negative += 1;
                if anywhere.contains(id) {
                    tally.kept.push(id.clone());
                }
            }
        }
    }
}

/// The matrix's table, then a panic naming every cell that broke a rule.
pub fn report(title: &str, rows: &[Tally]) {
    let mut out = format!("\n{title}\n");
    let _ = writeln!(
        out,
        "{:<8} {:<26} {:>7} {:>8} {:>8} {:>10} {:>5} {:>17} {:>7}",
        "store",
        "fault",
        "answers",
        "positive",
        "negative",
        "unanswered",
        "lost",
        "kept-after-neg",
        "verdict"
    );
    for r in rows {
        let verdict = match (
            &r.skipped,
            r.lost.is_empty() && r.kept.is_empty() && r.failures.is_empty(),
        ) {
            (Some(_), _) => "skipped",
            (None, true) => "ok",
            (None, false) => "FAIL",
        };
        let _ = writeln!(
            out,
            "{:<8} {:<26} {:>7} {:>8} {:>8} {:>10} {:>5} {:>17} {:>7}",
            r.store,
            r.fault,
            r.answers,
            r.positive,
            r.negative,
            r.unanswered,
            r.lost.len(),
            r.kept.len(),
            verdict
        );
    }
    for r in rows.iter().filter(|r| r.skipped.is_some()) {
        let _ = writeln!(
            out,
            "skipped {} / {}: {}",
            r.store,
            r.fault,
            r.skipped.as_deref().unwrap_or("")
        );
    }
    println!("{out}");
    let failed: Vec<String> = rows
        .iter()
        .filter(|r| !(r.lost.is_empty() && r.kept.is_empty() && r.failures.is_empty()))
        .map(|r| {
            format!(
                "{} / {}: lost {:?}, kept after a negative answer {:?}; {}",
                r.store,
                r.fault,
                r.lost,
                r.kept,
                r.failures.join("; ")
            )
        })
        .collect();
    assert!(failed.is_empty(), "{out}\n{}", failed.join("\n"));
}

/// The cells of the file stores (everything but PostgreSQL).
fn file_cells() -> Vec<(Kind, Fault)> {
    use Fault::*;
    let mut cells = Vec::new();
    for kind in [Kind::OutDir, Kind::Sqlite, Kind::Queue, Kind::Record] {
        for fault in [
            Crash,
            Moved,
            Replaced,
            Deleted,
            DiskFull,
            TriggerDrop,
            TriggerRefuse,
            TriggerDeletes,
        ] {
            if kind.suffers(fault) {
                cells.push((kind, fault));
            }
        }
    }
    cells
}

fn postgres_cells() -> Vec<(Kind, Fault)> {
    use Fault::*;
    [
        Crash,
        BackendKilled,
        ServerCrashed,
        Revoked,
        TriggerDrop,
        TriggerRefuse,
        TriggerDeletes,
    ]
    .into_iter()
    .map(|f| (Kind::Postgres, f))
    .collect()
}

async fn run(cells: Vec<(Kind, Fault)>, messages: usize, title: &str) {
    let mut rows = Vec::new();
    for (n, (kind, fault)) in cells.into_iter().enumerate() {
        rows.push(
            Cell::new(kind, fault, messages, &format!("M{n}x"))
                .run()
                .await,
        );
    }
    report(title, &rows);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_file_store_keeps_the_two_rules_under_every_fault() {
    run(file_cells(), 24, "store fault matrix: files (CI)").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn postgres_keeps_the_two_rules_under_every_fault() {
    run(postgres_cells(), 24, "store fault matrix: PostgreSQL (CI)").await;
}

/// Opt-in: `cargo test --test it proof::stores -- --ignored --nocapture`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "long: run with --ignored"]
async fn every_store_keeps_the_two_rules_under_every_fault_at_length() {
    let mut cells = file_cells();
    cells.extend(postgres_cells());
    run(cells, 300, "store fault matrix (long)").await;
}
