//! The run on a paused clock over in-memory links: every message read comes out exactly once,
//! in input order, its fate consistent with what the peer answered, under a
//! peer that resets the link again and again; and the deadline, a stop and an abandon end the
//! run with every message still counted.

use super::test_rig::{self, cid_of, client_options, feed, link, paused, Peer};
use super::{Input, MessageOutcome, Run, RunEvent, RunNote, RunOptions, RunSummary};
use crate::cause::Cause;
use crate::client::{Client, Correlation, MaxRetries, Population};
use crate::input::Message;
use crate::resolve::BoxFuture;
use crate::transport::{Connection, Connector, LinkError, Phase};
use bytes::Bytes;
use proptest::prelude::*;
use std::collections::BTreeSet;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::io::DuplexStream;

mod controls;

/// Peers that answer `AA` by control ID and drop the link on every `reset_every`-th frame
/// (counted over the whole run, so each link gets some work done); `None` answers never.
struct Peers {
    reset_every: Option<u64>,
    frames: Arc<AtomicU64>,
    /// Control IDs answered `AA`.
    accepted: Arc<Mutex<BTreeSet<String>>>,
}

impl Peers {
    fn new(reset_every: Option<u64>) -> Arc<Peers> {
        Arc::new(Peers {
            reset_every,
            frames: Arc::default(),
            accepted: Arc::default(),
        })
    }
}

impl Connector for Peers {
    fn connect(&self) -> BoxFuture<'_, Result<Connection, LinkError>> {
        let (reset_every, frames) = (self.reset_every, self.frames.clone());
        let accepted = self.accepted.clone();
        link(move |theirs| serve(theirs, reset_every, frames, accepted))
    }
}

async fn serve(
    stream: DuplexStream,
    reset_every: Option<u64>,
    frames: Arc<AtomicU64>,
    accepted: Arc<Mutex<BTreeSet<String>>>,
) {
    let mut peer = Peer::new(stream);
    while let Some(payload) = peer.read().await {
        let Some(every) = reset_every else {
            continue; // silent
        };
        if (frames.fetch_add(1, Ordering::Relaxed) + 1).is_multiple_of(every) {
            return; // the link drops with this frame unanswered
        }
        let id = cid_of(&payload);
        if !peer.try_write_ack("AA", &id).await {
            return;
        }
        accepted.lock().unwrap().insert(id);
    }
}

fn message(n: u64) -> Message {
    test_rig::message(n, &n.to_string())
}

/// `count` messages through a bounded channel, as a producer outside the run would.
fn input(count: u64) -> Input {
    feed((1..=count).map(message))
}

/// Drive a run to its end: its outcomes, its notes, its summary.
async fn drive(mut run: Run) -> (Vec<MessageOutcome>, Vec<RunNote>, RunSummary) {
    let (mut outcomes, mut notes) = (vec![], vec![]);
    let all = async {
        while let Some(event) = run.next().await {
            match event {
                RunEvent::Outcome(outcome) => outcomes.push(outcome),
                RunEvent::Note(note) => notes.push(note),
                _ => {}
            }
        }
    };
    // Virtual time: an hour is a hang, not a slow run.
    tokio::time::timeout(Duration::from_secs(3600), all)
        .await
        .expect("the run ends");
    (outcomes, notes, run.finish().await)
}

