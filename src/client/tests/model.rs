//! The real client against reference models of its correlation rules (`model/rules.rs` by
//! control ID, `model/fifo.rs` in FIFO order): generated peer scripts (ACK codes with repeats
//! and junk, right and wrong MSA-2, early replies, silence, drops; every MSH-15/16 pairing;
//! pipelined or one at a time) drive both over in-memory links on the paused clock.
//!
//! Timeouts carry a few extra milliseconds (3, 7, 11) while script steps move whole seconds,
//! so no deadline ever falls on the instant of a scripted reply: both sides see one order.

mod fifo;
mod rules;

use super::harness::{paused, rig, Peer, Rig};
use crate::cause::Class;
use crate::client::*;
use bytes::Bytes;
use fifo::FifoModel;
use futures::FutureExt;
use proptest::prelude::*;
use rules::{AfterCa, Model, Outcome, Rules, Timeouts};
use std::sync::Arc;
use std::time::Duration;

const CIDS: [&str; 4] = ["A", "B", "C", "ZZZ"];
const CODES: [&str; 8] = ["AA", "AE", "AR", "CA", "CE", "CR", "", "XX"];
const MSH15: [&str; 6] = ["", "\"\"", "NE", "AL", "ER", "SU"];
const MSH16: [&str; 7] = ["", "\"\"", "NE", "AL", "ER", "SU", "XX"];
const TIMEOUTS: Timeouts = Timeouts {
    ack: 10_003,
    app_ack: 20_007,
    drain: 30_011,
};

#[derive(Debug, Clone)]
enum Step {
    /// Hand the next message to the client.
    Submit,
    /// The peer writes an ACK: MSA-1 `CODES[code]`, MSA-2 `CIDS[cid]`.
    Reply { cid: usize, code: usize },
    /// Let this many seconds pass.
    Wait(u64),
    /// The peer drops the connection (the client reconnects at once).
    Drop,
}

#[derive(Debug, Clone)]
struct Script {
    pipeline: bool,
    /// Most rewrites of one message after drops (control-ID correlation).
    max_resends: u32,
    /// (control ID, MSH-15, MSH-16) by index into the tables above.
    messages: Vec<(usize, usize, usize)>,
    before_close: Vec<Step>,
    after_close: Vec<Step>,
}

fn step() -> impl Strategy<Value = Step> {
    prop_oneof![
        3 => Just(Step::Submit),
        5 => (0..CIDS.len(), prop_oneof![2 => Just(3usize), 5 => 0..CODES.len()])
            .prop_map(|(cid, code)| Step::Reply { cid, code }),
        3 => (1u64..=12).prop_map(Step::Wait),
        1 => Just(Step::Drop),
    ]
}

fn script() -> impl Strategy<Value = Script> {
    (
        prop::bool::weighted(0.75),
        prop_oneof![3 => 0..=2u32, 1 => Just(DEFAULT_MAX_RESENDS)],
        proptest::collection::vec((0..3usize, 0..MSH15.len(), 0..MSH16.len()), 1..=5),
        proptest::collection::vec(step(), 0..24),
        proptest::collection::vec(step(), 0..6),
    )
        .prop_map(
            |(pipeline, max_resends, messages, before_close, after_close)| Script {
                pipeline,
                max_resends,
                messages,
                before_close,
                after_close,
            },
        )
}

/// Reconnect at once after a transient cause; never after a permanent one.
#[derive(Debug)]
struct AtOnce;

impl RetryStrategy for AtOnce {
    fn next_delay(&self, ctx: &RetryContext) -> Option<Duration> {
        (ctx.class == Class::Transient).then_some(Duration::ZERO)
    }
}

fn options(correlation: Correlation, script: &Script) -> ClientOptions {
    ClientOptions {
        correlation,
        pipeline: script.pipeline,
        max_resends: script.max_resends,
        ack_timeout: Duration::from_millis(TIMEOUTS.ack),
        app_ack_timeout: Duration::from_millis(TIMEOUTS.app_ack),
        drain_timeout: Duration::from_millis(TIMEOUTS.drain),
        reconnect: Reconnect {
            enabled: true,
            strategy: Arc::new(AtOnce),
        },
        // The models state the plain rules; coping with engines as they are has its own tests.
        adapt_to_peer: false,
        ..Default::default()
    }
}

