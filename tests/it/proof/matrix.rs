//! The fault matrix: `send` (control-ID correlation into `listen --dedupe`, also over MLLP
//! Release 2, and FIFO) and
//! `soak --host`, each through the fault proxy into a real `listen`, under every way a link
//! breaks and a restart of the receiving process (`--out-dir` and `--sqlite`). Every cell: the
//! accounting closes, every message reported accepted is stored byte for byte, and no
//! duplicate is stored where the resend policy promises none.

use super::receiver::Receiver;
use super::table::{report, Row, POPULATIONS};
use crate::support::fault_proxy::{Fault, FaultProxy, Strike};
use crate::support::no_payload::MARKER;
use crate::support::peer_wire::{control_id, message};
use crate::support::send_proc::{finish, Run};
use crate::support::store::{Kept, Store};
use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

/// The sending side of a cell: `send` with its correlation (and flags), or `soak`.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Sender {
    Send(&'static str),
    Soak,
}

impl Sender {
    fn mode(self) -> String {
        match self {
            Sender::Send(c) => format!("send {c}"),
            Sender::Soak => "soak control-id".into(),
        }
    }

    /// Whether the receiver de-duplicates: the control-ID resend policy relies on it.
    fn dedupe(self) -> bool {
        matches!(self, Sender::Send(flags) if flags.starts_with("control-id"))
            || self == Sender::Soak
    }

    /// MLLP Release 2 on both ends.
    fn release2(self) -> bool {
        matches!(self, Sender::Send(flags) if flags.contains("--mllp2"))
    }

    /// FIFO resends only what was never written, unless told to risk duplicates; control-ID
    /// resends into a receiver that de-duplicates.
    fn promises_no_duplicates(self) -> bool {
        !matches!(self, Sender::Send(flags) if flags.contains("--at-least-once"))
    }
}

/// A restart of the receiving process (its store named) stands beside the link faults, which
/// all run into `--out-dir`.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Scenario {
    Link(Fault),
    Restart(&'static str),
}

impl Scenario {
    fn name(self) -> String {
        match self {
            Scenario::Link(f) => f.name().into(),
            Scenario::Restart(store) => format!("restart ({store})"),
        }
    }

    fn store(self) -> &'static str {
        match self {
            Scenario::Link(_) => "out-dir",
            Scenario::Restart(store) => store,
        }
    }
}

const SCENARIOS: [Scenario; 9] = [
    Scenario::Link(Fault::ResetMidFrame),
    Scenario::Link(Fault::ResetBetweenFrames),
    Scenario::Link(Fault::Blackhole),
    Scenario::Link(Fault::SlowDrip),
    Scenario::Link(Fault::Truncate),
    Scenario::Link(Fault::ResetMidAck),
    Scenario::Link(Fault::TruncateAck),
    Scenario::Restart("out-dir"),
    Scenario::Restart("sqlite"),
];
const SENDERS: [Sender; 5] = [
    Sender::Send("control-id"),
    Sender::Send("control-id --mllp2"),
    Sender::Send("fifo"),
    Sender::Send("fifo --at-least-once"),
    Sender::Soak,
];

/// How big a run is: messages per cell, and where and how often the fault strikes (for a
/// restart: every `at_frame` frames, `connections` times).
#[derive(Clone, Copy)]
struct Size {
    messages: usize,
    strike: Strike,
}

/// Reconnect quickly, notice a half-open link within a second, never give up within a cell.
const LINK: [&str; 14] = [
    "--ack-timeout",
    "3s",
    "--dead-peer-timeout",
    "1s",
    "--backoff-initial",
    "20ms",
    "--backoff-max",
    "200ms",
    "--give-up-after",
    "30s",
    "--drain-timeout",
    "5s",
    "--window",
    "8",
];

async fn run_matrix(size: Size, title: &str) {
    let limit = Arc::new(tokio::sync::Semaphore::new(4));
    let mut cells = Vec::new();
    for (i, scenario) in SCENARIOS.into_iter().enumerate() {
        for (j, sender) in SENDERS.into_iter().enumerate() {
            let limit = limit.clone();
            let tag = format!("M{i}{j}N");
            cells.push(tokio::spawn(async move {
                let _slot = limit.acquire().await.unwrap();
                cell(scenario, sender, size, &tag).await
            }));
        }
    }
    let mut rows = Vec::new();
    for c in cells {
        rows.push(c.await.unwrap());
    }
    report(title, &rows);
}