/// Every message read has exactly one outcome and the totals agree with them.
fn assert_one_fate_each(count: u64, outcomes: &[MessageOutcome], summary: &RunSummary) {
    let seqs: Vec<u64> = outcomes.iter().map(|o| o.item.seq).collect();
    let unique: BTreeSet<u64> = seqs.iter().copied().collect();
    assert_eq!(
        seqs.len(),
        unique.len(),
        "a message came out twice: {seqs:?}"
    );
    assert_eq!(unique, (1..=count).collect(), "a message is missing");
    assert_eq!(summary.totals.read, count);
    assert!(summary.totals.adds_up(), "{:?}", summary.totals);
    for p in Population::ALL {
        let seen = outcomes.iter().filter(|o| o.fate.population() == p).count();
        assert_eq!(summary.totals.count(p), seen as u64, "{p:?}");
    }
    let resent: u64 = outcomes.iter().map(|o| u64::from(o.item.rewrites())).sum();
    assert_eq!(summary.totals.resent, resent);
    // In input order, every one.
    assert!(seqs.windows(2).all(|w| w[0] < w[1]), "{seqs:?}");
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(32))]

    #[test]
    fn every_message_comes_out_once_with_a_fate_the_peer_backs(
        count in 1u64..60,
        reset_every in 2u64..12,
        window in 1usize..8,
        fifo in any::<bool>(),
        at_least_once in any::<bool>(),
        max_resends in 0u32..4,
    ) {
        let peers = Peers::new(Some(reset_every));
        let correlation = if fifo { Correlation::Fifo } else { Correlation::ControlId };
        let run_options = RunOptions::default();
        let (outcomes, _, summary) = paused().block_on(async {
            let mut options = client_options(correlation, window);
            options.max_resends = max_resends;
            options.at_least_once = at_least_once;
            let client = Client::new(peers.clone(), options).unwrap();
            drive(Run::start(client, input(count), run_options)).await
        });
        assert_one_fate_each(count, &outcomes, &summary);
        let answered = peers.accepted.lock().unwrap().clone();
        for o in &outcomes {
            let id = o.item.control_id().unwrap();
            match o.fate.population() {
                // The reference: accepted only what the peer answered AA.
                Population::Accepted => prop_assert!(answered.contains(&id), "{id}"),
                // Control IDs let the client write it again until it is answered, or its
                // budget is spent (rewrites of frames the peer never read spend none).
                Population::UnknownFate if !fifo => {
                    prop_assert!(o.item.rewrites() >= max_resends, "{id}: {:?}", o.item)
                }
                _ if !fifo => prop_assert!(false, "{id}: {:?}", o.fate),
                // FIFO writes again what was written only at least once, within the budget;
                // what was never written waits for the next connection.
                Population::UnknownFate if at_least_once => {
                    prop_assert!(o.item.rewrites() >= max_resends, "{id}: {:?}", o.item)
                }
                Population::UnknownFate => prop_assert!(o.item.attempts() >= 1),
                other => prop_assert!(false, "{id}: {other:?}"),
            }
        }
    }
}

#[test]
fn the_deadline_reports_the_rest_as_run_timeout() {
    let peers = Peers::new(None);
    let (outcomes, notes, summary) = paused().block_on(async {
        let client = Client::new(peers, client_options(Correlation::ControlId, 4)).unwrap();
        let run_options = RunOptions {
            deadline: Some(tokio::time::Instant::now() + Duration::from_secs(2)),
            ..RunOptions::default()
        };
        drive(Run::start(client, input(20), run_options)).await
    });
    assert_one_fate_each(20, &outcomes, &summary);
    assert!(summary.ending.timed_out);
    assert!(matches!(notes[..], [RunNote::TimedOut]), "{notes:?}");
    // The window's four were written and never answered; the rest never left.
    let by = |p| summary.totals.count(p);
    assert_eq!(by(Population::UnknownFate), 4);
    assert_eq!(by(Population::NeverDelivered), 16);
    for o in &outcomes {
        let shown = o.cause.map(Cause::as_str).or(o.fate.contract_cause());
        assert_eq!(shown, Some("run-timeout"), "{o:?}");
    }
}

#[test]
fn a_stop_reads_no_more_and_drains_what_was_written() {
    let peers = Peers::new(Some(u64::MAX));
    let (outcomes, notes, summary): (Vec<MessageOutcome>, Vec<RunNote>, RunSummary) = paused()
        .block_on(async {
            let client = Client::new(peers, client_options(Correlation::ControlId, 4)).unwrap();
            // An endless input: only the stop ends this run.
            let (tx, rx) = tokio::sync::mpsc::channel(4);
            tokio::spawn(async move {
                for n in 1.. {
                    if tx.send(message(n)).await.is_err() {
                        return;
                    }
                }
            });
            let mut run = Run::start(client, Input::from_channel(rx, true), RunOptions::default());
            let (mut outcomes, mut notes) = (vec![], vec![]);
            while let Some(event) = run.next().await {
                match event {
                    RunEvent::Outcome(outcome) => {
                        outcomes.push(outcome);
                        if outcomes.len() == 10 {
                            run.controls().stop();
                        }
                    }
                    RunEvent::Note(note) => notes.push(note),
                    _ => {}
                }
            }
            (outcomes, notes, run.finish().await)
        });
    assert!(matches!(notes[..], [RunNote::Interrupted]), "{notes:?}");
    let read = summary.totals.read;
    assert!(read >= 10, "{read}");
    assert_one_fate_each(read, &outcomes, &summary);
    assert!(summary.ending.interrupted && !summary.ending.abandoned);
    // Drained, not cut off: what was written was answered; only what the stop caught before
    // its first write never left.
    let by = |p| summary.totals.count(p);
    assert!(by(Population::Accepted) >= 10);
    assert_eq!(
        by(Population::Accepted) + by(Population::NeverDelivered),
        read
    );
}

