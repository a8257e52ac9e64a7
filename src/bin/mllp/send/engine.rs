//! The run: a reader thread streams messages from disk, a producer hands them to the client
//! (backpressure waits, never drops), and a collector settles each message's one fate, resends
//! under the policy, writes results, and decides the exit code. Ctrl-C stops reading and drains;
//! a second Ctrl-C settles everything at once. `--timeout` ends the run at once when it runs
//! out: what was not written is never delivered, what was written and not answered is of
//! unknown fate, both with cause `run-timeout`.

mod produce;

use super::failed::FailedOut;
use super::feed::spawn_reader;
use super::live::Live;
use super::output::Output;
use super::signals::Signals;
use super::summary::{self, Ending, Tally};
use super::Plan;
use crate::diag::count;
use crate::exit::Exit;
use bytes::Bytes;
use mllp::cause::Cause;
use mllp::client::{Client, ClientEvent, Fate, FateCause, Population, Reason, State};
use mllp::input::{InputError, InputSet, Message};
use produce::{produce, Halt};
use serde_json::json;
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio::sync::{mpsc, watch};
use tokio_util::sync::CancellationToken;

/// One message on its way, across resends.
pub struct Item {
    pub source: Arc<str>,
    pub index: u64,
    pub payload: Bytes,
    /// How many times it was resent so far.
    pub resends: u32,
    /// Its place in the input, from 1: the order it was read and first handed over.
    pub seq: u64,
    /// How many times the client wrote it again on a new connection (control-ID correlation).
    pub rewrites: u32,
}

impl Item {
    fn new(message: Message, seq: u64) -> Item {
        Item {
            source: message.source,
            index: message.index,
            payload: message.payload,
            resends: 0,
            seq,
            rewrites: 0,
        }
    }

    /// `adt.hl7#2`, `-#1`.
    pub fn label(&self) -> String {
        format!("{}#{}", self.source, self.index)
    }

    /// MSH-10, for the per-message record only.
    pub fn control_id(&self) -> Option<String> {
        let scan = mllp::hl7::scan(&self.payload);
        let id = scan.msh?.control_id()?;
        (!id.is_empty()).then(|| String::from_utf8_lossy(id).into_owned())
    }
}

/// What the producer and the per-send waiters tell the collector.
enum Note {
    Read,
    Settled(Item, Fate),
    InputEnd(Option<InputError>),
}

/// Whether the client is gone for good (it gave up, or was closed).
fn client_closed(client: &Client) -> bool {
    matches!(client.state(), State::Closed | State::Disconnected)
}

