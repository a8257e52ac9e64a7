//! Engines as they are, scripted: receivers that take one frame per read, answer one message
//! per connection, close after every k-th answer, never echo MSH-10, or are not MLLP at all.
//! A property test runs generated mixes of those habits.

use super::harness::*;
use crate::client::*;
use proptest::prelude::*;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::sync::mpsc;
use Population::*;

/// What the scripted receiver does with what it reads.
#[derive(Debug, Clone, Copy)]
struct Engine {
    /// Answers only the first frame of each read and drops the rest of it.
    one_per_read: bool,
    /// Closes the connection after this many answers.
    close_after: Option<u32>,
    /// What its MSA-2 says.
    msa2: Msa2,
}

#[derive(Debug, Clone, Copy)]
enum Msa2 {
    Echo,
    Constant,
    Empty,
}

const PIPELINING: Engine = Engine {
    one_per_read: false,
    close_after: None,
    msa2: Msa2::Echo,
};

/// Every frame the receiver read, across connections, in order (control IDs).
type Seen = Arc<Mutex<Vec<String>>>;

/// Serve every connection of the rig as `engine` does, in a task of its own.
fn serve(rig: &mut Rig, engine: Engine) -> Seen {
    let seen = Seen::default();
    let mut peers = std::mem::replace(&mut rig.peers, mpsc::unbounded_channel().1);
    let log = seen.clone();
    tokio::spawn(async move {
        while let Some(mut peer) = peers.recv().await {
            let mut answers = 0;
            'link: while let Some(chunk) = peer.read_chunk().await {
                log.lock().unwrap().extend(chunk.iter().map(|p| cid_of(p)));
                let take = if engine.one_per_read { 1 } else { chunk.len() };
                for frame in &chunk[..take] {
                    let cid = match engine.msa2 {
                        Msa2::Echo => cid_of(frame),
                        Msa2::Constant => "WRONG".to_string(),
                        Msa2::Empty => String::new(),
                    };
                    if !peer.try_write_ack("AA", &cid).await {
                        break 'link;
                    }
                    answers += 1;
                    if engine.close_after == Some(answers) {
                        break 'link;
                    }
                }
            }
        }
    });
    seen
}

/// Reconnect at once, every time.
#[derive(Debug)]
struct AtOnce;

impl RetryStrategy for AtOnce {
    fn next_delay(&self, ctx: &RetryContext) -> Option<Duration> {
        (ctx.class == crate::cause::Class::Transient).then_some(Duration::from_millis(100))
    }
}

fn options(correlation: Correlation, pipeline: bool) -> ClientOptions {
    ClientOptions {
        correlation,
        pipeline,
        ack_timeout: Duration::from_secs(30),
        window: Window {
            count: Some(1000),
            bytes: None,
        },
        on_backpressure: OnBackpressure::Wait,
        reconnect: Reconnect {
            enabled: true,
            strategy: Arc::new(AtOnce),
        },
        ..Default::default()
    }
}

fn ids(n: usize) -> Vec<String> {
    (1..=n).map(|i| format!("M{i:05}")).collect()
}

/// Each ID's first appearance comes in input order.
fn first_writes_in_order(seen: &Seen) -> bool {
    let seen = seen.lock().unwrap();
    let mut firsts: Vec<&String> = vec![];
    for id in seen.iter() {
        if !firsts.contains(&id) {
            firsts.push(id);
        }
    }
    firsts.windows(2).all(|w| w[0] < w[1])
}

struct Ran {
    fates: Vec<Fate>,
    writes: Vec<u32>,
    warnings: Vec<&'static str>,
    seen: Seen,
}

async fn run(engine: Engine, options: ClientOptions, n: usize) -> Ran {
    let mut rig = rig(vec![], options);
    let seen = serve(&mut rig, engine);
    // Handed over together, so the first write carries many frames.
    let mut handles = rig
        .client
        .send_many(ids(n).iter().map(|id| msg(id, "")))
        .await;
    let mut fates = vec![];
    let mut writes = vec![];
    for h in &mut handles {
        fates.push((&mut *h).await);
        writes.push(h.writes());
    }
    assert_accounts(&rig.client, &fates);
    let warnings = warnings(&rig.drain_events());
    Ran {
        fates,
        writes,
        warnings,
        seen,
    }
}

