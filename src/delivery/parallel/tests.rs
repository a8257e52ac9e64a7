//! The parallel run on a paused clock over in-memory links whose peer records every frame it
//! reads and drops the link now and then with frames unanswered: every message read comes out
//! exactly once, the links' shares add up to the whole, busy keys spread over the links, and at
//! the receiver no message of a key ever arrives after a later message of that key (so per-key
//! order holds across reconnects).

use super::{LinkEvent, ParallelRun, ParallelSummary};
use crate::client::{Client, ClientOptions, Correlation, Population};
use crate::delivery::test_rig::{self, cid_of, client_options, feed, link, paused, Peer};
use crate::delivery::{Input, MessageOutcome, OrderKey, RunEvent, RunOptions};
use crate::framing::Decoded;
use crate::input::Message;
use crate::resolve::BoxFuture;
use crate::transport::{Connection, Connector, LinkError};
use proptest::prelude::*;
use std::collections::{BTreeMap, BTreeSet};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::io::{AsyncReadExt, DuplexStream};
use tokio_util::codec::Decoder;

/// One peer behind every link: answers `AA` by control ID; on every `drop_every`-th frame it
/// reads (over all links) it also reads what else has arrived, answers none of it, and drops
/// the link. Every frame read is logged, in the order read.
struct Peers {
    drop_every: u64,
    frames: Arc<AtomicU64>,
    log: Arc<Mutex<Vec<u64>>>,
}

impl Connector for Peers {
    fn connect(&self) -> BoxFuture<'_, Result<Connection, LinkError>> {
        let (every, frames, log) = (self.drop_every, self.frames.clone(), self.log.clone());
        link(move |theirs| serve(theirs, every, frames, log))
    }
}

fn number(payload: &[u8]) -> u64 {
    cid_of(payload)[1..].parse().unwrap()
}

async fn serve(
    stream: DuplexStream,
    every: u64,
    frames: Arc<AtomicU64>,
    log: Arc<Mutex<Vec<u64>>>,
) {
    let mut peer = Peer::new(stream);
    while let Some(payload) = peer.read().await {
        let n = number(&payload);
        log.lock().unwrap().push(n);
        if (frames.fetch_add(1, Ordering::Relaxed) + 1).is_multiple_of(every) {
            // Whatever else came with it is read too, and lost with the link.
            tokio::time::sleep(Duration::from_millis(5)).await;
            let more = peer.stream.read_buf(&mut peer.buf);
            let _ = tokio::time::timeout(Duration::from_millis(1), more).await;
            while let Ok(Some(Decoded::Frame(frame))) = peer.codec.decode(&mut peer.buf) {
                log.lock().unwrap().push(number(&frame.payload));
            }
            return;
        }
        if !peer.try_write_ack("AA", &format!("M{n}")).await {
            return;
        }
    }
}

/// Message `n` of patient `key`.
fn message(n: u64, key: u64) -> Message {
    test_rig::message(n, &format!("P{key}^^^H^MR"))
}

fn input(keys: Vec<u64>) -> Input {
    feed(
        keys.into_iter()
            .enumerate()
            .map(|(i, key)| message(i as u64 + 1, key)),
    )
}

fn client(peers: Arc<Peers>) -> Client {
    let options = ClientOptions {
        max_resends: 1000,
        ..client_options(Correlation::ControlId, 16)
    };
    Client::new(peers, options).unwrap()
}

/// Each outcome with the link it came from.
type Outcomes = Vec<(Option<usize>, MessageOutcome)>;

async fn drive(mut run: ParallelRun) -> (Outcomes, ParallelSummary) {
    let mut outcomes = vec![];
    let all = async {
        while let Some(LinkEvent { link, event }) = run.next().await {
            if let RunEvent::Outcome(outcome) = event {
                outcomes.push((link, outcome));
            }
        }
    };
    tokio::time::timeout(Duration::from_secs(3600), all)
        .await
        .expect("the run ends");
    (outcomes, run.finish().await)
}

/// Runs `keys` (one message each, numbered from 1) over `links` links keyed by PID-3.1,
/// dropping every `drop_every`-th frame's link; returns the outcomes, summary and arrival log.
fn run(
    keys: &[u64],
    links: usize,
    key: OrderKey,
    drop_every: u64,
) -> (Outcomes, ParallelSummary, Vec<u64>) {
    paused().block_on(async {
        let peers = Arc::new(Peers {
            drop_every,
            frames: Arc::default(),
            log: Arc::default(),
        });
        let clients = (0..links).map(|_| client(peers.clone())).collect();
        let run = ParallelRun::start(clients, input(keys.to_vec()), RunOptions::default(), key);
        let (outcomes, summary) = drive(run).await;
        let log = peers.log.lock().unwrap().clone();
        (outcomes, summary, log)
    })
}

