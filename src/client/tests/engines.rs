//! Engines as they are, scripted: receivers that take one frame per read, answer one message
//! per connection, close after every k-th answer, drop the connection at one message they
//! cannot take (a poison message), repeat earlier ACKs, never echo MSH-10, or are not MLLP at
//! all. A property test runs generated mixes of those habits in both correlations.

use super::harness::*;
use crate::client::*;
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
    /// Drops the connection unanswered whenever it takes this message (by its number, from 1)
    /// in hand, with whatever else it read.
    close_on: Option<usize>,
    /// Replies ahead of its answers, naming messages answered before.
    repeats: Repeats,
    /// From this connection on (from 1), an HTTP server answers instead: what it reads is
    /// kept nowhere.
    http_from: Option<usize>,
    /// What its MSA-2 says.
    msa2: Msa2,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Repeats {
    Never,
    /// Before each answer, the last answer it gave on this connection again.
    OnLink,
    /// As `OnLink`, and before the first answer of a connection the last one of the connection
    /// before: a late ACK, the only reply so far while one message is in flight. FIFO tells it
    /// from an answer because it names a message already settled.
    Late,
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
    close_on: None,
    repeats: Repeats::Never,
    http_from: None,
    msa2: Msa2::Echo,
};

/// Control IDs in order, across connections: every frame the receiver read, or answered.
type Seen = Arc<Mutex<Vec<String>>>;

/// Serve every connection of the rig as `engine` does, in a task of its own; what it read and
/// what it answered (not counting repeats).
fn serve(rig: &mut Rig, engine: Engine) -> (Seen, Seen) {
    let (seen, answered) = (Seen::default(), Seen::default());
    let mut peers = std::mem::replace(&mut rig.peers, mpsc::unbounded_channel().1);
    let (log, answers_log) = (seen.clone(), answered.clone());
    tokio::spawn(async move {
        // The last control ID answered, on any connection.
        let mut last: Option<String> = None;
        let mut connection = 0;
        while let Some(mut peer) = peers.recv().await {
            connection += 1;
            if engine.http_from.is_some_and(|from| connection >= from) {
                if peer.read_chunk().await.is_some() {
                    peer.write_raw(b"HTTP/1.1 400 Bad Request\r\n\r\n").await;
                }
                continue;
            }
            let (mut answers, mut last_here) = (0, None::<String>);
            'link: while let Some(chunk) = peer.read_chunk().await {
                log.lock().unwrap().extend(chunk.iter().map(|p| cid_of(p)));
                let take = if engine.one_per_read { 1 } else { chunk.len() };
                for frame in &chunk[..take] {
                    let repeat = match (engine.repeats, &last_here) {
                        (Repeats::Never, _) => None,
                        (_, Some(here)) => Some(here.clone()),
                        (Repeats::Late, None) => last.clone(),
                        (Repeats::OnLink, None) => None,
                    };
                    if let Some(earlier) = repeat {
                        if !peer.try_write_ack("AA", &earlier).await {
                            break 'link;
                        }
                    }
                    // A repeat may go before the message it chokes on.
                    if engine.close_on.is_some_and(|n| cid_of(frame) == id(n)) {
                        break 'link;
                    }
                    let cid = match engine.msa2 {
                        Msa2::Echo => cid_of(frame),
                        Msa2::Constant => "WRONG".to_string(),
                        Msa2::Empty => String::new(),
                    };
                    if !peer.try_write_ack("AA", &cid).await {
                        break 'link;
                    }
                    answers_log.lock().unwrap().push(cid_of(frame));
                    (last, last_here) = (Some(cid.clone()), Some(cid));
                    answers += 1;
                    if engine.close_after == Some(answers) {
                        break 'link;
                    }
                }
            }
        }
    });
    (seen, answered)
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

/// The control ID of message `n` (from 1).
fn id(n: usize) -> String {
    format!("M{n:05}")
}

fn ids(n: usize) -> Vec<String> {
    (1..=n).map(id).collect()
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
    answered: Seen,
}