fn payload(index: usize, (cid, msh15, msh16): (usize, usize, usize)) -> Bytes {
    Bytes::from(format!(
        "MSH|^~\\&|A|B|C|D|20240101120000||ADT^A01|{}|P|2.5|||{}|{}\rPID|{index}\r",
        CIDS[cid], MSH15[msh15], MSH16[msh16]
    ))
}

/// What the peer saw and said, by step number, to check crediting against.
#[derive(Default)]
struct Trace {
    /// (step, connection, message index) per frame read.
    writes: Vec<(usize, u32, usize)>,
    /// (step, connection, control ID, code) per ACK written.
    replies: Vec<(usize, u32, &'static str, &'static str)>,
}

struct Driver {
    client: Arc<Client>,
    peers: tokio::sync::mpsc::UnboundedReceiver<Peer>,
    peer: Option<Peer>,
    connection: u32,
    trace: Trace,
    step: usize,
}

impl Driver {
    /// Let every task run to quiescence without moving the clock, then note what was written.
    async fn settle(&mut self) {
        for _ in 0..16 {
            tokio::task::yield_now().await;
        }
        loop {
            if let Some(peer) = &mut self.peer {
                while let Some(Some(frame)) = peer.read().now_or_never() {
                    let text = String::from_utf8_lossy(&frame).into_owned();
                    let index = text.split("PID|").nth(1).unwrap_or_default();
                    let index: usize = index.trim_end_matches('\r').parse().unwrap();
                    self.trace.writes.push((self.step, self.connection, index));
                }
            }
            match self.peers.try_recv() {
                Ok(next) => {
                    self.peer = Some(next);
                    self.connection += 1;
                }
                Err(_) => break,
            }
        }
    }

    /// One step other than a submit, on both sides.
    async fn play(&mut self, step: &Step, model: &mut dyn Rules) {
        self.step += 1;
        match *step {
            Step::Submit => {}
            Step::Reply { cid, code } => {
                if let Some(peer) = &mut self.peer {
                    let (cid, code) = (CIDS[cid], CODES[code]);
                    if peer.try_write_ack(code, cid).await {
                        self.trace
                            .replies
                            .push((self.step, self.connection, cid, code));
                    }
                    model.reply(cid, code);
                }
            }
            Step::Wait(secs) => {
                tokio::time::sleep(Duration::from_secs(secs)).await;
                model.advance(secs * 1000);
            }
            Step::Drop => {
                if self.peer.take().is_some() {
                    model.link_failed();
                }
            }
        }
        self.settle().await;
    }
}

fn outcome_of(fate: &Fate) -> Option<Outcome> {
    let code = || fate.ack_code().map(|c| c.as_str()).unwrap_or("--");
    Some(match fate.population() {
        Population::Accepted => Outcome::Accepted(code()),
        Population::Negative => Outcome::Negative(code()),
        Population::CommittedOnly => Outcome::CommittedOnly,
        Population::UnknownFate => Outcome::UnknownFate,
        Population::NeverDelivered => Outcome::NeverDelivered,
        Population::Refused => return None,
    })
}