async fn cell(scenario: Scenario, sender: Sender, size: Size, tag: &str) -> Row {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::new(scenario.store(), dir.path());
    let mut args = store.args();
    if sender.dedupe() {
        args.push("--dedupe".into());
    }
    if sender.release2() {
        args.push("--mllp2".into());
    }
    let receiver = Receiver::start(args).await;
    let upstream = ([127, 0, 0, 1], receiver.port()).into();
    let fault = match scenario {
        Scenario::Link(f) => f,
        Scenario::Restart(_) => Fault::None,
    };
    let proxy = Arc::new(FaultProxy::start(upstream, fault, size.strike).await);

    // The restarts follow the frames the proxy passed on, and stop when the sender is done.
    let done = Arc::new(AtomicBool::new(false));
    let restarts = Arc::new(AtomicUsize::new(0));
    let (restarter, _kept_running) = if matches!(scenario, Scenario::Restart(_)) {
        let (proxy, done, restarts) = (proxy.clone(), done.clone(), restarts.clone());
        let task = tokio::spawn(async move {
            let mut receiver = receiver;
            for n in 1..=size.strike.connections {
                while proxy.frames() < n * size.strike.at_frame && !done.load(Ordering::SeqCst) {
                    tokio::time::sleep(Duration::from_millis(2)).await;
                }
                if done.load(Ordering::SeqCst) {
                    break;
                }
                receiver.restart().await;
                restarts.fetch_add(1, Ordering::SeqCst);
            }
            receiver
        });
        (Some(task), None)
    } else {
        (None, Some(receiver))
    };

    let mut row = Row {
        scenario: scenario.name(),
        mode: sender.mode(),
        messages: size.messages,
        ..Row::default()
    };
    let kept = match sender {
        Sender::Send(flags) => {
            let sent: Vec<(String, Vec<u8>)> = (1..=size.messages)
                .map(|i| {
                    let id = format!("{tag}{i}");
                    let bytes = message(&id, MARKER);
                    (id, bytes)
                })
                .collect();
            let run = send(proxy.addr.port(), flags, &sent).await;
            done.store(true, Ordering::SeqCst);
            let kept = Kept::of(store.messages());
            check_send(&mut row, &run, &sent, &kept);
            kept
        }
        Sender::Soak => {
            let template = message(&format!("{tag}T"), MARKER);
            let file = dir.path().join("template.hl7");
            std::fs::write(&file, &template).unwrap();
            let run = soak(proxy.addr.port(), &file, size.messages).await;
            done.store(true, Ordering::SeqCst);
            let kept = Kept::of(store.messages());
            check_soak(&mut row, &run, &template, &kept);
            kept
        }
    };
    if let Some(r) = restarter {
        let _receiver = r.await.unwrap();
        row.check(restarts.load(Ordering::SeqCst) > 0, || {
            "the receiver was never restarted".into()
        });
    } else {
        row.check(proxy.struck() > 0, || "the fault never struck".into());
    }
    row.stored = kept.stored();
    row.duplicates = kept.duplicates();
    // Every fault here passes; control-ID correlation writes everything pending again on a
    // new connection, so all of it ends accepted.
    let accepted = row.populations.first().copied().unwrap_or(0) as usize;
    let messages = row.messages;
    row.check(!sender.dedupe() || accepted == messages, || {
        format!("{accepted} of {messages} accepted after a passing fault")
    });
    let duplicates = row.duplicates;
    row.check(duplicates == 0 || !sender.promises_no_duplicates(), || {
        format!("{duplicates} duplicates stored")
    });
    row.check(kept.unnamed == 0, || {
        format!("{} stored messages without a control ID", kept.unnamed)
    });
    row
}

/// `send --correlate FLAGS`, FLAGS being the correlation and any flags after it.
async fn send(port: u16, flags: &str, sent: &[(String, Vec<u8>)]) -> Run {
    let mut cmd = tokio::process::Command::new(crate::support::mllp_bin());
    cmd.args(["--log-format", "json", "send", "--host", "127.0.0.1"])
        .args(["--port", &port.to_string(), "--json", "--events"])
        .arg("--correlate")
        .args(flags.split(' '))
        .args(LINK);
    let input = sent.iter().flat_map(|(_, b)| b.clone()).collect();
    finish(cmd, Some(input)).await
}

async fn soak(port: u16, template: &std::path::Path, messages: usize) -> Run {
    let mut cmd = tokio::process::Command::new(crate::support::mllp_bin());
    cmd.args(["--log-format", "json", "soak", "--host", "127.0.0.1"])
        .args(["--port", &port.to_string(), "--json", "--live", "never"])
        .args(["--template", template.to_str().unwrap()])
        .args(["--messages", &messages.to_string(), "--seed", "7"])
        .args(LINK);
    finish(cmd, None).await
}