#[test]
fn a_stop_on_a_finite_input_reports_the_rest_as_interrupted() {
    // The peer answers every frame: what was written before the stop ends accepted.
    let peers = Peers::new(Some(u64::MAX));
    let (outcomes, notes, summary) = paused().block_on(async {
        let client = Client::new(peers, client_options(Correlation::ControlId, 4)).unwrap();
        let mut run = Run::start(client, input(500), RunOptions::default());
        let (mut outcomes, mut notes) = (vec![], vec![]);
        while let Some(event) = run.next().await {
            match event {
                RunEvent::Outcome(outcome) => {
                    outcomes.push(outcome);
                    if outcomes.len() == 10 {
                        run.controls().stop();
                    }
                }
                RunEvent::Note(note) => notes.push(note),
                _ => {}
            }
        }
        (outcomes, notes, run.finish().await)
    });
    // Every message of the input, the unread part included, has its one fate.
    assert_one_fate_each(500, &outcomes, &summary);
    assert!(matches!(notes[..], [RunNote::Interrupted]), "{notes:?}");
    assert!(summary.ending.interrupted);
    let by = |p| summary.totals.count(p);
    assert!(by(Population::Accepted) >= 10);
    assert_eq!(
        by(Population::Accepted) + by(Population::NeverDelivered),
        500
    );
    for o in outcomes
        .iter()
        .filter(|o| o.fate.population() == Population::NeverDelivered)
    {
        let shown = o.cause.map(Cause::as_str).or(o.fate.contract_cause());
        assert_eq!(shown, Some("interrupted"), "{o:?}");
    }
}

#[test]
fn an_abandoned_run_still_counts_every_message_it_read() {
    let peers = Peers::new(Some(u64::MAX));
    let summary = paused().block_on(async {
        let client = Client::new(peers, client_options(Correlation::ControlId, 4)).unwrap();
        let mut run = Run::start(client, input(1000), RunOptions::default());
        // The first outcome, then nobody reads the rest.
        while !matches!(run.next().await, Some(RunEvent::Outcome(_))) {}
        run.finish().await
    });
    assert!(summary.totals.adds_up(), "{:?}", summary.totals);
    assert!(summary.ending.abandoned && !summary.ending.interrupted);
    assert!(summary.totals.read < 1000, "{}", summary.totals.read);
}

/// A port nobody listens on.
struct Refusing;

impl Connector for Refusing {
    fn connect(&self) -> BoxFuture<'_, Result<Connection, LinkError>> {
        Box::pin(async {
            Err(LinkError {
                cause: Cause::ConnectionRefused,
                phase: Phase::Connect,
                detail: "refused".into(),
            })
        })
    }
}

#[test]
fn a_client_that_gives_up_leaves_every_message_never_delivered_with_its_cause() {
    let (outcomes, notes, summary) = paused().block_on(async {
        let mut options = client_options(Correlation::ControlId, 4);
        options.reconnect.strategy = Arc::new(MaxRetries {
            inner: options.reconnect.strategy.clone(),
            max: 2,
        });
        let client = Client::new(Arc::new(Refusing), options).unwrap();
        drive(Run::start(client, input(30), RunOptions::default())).await
    });
    assert_one_fate_each(30, &outcomes, &summary);
    assert_eq!(summary.ending.gave_up, Some(Cause::ConnectionRefused));
    assert!(matches!(notes[..], [RunNote::GaveUp(ref f)] if f.cause == Cause::ConnectionRefused));
    for o in &outcomes {
        assert_eq!(o.fate.population(), Population::NeverDelivered, "{o:?}");
        let shown = o.cause.map(Cause::as_str).or(o.fate.contract_cause());
        assert_eq!(shown, Some("connection-refused"), "{o:?}");
    }
}

/// Messages a caller hands over (not split from files) are still searched for framing bytes:
/// one holding VT is never delivered, and the others go through.
#[test]
fn a_callers_message_holding_a_framing_byte_is_never_delivered() {
    use crate::client::{Fate, FateCause};
    let (outcomes, _, summary) = paused().block_on(async {
        let (tx, rx) = tokio::sync::mpsc::channel(4);
        tokio::spawn(async move {
            for n in 1..=3 {
                let mut m = message(n);
                if n == 2 {
                    m.payload =
                        Bytes::from_static(b"MSH|^~\\&|A|B|C|D|1||ADT^A01|M2|P|2.5\r\x0bX\r");
                }
                let _ = tx.send(m).await;
            }
        });
        let client = Client::new(
            Peers::new(Some(1000)),
            client_options(Correlation::ControlId, 2),
        );
        drive(Run::start(
            client.unwrap(),
            Input::from_channel(rx, false),
            RunOptions::default(),
        ))
        .await
    });
    assert_one_fate_each(3, &outcomes, &summary);
    for o in &outcomes {
        if o.item.seq == 2 {
            let refused = Fate::NeverDelivered {
                cause: FateCause::PayloadContainsFramingByte,
            };
            assert_eq!(o.fate, refused);
        } else {
            assert_eq!(o.fate.population(), Population::Accepted, "{:?}", o.fate);
        }
    }
}