fn run(script: &Script, correlation: Correlation) -> Result<(), TestCaseError> {
    let runtime = paused();
    runtime.block_on(async {
        let mut model: Box<dyn Rules> = match correlation {
            Correlation::ControlId => {
                Box::new(Model::new(TIMEOUTS, script.pipeline, script.max_resends))
            }
            Correlation::Fifo => Box::new(FifoModel::new(TIMEOUTS, script.pipeline)),
        };
        let Rig { client, peers, .. } = rig(vec![], options(correlation, script));
        let mut driver = Driver {
            client: Arc::new(client),
            peers,
            peer: None,
            connection: 0,
            trace: Trace::default(),
            step: 0,
        };
        driver.settle().await;
        let mut pending = Vec::new();
        for step in &script.before_close {
            match (step, script.messages.get(pending.len())) {
                (Step::Submit, Some(&m)) => {
                    // Both take it in at the same instant.
                    model.submit(CIDS[m.0], MSH16[m.2]);
                    let index = pending.len();
                    pending.push(driver.client.send(payload(index, m)).await);
                    driver.step += 1;
                    driver.settle().await;
                }
                (Step::Submit, None) => {}
                _ => driver.play(step, model.as_mut()).await,
            }
        }
        // The drain runs while the script goes on.
        let client = driver.client.clone();
        let close = tokio::spawn(async move { client.close().await });
        model.close();
        driver.step += 1;
        driver.settle().await;
        for step in &script.after_close {
            driver.play(step, model.as_mut()).await;
        }
        tokio::time::sleep(Duration::from_secs(200)).await;
        model.advance(200_000);
        driver.settle().await;
        let report = tokio::time::timeout(Duration::from_secs(1), close).await;
        prop_assert!(report.is_ok(), "close() never returned");
        check(script, model.as_ref(), &driver, pending, correlation)
    })
}

fn check(
    script: &Script,
    model: &dyn Rules,
    driver: &Driver,
    pending: Vec<SendHandle>,
    correlation: Correlation,
) -> Result<(), TestCaseError> {
    let expected = model.outcomes();
    prop_assert_eq!(expected.len(), pending.len());
    let stats = driver.client.stats();
    let counted: u64 = stats.by_population.values().sum();
    prop_assert_eq!(counted as usize, pending.len(), "one fate each");
    for (index, (mut handle, (want, writes))) in pending.into_iter().zip(expected).enumerate() {
        let fate = (&mut handle).now_or_never();
        prop_assert!(fate.is_some(), "message {} never settled", index);
        let fate = fate.unwrap();
        let got = outcome_of(&fate);
        prop_assert_eq!(got, want, "message {}: {}", index, fate);
        prop_assert_eq!(handle.writes(), writes, "writes of message {}", index);
        let spec = script.messages[index];
        let last_write = driver.trace.writes.iter().rev().find(|w| w.2 == index);
        // Safe to send again only if the peer never read it, by its own record.
        prop_assert!(
            got != Some(Outcome::NeverDelivered) || last_write.is_none(),
            "message {} read yet never-delivered",
            index
        );
        // Credit needs an answer of that code after its last write, on that link, naming it
        // (FIFO: whatever MSA-2 says, as the user asked).
        let names = |cid: &str| correlation == Correlation::Fifo || cid == CIDS[spec.0];
        let answered = |code: &str| {
            last_write.is_some_and(|&(at, conn, _)| {
                driver
                    .trace
                    .replies
                    .iter()
                    .any(|r| r.0 > at && r.1 == conn && names(r.2) && r.3 == code)
            })
        };
        match got {
            Some(Outcome::Accepted(code)) => {
                prop_assert!(answered(code), "accepted {} without its answer", index);
                if code == "CA" {
                    let after = AfterCa::of(MSH16[spec.2]);
                    prop_assert!(matches!(after, AfterCa::Nothing | AfterCa::OnlyErrors));
                }
            }
            Some(Outcome::Negative(code)) => prop_assert!(answered(code)),
            Some(Outcome::CommittedOnly) => prop_assert!(answered("CA")),
            _ => {}
        }
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2048))]

    #[test]
    fn by_control_id_the_client_and_the_model_agree_on_every_fate(script in script()) {
        run(&script, Correlation::ControlId)?;
    }

}

proptest! {
    // FIFO's rules are fewer: half the cases cover them as well.
    #![proptest_config(ProptestConfig::with_cases(1024))]

    #[test]
    fn in_fifo_order_the_client_and_the_model_agree_on_every_fate(script in script()) {
        run(&script, Correlation::Fifo)?;
    }
}