fn pid(key: &str) -> OrderKey {
    key.parse().unwrap()
}

/// For each key, the numbers of its messages in the order the peer read them.
fn arrivals_by_key(keys: &[u64], log: &[u64]) -> BTreeMap<u64, Vec<u64>> {
    let mut by_key: BTreeMap<u64, Vec<u64>> = BTreeMap::new();
    for &n in log {
        by_key.entry(keys[n as usize - 1]).or_default().push(n);
    }
    by_key
}

fn check(
    keys: &[u64],
    links: usize,
    outcomes: &[(Option<usize>, MessageOutcome)],
    summary: &ParallelSummary,
) {
    let count = keys.len() as u64;
    let seqs: Vec<u64> = outcomes.iter().map(|(_, o)| o.item.seq).collect();
    let unique: BTreeSet<u64> = seqs.iter().copied().collect();
    assert_eq!(seqs.len(), unique.len(), "a message came out twice");
    assert_eq!(unique, (1..=count).collect(), "a message is missing");
    // Renumbered in input order: seq n is message n.
    for (_, o) in outcomes {
        assert_eq!(o.item.index, o.item.seq);
    }
    let run = &summary.run;
    assert_eq!(run.totals.read, count);
    assert!(run.totals.adds_up(), "{:?}", run.totals);
    assert_eq!(summary.links.len(), links);
    for p in Population::ALL {
        let seen = outcomes
            .iter()
            .filter(|(_, o)| o.fate.population() == p)
            .count() as u64;
        assert_eq!(run.totals.count(p), seen, "{p:?}");
        let shares: u64 = summary.links.iter().map(|l| l.totals.count(p)).sum();
        assert_eq!(shares, seen, "{p:?} by link");
    }
    let read: u64 = summary.links.iter().map(|l| l.totals.read).sum();
    assert_eq!(read, count);
    // Every outcome names the link of its key's share.
    for (link, o) in outcomes {
        let l = link.expect("an outcome names its link");
        assert!(l < links);
        assert!(summary.links[l].totals.read > 0, "{}", o.item.seq);
    }
}

#[test]
fn every_message_once_and_per_key_order_at_the_receiver_under_drops() {
    let keys: Vec<u64> = (0..300).map(|i| (i * 7) % 5).collect();
    let (outcomes, summary, log) = run(&keys, 3, pid("PID-3.1"), 11);
    check(&keys, 3, &outcomes, &summary);
    assert_eq!(summary.run.totals.count(Population::Accepted), 300);
    assert!(summary.run.totals.reconnects > 0, "the peer dropped links");
    for (key, seen) in arrivals_by_key(&keys, &log) {
        assert!(seen.windows(2).all(|w| w[0] <= w[1]), "key {key}: {seen:?}");
    }
}

#[test]
fn a_few_busy_keys_take_a_link_each() {
    // Three patients taking turns, three links: each link carries one patient's share, where a
    // hash of the values could put two of them on one link.
    let keys: Vec<u64> = (0..300).map(|i| i % 3).collect();
    let (outcomes, summary, log) = run(&keys, 3, pid("PID-3"), u64::MAX);
    check(&keys, 3, &outcomes, &summary);
    let shares: Vec<u64> = summary.links.iter().map(|l| l.totals.read).collect();
    assert_eq!(shares, [100, 100, 100]);
    for (key, seen) in arrivals_by_key(&keys, &log) {
        assert!(seen.windows(2).all(|w| w[0] < w[1]), "key {key}: {seen:?}");
    }
}

#[test]
fn without_a_key_every_link_takes_a_share() {
    let keys = vec![0; 400];
    let (outcomes, summary, _) = run(&keys, 4, OrderKey::None, u64::MAX);
    check(&keys, 4, &outcomes, &summary);
    assert!(
        summary.links.iter().all(|l| l.totals.read > 0),
        "{:?}",
        summary.links
    );
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(24))]
    /// Any keys, any number of links, any drop rate: one outcome each, shares that add up,
    /// and no key's message read by the peer after a later one of the same key.
    #[test]
    fn routing_keeps_per_key_order(
        keys in proptest::collection::vec(0u64..6, 1..120),
        links in 1usize..5,
        drop_every in 3u64..20,
    ) {
        let (outcomes, summary, log) = run(&keys, links, pid("PID-3.1"), drop_every);
        check(&keys, links, &outcomes, &summary);
        for (key, seen) in arrivals_by_key(&keys, &log) {
            prop_assert!(seen.windows(2).all(|w| w[0] <= w[1]), "key {}: {:?}", key, seen);
        }
    }
}
