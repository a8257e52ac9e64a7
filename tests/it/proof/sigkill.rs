//! SIGKILL at random moments: `listen --out-dir` and `--sqlite`, each with and without
//! `--dedupe`, killed under a pipelined control-ID sender (which writes everything pending
//! again after each reconnect) and started again on the same port each time. Every message the
//! sender saw accepted is stored byte for byte; nothing partial is stored; no crash's temporary
//! file survives the restart; with `--dedupe`, after a last pass that sends everything once
//! more, every message is stored exactly once.

use super::receiver::Receiver;
use super::table::{report, Row};
use crate::support::no_payload::MARKER;
use crate::support::peer_wire::message;
use crate::support::send_proc::{finish, Run};
use crate::support::store::{Kept, Store};
use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};
use std::collections::{HashMap, HashSet};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

const LINK: [&str; 14] = [
    "--ack-timeout",
    "3s",
    "--dead-peer-timeout",
    "2s",
    "--backoff-initial",
    "10ms",
    "--backoff-max",
    "100ms",
    "--give-up-after",
    "30s",
    "--drain-timeout",
    "5s",
    "--window",
    "16",
];

async fn run_kills(messages: usize, kills: usize, title: &str) {
    let mut cells = Vec::new();
    for (i, kind) in ["out-dir", "sqlite"].into_iter().enumerate() {
        for (j, dedupe) in [false, true].into_iter().enumerate() {
            let tag = format!("K{i}{j}N");
            let seed = 0x5161_u64 + (i * 2 + j) as u64;
            cells.push(tokio::spawn(async move {
                cell(kind, dedupe, messages, kills, &tag, seed).await
            }));
        }
    }
    let mut rows = Vec::new();
    for c in cells {
        rows.push(c.await.unwrap());
    }
    report(title, &rows);
}

/// What every `send` run of a cell added up to.
#[derive(Default)]
struct Books {
    populations: Vec<u64>,
    records: usize,
    accepted: HashSet<String>,
}

impl Books {
    /// Take one run in: its accounting must close on its own.
    fn add(&mut self, row: &mut Row, run: &Run, sent: usize) {
        let records = run.messages();
        let summary = run.summary();
        let counts = Row::counts(&summary);
        let total: u64 = counts.iter().sum();
        row.check(total as usize == sent && records.len() == sent, || {
            format!(
                "a run of {sent}: {} records, populations {total}",
                records.len()
            )
        });
        if self.populations.is_empty() {
            self.populations = vec![0; counts.len()];
        }
        for (sum, n) in self.populations.iter_mut().zip(counts) {
            *sum += n;
        }
        self.records += records.len();
        for r in records.iter().filter(|r| r["outcome"] == "accepted") {
            self.accepted
                .insert(r["control_id"].as_str().unwrap_or_default().to_string());
        }
    }
}

async fn send(port: u16, batch: &[&(String, Vec<u8>)]) -> Run {
    let mut cmd = tokio::process::Command::new(crate::support::mllp_bin());
    cmd.args(["--log-format", "json", "send", "--host", "127.0.0.1"])
        .args(["--port", &port.to_string(), "--json", "--events"])
        .args(LINK);
    let input = batch.iter().flat_map(|(_, b)| b.clone()).collect();
    finish(cmd, Some(input)).await
}

async fn cell(kind: &str, dedupe: bool, n: usize, kills: usize, tag: &str, seed: u64) -> Row {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::new(kind, dir.path());
    let mut args = store.args();
    if dedupe {
        args.push("--dedupe".into());
    }
    let mut row = Row {
        scenario: format!("SIGKILL x{kills}"),
        mode: format!("{kind}{}", if dedupe { " --dedupe" } else { "" }),
        ..Row::default()
    };
    let sent: Vec<(String, Vec<u8>)> = (1..=n)
        .map(|i| {
            let id = format!("{tag}{i}");
            let bytes = message(&id, MARKER);
            (id, bytes)
        })
        .collect();
    let receiver = Receiver::start(args).await;
    let port = receiver.port();

    // The killer: a random pause, SIGKILL, the same listener again; a crash's temporary files
    // (those present once the process is dead) must be gone once the new one listens.
    let killed = Arc::new(AtomicBool::new(false));
    let killer = {
        let (killed, store) = (killed.clone(), store.clone());
        tokio::spawn(async move {
            let mut rng = SmallRng::seed_from_u64(seed);
            let mut receiver = receiver;
            let mut left_behind = Vec::new();
            for _ in 0..kills {
                tokio::time::sleep(Duration::from_millis(rng.gen_range(20..250))).await;
                receiver.kill().await;
                let crashed = store.temporaries();
                receiver.start_again().await;
                let now = store.temporaries();
                left_behind.extend(crashed.into_iter().filter(|t| now.contains(t)));
            }
            killed.store(true, Ordering::SeqCst);
            (receiver, left_behind)
        })
    };

    // The sender: what is not yet accepted, or everything again once all was, until the
    // killing is over.
    let mut books = Books::default();
    while !killed.load(Ordering::SeqCst) {
        let mut batch: Vec<&(String, Vec<u8>)> = sent
            .iter()
            .filter(|(id, _)| !books.accepted.contains(id))
            .collect();
        if batch.is_empty() {
            batch = sent.iter().collect();
        }
        let run = send(port, &batch).await;
        books.add(&mut row, &run, batch.len());
    }
    let (_receiver, left_behind) = killer.await.unwrap();
    // A last pass, everything once more, with the receiver left alone.
    let all: Vec<&(String, Vec<u8>)> = sent.iter().collect();
    let last = send(port, &all).await;
    books.add(&mut row, &last, n);
    row.check(last.code == 0, || {
        format!("the last pass exited {}: {}", last.code, last.stderr)
    });

    let kept = Kept::of(store.messages());
    row.messages = books.records;
    row.populations = books.populations.clone();
    row.stored = kept.stored();
    row.duplicates = kept.duplicates();
    let bytes: HashMap<&str, &[u8]> = sent.iter().map(|(i, b)| (i.as_str(), &b[..])).collect();
    for id in &books.accepted {
        let ok = bytes.get(id.as_str()).is_some_and(|b| kept.holds(id, b));
        row.check(ok, || format!("{id} accepted but not stored as sent"));
    }
    for (id, copies) in &kept.copies {
        let ok = bytes
            .get(id.as_str())
            .is_some_and(|b| copies.iter().all(|c| c == b));
        row.check(ok, || format!("{id} stored but not as sent (partial?)"));
    }
    row.check(kept.unnamed == 0, || {
        format!("{} stored messages without a control ID", kept.unnamed)
    });
    row.check(left_behind.is_empty(), || {
        format!("temporary files left after a restart: {left_behind:?}")
    });
    let temporaries = store.temporaries();
    row.check(temporaries.is_empty(), || {
        format!("temporary files at the end: {temporaries:?}")
    });
    if dedupe {
        let once = sent
            .iter()
            .filter(|(id, _)| kept.copies.get(id).is_some_and(|c| c.len() == 1))
            .count();
        row.check(once == n, || format!("{once} of {n} stored exactly once"));
    }
    row
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn sigkill_under_a_pipelined_sender_loses_and_repeats_nothing() {
    run_kills(200, 3, "SIGKILL (CI)").await;
}

/// Opt-in: `cargo test --test it proof::sigkill -- --ignored --nocapture`.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
#[ignore = "long: run with --ignored"]
async fn sigkill_fifty_times_under_a_pipelined_sender() {
    run_kills(500, 50, "SIGKILL x50 (long)").await;
}