pub async fn run(
    client: Arc<Client>,
    set: InputSet,
    plan: Plan,
    mut output: Output,
    live: Live,
    failed: Option<FailedOut>,
) -> Exit {
    // Before the first message goes out, so an early Ctrl-C is a drain, not a kill.
    let mut signals = Signals::install();
    let started = Instant::now();
    let live = Arc::new(live);
    live.start();
    // `--timeout`: a deadline for the whole run; past it, nothing more is sent.
    let expired = CancellationToken::new();
    let deadline = plan.deadline.map(tokio::time::Instant::from_std);
    let timer = async move {
        match deadline {
            Some(at) => tokio::time::sleep_until(at).await,
            None => std::future::pending().await,
        }
    };
    tokio::pin!(timer);
    let (gave_up_tx, gave_up) = watch::channel(None::<Cause>);
    let events = tokio::spawn(watch_events(client.subscribe(), live.clone(), gave_up_tx));
    let stop = CancellationToken::new();
    let (notes_tx, mut notes) = mpsc::unbounded_channel();
    let (resend_tx, resend_rx) = mpsc::unbounded_channel();
    let input = spawn_reader(set, plan.stream);
    let producer = tokio::spawn(produce(
        client.clone(),
        plan.clone(),
        input,
        resend_rx,
        notes_tx,
        Halt {
            stop: stop.clone(),
            expired: expired.clone(),
        },
        gave_up.clone(),
    ));

    let mut tally = Tally::default();
    let mut ending = Ending::default();
    let mut input_done = false;
    let mut interrupts = 0u32;
    let mut draining = false;
    while !(input_done && tally.adds_up()) {
        let note = tokio::select! {
            note = notes.recv() => note,
            () = &mut timer, if !ending.timed_out => {
                ending.timed_out = true;
                live.note(
                    "run_timeout",
                    || "mllp: --timeout ran out: nothing more is sent; the rest is reported".into(),
                    json!({}),
                );
                // Expired first: the producer reads it when it sees the stop.
                expired.cancel();
                stop.cancel();
                let client = client.clone();
                tokio::spawn(async move { client.destroy().await });
                continue;
            }
            // Only application ACKs left to wait for: close, so the drain timeout bounds them.
            // (An async block: no timer is made on the turns this branch is off.)
            () = async { tokio::time::sleep(APP_ACK_CHECK).await }, if input_done && !draining => {
                if only_app_acks_left(&tally, &client) {
                    draining = true;
                    let client = client.clone();
                    tokio::spawn(async move { client.close().await });
                }
                continue;
            }
            () = signals.next() => {
                interrupts += 1;
                ending.interrupted = true;
                stop.cancel();
                let client = client.clone();
                if interrupts == 1 {
                    live.note(
                        "interrupted",
                        || "interrupted: no more messages are read; draining (Ctrl-C again to stop at once)".into(),
                        json!({ "draining": true }),
                    );
                    tokio::spawn(async move { client.close().await });
                } else {
                    tokio::spawn(async move { client.destroy().await });
                }
                continue;
            }
        };
        match note {
            None => break, // producer and every waiter are gone: nothing more can settle
            Some(Note::Read) => tally.read += 1,
            Some(Note::InputEnd(error)) => {
                input_done = true;
                if let Some(error) = error {
                    ending.input_failed = true;
                    live.note(
                        "input_error",
                        || format!("mllp: error: {error}; no more messages are read"),
                        json!({ "message": error.to_string() }),
                    );
                }
            }
            Some(Note::Settled(mut item, fate)) => {
                // Resent, or (when the producer can take no more resends) settled as it stands.
                let unsent = if !stop.is_cancelled() && resend_wanted(&plan, &item, &fate, &client)
                {
                    item.resends += 1;
                    tally.resent += 1;
                    resend_tx
                        .send(item)
                        .err()
                        .map(|mpsc::error::SendError(item)| item)
                } else {
                    Some(item)
                };
                if let Some(item) = unsent {
                    let cause = final_cause(&fate, *gave_up.borrow(), &ending, &live);
                    settle(
                        &mut tally,
                        &mut output,
                        &live,
                        &failed,
                        &client,
                        cause,
                        item,
                        fate,
                    );
                }
            }
        }
        if notes.is_empty() {
            output.flush();
        }
        // Nobody reads the results any more: read no more messages, drain, end quietly.
        if crate::stdout::is_closed() && !stop.is_cancelled() {
            ending.output_closed = !input_done;
            stop.cancel();
            let client = client.clone();
            tokio::spawn(async move { client.close().await });
        }
    }
    drop(resend_tx);
    stop.cancel();
    let _ = producer.await;
    output.flush();
    live.finish();
    let close = client.close();
    let _ = tokio::time::timeout(Duration::from_secs(5), close).await;
    let stats = client.stats();
    tally.reconnects = stats.reconnect_attempts;
    drop(client);
    let _ = tokio::time::timeout(Duration::from_secs(1), events).await;
    ending.gave_up = *gave_up.borrow();
    ending.last_failure = live.last_failure();
    // What went wrong, in the words of the failure that made the client give up.
    if let Some(failure) = stats
        .last_failure
        .filter(|f| ending.gave_up == Some(f.cause))
    {
        live.note(
            "gave_up",
            || format!("mllp: {}: {}", failure.cause, failure.detail),
            json!({ "cause": failure.cause.as_str(), "detail": failure.detail }),
        );
    }
    finish(&tally, ending, started.elapsed(), &mut output, &live)
}

/// How often, once the input is done, the run checks whether only application ACKs are left.
const APP_ACK_CHECK: Duration = Duration::from_millis(100);

/// Every message not yet settled is committed (`CA`) and waits for its application ACK: nothing
/// a reconnect could still deliver, so the run may close and let the drain bound the wait.
fn only_app_acks_left(tally: &Tally, client: &Client) -> bool {
    let open = tally.read.saturating_sub(tally.settled());
    open > 0 && open == client.stats().awaiting_app_ack as u64
}