fn all_accepted(fates: &[Fate]) -> bool {
    fates.iter().all(|f| f.population() == Accepted)
}

#[tokio::test(start_paused = true)]
async fn a_receiver_taking_one_frame_per_read_gets_everything_one_at_a_time() {
    let engine = Engine {
        one_per_read: true,
        ..PIPELINING
    };
    let ran = run(engine, options(Correlation::ControlId, true), 200).await;
    assert!(all_accepted(&ran.fates), "{:?}", populations(&ran.fates));
    assert!(
        ran.warnings.contains(&"MLLP_PEER_NO_PIPELINING"),
        "{:?} {:?}",
        ran.warnings,
        ran.writes
    );
    assert!(first_writes_in_order(&ran.seen));
    // What it dropped went once more, within the resend budget.
    assert!(ran.writes.iter().all(|&w| (1..=2).contains(&w)));
}

#[tokio::test(start_paused = true)]
async fn a_receiver_answering_one_message_per_connection_gets_everything() {
    for (correlation, pipeline) in [
        (Correlation::ControlId, true),
        (Correlation::ControlId, false),
        (Correlation::Fifo, true),
        (Correlation::Fifo, false),
    ] {
        let engine = Engine {
            close_after: Some(1),
            ..PIPELINING
        };
        let ran = run(engine, options(correlation, pipeline), 40).await;
        let label = format!("{correlation:?} pipeline {pipeline}");
        assert!(all_accepted(&ran.fates), "{label}: {:?}", ran.fates);
        assert!(first_writes_in_order(&ran.seen), "{label}");
        // Once the habit is known, nothing more is written behind an answer.
        let rewritten = ran.writes.iter().filter(|&&w| w > 1).count();
        assert!(
            rewritten <= 1 + usize::from(pipeline) * 39,
            "{label}: {:?}",
            ran.writes
        );
        assert_eq!(
            ran.warnings.contains(&"MLLP_PEER_NO_PIPELINING"),
            pipeline,
            "{label}"
        );
    }
}

#[tokio::test(start_paused = true)]
async fn a_receiver_closing_after_every_seventh_answer_gets_everything_pipelined() {
    let engine = Engine {
        close_after: Some(7),
        ..PIPELINING
    };
    let mut o = options(Correlation::ControlId, true);
    o.window.count = Some(64);
    let ran = run(engine, o, 100).await;
    assert!(all_accepted(&ran.fates), "{:?}", populations(&ran.fates));
    // Frames behind the seventh answer were never read: their rewrites spend no budget.
    assert!(!ran.warnings.contains(&"MLLP_PEER_NO_PIPELINING"));
    assert!(first_writes_in_order(&ran.seen));
}

#[tokio::test(start_paused = true)]
async fn a_pipelining_receiver_is_left_pipelining() {
    let ran = run(PIPELINING, options(Correlation::ControlId, true), 100).await;
    assert!(all_accepted(&ran.fates));
    assert!(ran.writes.iter().all(|&w| w == 1));
    assert!(ran.warnings.is_empty(), "{:?}", ran.warnings);
}

#[tokio::test(start_paused = true)]
async fn acks_that_never_echo_msh10_stop_the_link_at_once() {
    for msa2 in [Msa2::Constant, Msa2::Empty] {
        let engine = Engine { msa2, ..PIPELINING };
        let started = tokio::time::Instant::now();
        let ran = run(engine, options(Correlation::ControlId, true), 5).await;
        assert!(
            started.elapsed() < Duration::from_secs(30),
            "{msa2:?}: waited"
        );
        for fate in &ran.fates {
            assert_eq!(fate.population(), UnknownFate, "{msa2:?}");
            assert_eq!(fate.cause(), Some("ack-control-id-mismatch"), "{msa2:?}");
        }
    }
}