async fn run(engine: Engine, options: ClientOptions, n: usize) -> Ran {
    let mut rig = rig(vec![], options);
    let (seen, answered) = serve(&mut rig, engine);
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
        answered,
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

/// No message read twice by the receiver.
fn read_once(seen: &Seen) -> bool {
    let seen = seen.lock().unwrap();
    let mut ids: Vec<&String> = seen.iter().collect();
    ids.sort();
    ids.windows(2).all(|w| w[0] != w[1])
}

#[tokio::test(start_paused = true)]
async fn a_receiver_answering_one_message_per_connection_gets_everything_by_control_id() {
    let engine = Engine {
        close_after: Some(1),
        ..PIPELINING
    };
    for pipeline in [true, false] {
        let ran = run(engine, options(Correlation::ControlId, pipeline), 40).await;
        assert!(
            all_accepted(&ran.fates),
            "pipeline {pipeline}: {:?}",
            ran.fates
        );
        assert!(first_writes_in_order(&ran.seen), "pipeline {pipeline}");
        // Once the habit is known, nothing more is written behind an answer: before, what went
        // behind the first answer (all of it, pipelined) and behind the careful connection's.
        let rewritten = ran.writes.iter().filter(|&&w| w > 1).count();
        let most = if pipeline { 39 } else { 2 };
        assert!(rewritten <= most, "pipeline {pipeline}: {:?}", ran.writes);
        let said = ran.warnings.contains(&"MLLP_PEER_NO_PIPELINING");
        assert_eq!(said, pipeline, "pipeline {pipeline}");
    }
}

#[tokio::test(start_paused = true)]
async fn in_fifo_a_receiver_answering_one_message_per_connection_gets_each_message_once() {
    let engine = Engine {
        close_after: Some(1),
        ..PIPELINING
    };
    // One at a time, each answer is followed by a wait for the close: nothing is lost.
    let ran = run(engine, options(Correlation::Fifo, false), 40).await;
    assert!(all_accepted(&ran.fates), "{:?}", ran.fates);
    assert!(ran.writes.iter().all(|&w| w == 1), "{:?}", ran.writes);
    assert!(!ran.warnings.contains(&"MLLP_PEER_NO_PIPELINING"));
    // Pipelined, the frames written behind the first answer may have been read: they end
    // unknown fate, never written again; the careful connection after it finds the habit.
    let mut o = options(Correlation::Fifo, true);
    o.window.count = Some(4);
    let ran = run(engine, o, 40).await;
    let unknown: Vec<usize> = (0..40)
        .filter(|&i| ran.fates[i].population() == UnknownFate)
        .collect();
    assert_eq!(unknown, [1, 2, 3], "{:?}", populations(&ran.fates));
    assert_eq!(ran.fates[1].cause(), Some("in-flight-orphan"));
    assert!(read_once(&ran.seen));
    assert!(ran.warnings.contains(&"MLLP_PEER_NO_PIPELINING"));
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

#[tokio::test(start_paused = true)]
async fn a_one_frame_per_read_receiver_behind_a_small_window_gets_everything() {
    // The frame dropped with the first is followed by one answered alone: that later answer
    // proves the drop as well as an earlier one would.
    let engine = Engine {
        one_per_read: true,
        ..PIPELINING
    };
    for (correlation, at_least_once) in [
        (Correlation::ControlId, false),
        (Correlation::Fifo, false),
        (Correlation::Fifo, true),
    ] {
        let label = format!("{correlation:?} at least once {at_least_once}");
        let mut options = options(correlation, true);
        options.window.count = Some(2);
        options.at_least_once = at_least_once;
        let ran = run(engine, options, 4).await;
        assert!(ran.warnings.contains(&"MLLP_PEER_NO_PIPELINING"), "{label}");
        assert!(first_writes_in_order(&ran.seen), "{label}");
        if correlation == Correlation::Fifo && !at_least_once {
            // What it dropped was written: FIFO does not write it again.
            let got: Vec<Population> = ran.fates.iter().map(Fate::population).collect();
            assert_eq!(
                got,
                [Accepted, UnknownFate, UnknownFate, Accepted],
                "{label}"
            );
            assert!(read_once(&ran.seen), "{label}");
        } else {
            assert!(all_accepted(&ran.fates), "{label}: {:?}", ran.fates);
        }
    }
}

mod mixed;