/// Print the summary and decide the exit code; a count that does not close is a bug report.
fn finish(
    tally: &Tally,
    ending: Ending,
    elapsed: Duration,
    output: &mut Output,
    live: &Live,
) -> Exit {
    if !tally.adds_up() {
        live.note(
            "internal_error",
            || {
                format!(
                    "mllp: internal error: {} read but {} counted; please report this",
                    count(tally.read, "message"),
                    count(tally.settled(), "outcome")
                )
            },
            json!({ "read": tally.read, "settled": tally.settled() }),
        );
    }
    let exit = summary::decide(tally, ending);
    if output.json() {
        output.summary_record(&summary::json_record(tally, ending, elapsed, exit));
    } else {
        live.note(
            "summary",
            || summary::human(tally, elapsed, ending),
            summary::event_fields(tally, ending, elapsed, exit),
        );
    }
    exit
}

/// Resend under the policy (docs/delivery.md) until the client is gone. Control-ID mode resends
/// inside the client itself.
fn resend_wanted(plan: &Plan, item: &Item, fate: &Fate, client: &Client) -> bool {
    !client_closed(client) && plan.resend.wants_resend(item.resends, fate)
}

/// The cause a message's record shows when the run, not the link, ended it: the cause the
/// client gave up on, `run-timeout` past `--timeout`, or after Ctrl-C the link's last failure
/// (a refused port stays `connection-refused`, not the shutdown that followed). `None` keeps
/// the fate's own cause.
fn final_cause(
    fate: &Fate,
    gave_up: Option<Cause>,
    ending: &Ending,
    live: &Live,
) -> Option<&'static str> {
    let ended_by_us = |cause: &FateCause| {
        matches!(
            cause,
            FateCause::Closed | FateCause::Destroyed | FateCause::Cancelled
        )
    };
    match fate {
        Fate::NeverDelivered { cause } | Fate::UnknownFate { cause, .. }
            if ending.timed_out && ended_by_us(cause) =>
        {
            Some(Cause::RunTimeout.as_str())
        }
        Fate::NeverDelivered { cause } if ended_by_us(cause) => {
            gave_up.or_else(|| live.last_failure()).map(Cause::as_str)
        }
        _ => None,
    }
}

/// A message's final fate: count it, show it, keep it when it failed.
#[allow(clippy::too_many_arguments)]
fn settle(
    tally: &mut Tally,
    output: &mut Output,
    live: &Live,
    failed: &Option<FailedOut>,
    client: &Client,
    cause: Option<&str>,
    item: Item,
    fate: Fate,
) {
    tally.record(&fate);
    live.answered(|| item.control_id(), &fate);
    tally.resent += u64::from(item.rewrites);
    output.message(&item, &fate, cause);
    if fate.population() != Population::Accepted {
        if let Some(failed) = failed {
            if let Err(err) = failed.write(item.seq, &item.label(), &item.payload) {
                let file = super::failed::file_name(item.seq, &item.label());
                live.note(
                    "failed_out_error",
                    || format!("mllp: warning: --failed-out: cannot write {file}: {err}"),
                    json!({ "file": file, "error": err.to_string() }),
                );
            }
        }
    }
    // A stats snapshot computes latency quantiles: take one only when the bar will show it.
    live.settled(|| {
        let stats = client.stats();
        (
            (stats.in_flight + stats.queue_depth) as u64,
            stats.reconnect_attempts,
        )
    });
}

/// Events to stderr, and the cause the client gave up on.
async fn watch_events(
    mut events: tokio::sync::broadcast::Receiver<ClientEvent>,
    live: Arc<Live>,
    gave_up: watch::Sender<Option<Cause>>,
) {
    use tokio::sync::broadcast::error::RecvError;
    loop {
        match events.recv().await {
            Ok(event) => {
                if let ClientEvent::StateChange(t) = &event {
                    if let Reason::GaveUp(cause) = t.reason {
                        gave_up.send_replace(Some(cause));
                    }
                }
                live.event(&event);
            }
            Err(RecvError::Lagged(_)) => continue,
            Err(RecvError::Closed) => return,
        }
    }
}