/// What the client makes of a peer that speaks another protocol.
async fn foreign(answer: impl AsyncFnOnce(&mut Peer)) -> (Fate, Duration) {
    let mut rig = rig(vec![], options(Correlation::ControlId, true));
    let mut peer = rig.peer().await;
    let started = tokio::time::Instant::now();
    let handle = rig.client.send(msg("1", "")).await;
    answer(&mut peer).await;
    let fate = handle.await;
    (fate, started.elapsed())
}

#[tokio::test(start_paused = true)]
async fn an_http_server_is_recognised_whether_it_answers_at_once_or_at_a_line_end() {
    let reply = b"HTTP/1.0 400 Bad request\r\nContent-Type: text/html\r\n\r\n";
    let (at_once, _) = foreign(async |peer: &mut Peer| {
        peer.read().await;
        peer.write_raw(reply).await;
    })
    .await;
    let (at_line_end, took) = foreign(async |peer: &mut Peer| {
        // Python's http.server reads a request line up to its LF before it answers.
        peer.read_line().await;
        peer.write_raw(b"<!DOCTYPE HTML>\n<html><body>Bad request</body></html>\n")
            .await;
    })
    .await;
    assert!(took < Duration::from_secs(30), "waited the ACK timeout");
    for fate in [at_once, at_line_end] {
        assert_eq!(fate.population(), NeverDelivered, "{fate}");
        assert_eq!(fate.contract_cause(), Some("framing-fatal"));
        assert_eq!(fate.cause_detail(), Some("http"));
    }
}

#[tokio::test(start_paused = true)]
async fn an_ssh_banner_is_recognised_at_once() {
    let (fate, took) = foreign(async |peer: &mut Peer| {
        peer.read().await;
        peer.write_raw(b"SSH-2.0-OpenSSH_9.6\r\n").await;
    })
    .await;
    assert!(took < Duration::from_secs(1));
    assert_eq!(fate.contract_cause(), Some("framing-fatal"));
    assert_eq!(fate.cause_detail(), Some("ssh"));
}

fn engine() -> impl Strategy<Value = Engine> {
    (any::<bool>(), prop::option::of(1u32..=9)).prop_map(|(one_per_read, close_after)| Engine {
        one_per_read,
        close_after,
        msa2: Msa2::Echo,
    })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    /// Whatever the receiver's habits and the window, while reconnects succeed: every message
    /// gets exactly one fate, none is never-delivered, by control ID every one is accepted, and
    /// the receiver sees each message first in input order.
    #[test]
    fn every_engine_habit_gets_every_message_through(
        engine in engine(),
        fifo in any::<bool>(),
        pipeline in any::<bool>(),
        window in prop_oneof![Just(1000usize), 1usize..=8],
        n in 1usize..=30,
    ) {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .start_paused(true)
            .build()
            .unwrap();
        let correlation = if fifo { Correlation::Fifo } else { Correlation::ControlId };
        let mut options = options(correlation, pipeline);
        options.window.count = Some(window);
        let ran = rt.block_on(run(engine, options, n));
        prop_assert_eq!(ran.fates.len(), n);
        prop_assert!(ran.fates.iter().all(|f| f.population() != NeverDelivered), "{:?}", ran.fates);
        if !fifo {
            prop_assert!(all_accepted(&ran.fates), "{:?}", populations(&ran.fates));
        }
        prop_assert!(first_writes_in_order(&ran.seen));
    }
}

#[tokio::test(start_paused = true)]
async fn a_one_frame_per_read_receiver_behind_a_small_window_gets_everything() {
    // The frame dropped with the first is followed by one answered alone: that later answer
    // proves the drop as well as an earlier one would.
    let engine = Engine {
        one_per_read: true,
        ..PIPELINING
    };
    for correlation in [Correlation::ControlId, Correlation::Fifo] {
        let mut options = options(correlation, true);
        options.window.count = Some(2);
        let ran = run(engine, options, 4).await;
        assert!(all_accepted(&ran.fates), "{correlation:?}: {:?}", ran.fates);
        assert!(ran.warnings.contains(&"MLLP_PEER_NO_PIPELINING"));
        assert!(first_writes_in_order(&ran.seen));
    }
}