/// Every message in exactly one fate, the records agreeing with the summary, and every
/// accepted message stored as it was sent.
fn check_send(row: &mut Row, run: &Run, sent: &[(String, Vec<u8>)], kept: &Kept) {
    let records = run.messages();
    let summary = run.summary();
    row.populations = Row::counts(&summary);
    let total: u64 = row.populations.iter().sum();
    row.check(total as usize == sent.len(), || {
        format!("populations add up to {total}, not {}", sent.len())
    });
    row.check(summary["messages"] == sent.len(), || {
        format!("summary counts {} messages", summary["messages"])
    });
    let mut fates: HashMap<String, usize> = HashMap::new();
    let mut by_outcome: HashMap<String, u64> = HashMap::new();
    for r in &records {
        let id = r["control_id"].as_str().unwrap_or_default().to_string();
        *fates.entry(id).or_default() += 1;
        let outcome = r["outcome"].as_str().unwrap_or("?").replace('-', "_");
        *by_outcome.entry(outcome).or_default() += 1;
    }
    for (p, n) in POPULATIONS.iter().zip(row.populations.clone()) {
        let listed = by_outcome.remove(*p).unwrap_or(0);
        row.check(listed == n, || {
            format!("{listed} records say {p}, the summary {n}")
        });
    }
    row.check(by_outcome.is_empty(), || {
        format!("records of no known outcome: {by_outcome:?}")
    });
    let bytes: HashMap<&str, &[u8]> = sent.iter().map(|(i, b)| (i.as_str(), &b[..])).collect();
    for (id, _) in sent {
        let n = fates.get(id).copied().unwrap_or(0);
        row.check(n == 1, || format!("{id} has {n} fates"));
    }
    for r in records.iter().filter(|r| r["outcome"] == "accepted") {
        let id = r["control_id"].as_str().unwrap_or_default();
        let ok = bytes.get(id).is_some_and(|b| kept.holds(id, b));
        row.check(ok, || {
            format!("{id} reported accepted but not stored as sent")
        });
    }
    for (id, copies) in &kept.copies {
        let ok = bytes
            .get(id.as_str())
            .is_some_and(|b| copies.iter().all(|c| c == b));
        row.check(ok, || format!("{id} stored but not as sent"));
    }
}

/// The report's accounting closed and agrees with the store: at least as many messages stored
/// as accepted, each the template with only its MSH-7 and MSH-10 filled in.
fn check_soak(row: &mut Row, run: &Run, template: &[u8], kept: &Kept) {
    let report: serde_json::Value = serde_json::from_str(run.stdout.trim())
        .unwrap_or_else(|_| panic!("soak report is not JSON: {}", run.stdout));
    row.populations = Row::counts(&report);
    let total: u64 = row.populations.iter().sum();
    row.check(report["accounting_ok"] == true, || {
        "the report's accounting did not close".into()
    });
    row.check(
        report["generated"] == row.messages && total as usize == row.messages,
        || format!("generated {}, populations {total}", report["generated"]),
    );
    let accepted = row.populations[0] as usize;
    row.check(kept.copies.len() >= accepted, || {
        format!("{accepted} accepted, {} stored", kept.copies.len())
    });
    for (id, copies) in &kept.copies {
        let ok = copies
            .iter()
            .all(|c| as_template(c) == as_template(template));
        row.check(ok && control_id(&copies[0]).as_deref() == Some(id), || {
            format!("{id} stored but not as generated")
        });
    }
}

/// The message with MSH-7 and MSH-10 emptied: what every message of one template shares.
fn as_template(message: &[u8]) -> Vec<u8> {
    let end = message
        .iter()
        .position(|&b| b == b'\r')
        .unwrap_or(message.len());
    let mut fields: Vec<&[u8]> = message[..end].split(|&b| b == b'|').collect();
    for i in [6, 9] {
        if let Some(f) = fields.get_mut(i) {
            *f = b"";
        }
    }
    [fields.join(&b'|'), message[end..].to_vec()].concat()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn every_fault_keeps_the_books_and_the_store() {
    let size = Size {
        messages: 40,
        // Frame 12: an ACK cut short names message 1.
        strike: Strike {
            at_frame: 12,
            connections: 2,
        },
    };
    run_matrix(size, "fault matrix (CI)").await;
}

/// Opt-in: `cargo test --test it proof::matrix -- --ignored --nocapture`.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
#[ignore = "long: run with --ignored"]
async fn every_fault_keeps_the_books_and_the_store_at_length() {
    let size = Size {
        messages: 1000,
        // Frame 40 (and every 40th, for the restarts): an ACK cut short names message 4.
        strike: Strike {
            at_frame: 40,
            connections: 20,
        },
    };
    run_matrix(size, "fault matrix (long)").await;
}
