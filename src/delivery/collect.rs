//! The collector: settles each message's one fate, keeps the count, and hands outcomes and
//! notes out in order. A stop ends sending and drains (the rest of a finite input is reported
//! never-delivered, `interrupted`); a destroy settles everything at once. The deadline ends the
//! run at once when it passes: what was not written is
//! never delivered, what was written and not answered is of unknown fate, both `run-timeout`.

mod state;

use super::event::{Out, RunEvent};
use super::feed::Input;
use super::inbox::{Note, Notes};
use super::totals::RunSummary;
use super::{RunControls, RunOptions};
use crate::cause::Cause;
use crate::client::{Client, ClientEvent, Reason, State};
use state::Collector;
use std::collections::VecDeque;
use std::future::Future;
use std::sync::Arc;
use std::task::Poll;
use std::time::Duration;
use tokio::sync::watch;
use tokio::time::Instant;

/// Notes taken in one turn of the loop at most, before the controls and the timers are looked
/// at again: a burst of fates is taken at once rather than through a select each.
const NOTES_PER_TURN: usize = 256;

/// The whole run: returns once every message read has its fate and the client is closed.
pub(super) async fn collect(
    client: Arc<Client>,
    input: Input,
    options: RunOptions,
    controls: RunControls,
    out: Out,
) -> RunSummary {
    let started = Instant::now();
    // Woken now and then before the deadline to see whether the rest still fits before it.
    let timer = tokio::time::sleep_until(started);
    tokio::pin!(timer);
    let (gave_up_tx, gave_up) = watch::channel(None::<Cause>);
    let (failure_tx, last_failure) = watch::channel(None::<Cause>);
    let events = tokio::spawn(watch_events(
        client.subscribe(),
        out.clone(),
        gave_up_tx,
        failure_tx,
    ));
    let notes = Notes::default();
    let mut run = Collector::new(client, options, out, gave_up, last_failure, started);
    // Polled in this task, through the noting branch: the fate that wakes it also makes room
    // for the next message, and one wake-up of one task passes the fate on and sends the next.
    let producer = run.producer(input, notes.clone());
    tokio::pin!(producer);
    let mut produced = false;
    let mut taken: VecDeque<Note> = VecDeque::new();
    // Made once: a wait made afresh each turn registers with its token, and unregisters,
    // every time the loop goes round.
    let any = controls.any.cancelled();
    let stop = controls.stop.cancelled();
    let destroy = controls.destroy.cancelled();
    let abandon = controls.abandon.cancelled();
    tokio::pin!(any, stop, destroy, abandon);
    // Until a control came, one wait stands for the three; then each is looked at.
    let mut controlled = false;
    while !run.all_settled() {
        // Nobody takes the results any more: read no more messages, drain, end quietly.
        if controlled && controls.abandon.is_cancelled() {
            run.abandon();
        }
        // In this order: a burst of notes does not hold off a stop or the deadline.
        tokio::select! {
            biased;
            () = &mut any, if !controlled => controlled = true,
            () = &mut stop, if controlled && run.may_stop() => run.stopped().await,
            () = &mut destroy, if controlled && run.may_destroy() => run.destroyed(),
            () = &mut abandon, if controlled && run.may_abandon() => {}
            () = &mut timer, if run.watches_deadline() => {
                if let Some(next) = run.deadline_check() {
                    timer.as_mut().reset(next);
                } else {
                    run.deadline_passed().await;
                }
            }
            read = produced_notes(producer.as_mut(), &mut produced, &notes, &mut taken) => {
                let Some(read) = read else {
                    // The producer is done and every note taken: nothing more can settle.
                    run.counted_read(notes.take(0, &mut taken));
                    break;
                };
                take_notes(&mut run, &mut taken, read).await;
            }
            // Only application ACKs left to wait for: close, so the drain timeout bounds them.
            // (An async block: no timer is made on the turns this branch is off.)
            () = async { tokio::time::sleep(APP_ACK_CHECK).await }, if run.checks_app_acks() => {
                run.app_ack_check();
            }
        }
    }
    run.end_reading();
    if !produced {
        producer.await;
    }
    run.finish(events).await
}

/// The notes waiting, without a select each; their events go out in batches.
async fn take_notes(run: &mut Collector, taken: &mut VecDeque<Note>, read: u64) {
    while let Some(note) = taken.pop_front() {
        if run.full_for(&note) {
            run.flush().await;
        }
        run.take_note(note, read);
        if run.holds_a_batch() {
            run.flush().await;
        }
    }
    run.flush().await;
}

/// Drive the producer (until it ends) and take the notes it left: `Some` with the count of
/// messages read when there are notes, `None` once the producer is done and every note taken.
/// One branch, not two: the producer leaves its notes in the inbox as it runs, so they are
/// looked at after each poll of it, whether or not it ended.
async fn produced_notes(
    mut producer: std::pin::Pin<&mut impl Future<Output = ()>>,
    produced: &mut bool,
    notes: &Notes,
    taken: &mut VecDeque<Note>,
) -> Option<u64> {
    std::future::poll_fn(|cx| {
        if !*produced {
            *produced = producer.as_mut().poll(cx).is_ready();
        }
        let read = notes.take(NOTES_PER_TURN, taken);
        match (taken.is_empty(), *produced) {
            (false, _) => Poll::Ready(Some(read)),
            (true, true) => Poll::Ready(None),
            (true, false) => Poll::Pending,
        }
    })
    .await
}

/// How often, once the input is done, the run checks whether only application ACKs are left.
const APP_ACK_CHECK: Duration = Duration::from_millis(100);

/// The client's events, handed out; and the cause it gave up on, and its last failure (cleared
/// by a connect), kept for the outcomes.
async fn watch_events(
    mut events: tokio::sync::broadcast::Receiver<ClientEvent>,
    out: Out,
    gave_up: watch::Sender<Option<Cause>>,
    last_failure: watch::Sender<Option<Cause>>,
) {
    use tokio::sync::broadcast::error::RecvError;
    loop {
        match events.recv().await {
            Ok(event) => {
                match &event {
                    ClientEvent::StateChange(t) => {
                        if let Reason::GaveUp(cause) = t.reason {
                            gave_up.send_replace(Some(cause));
                        }
                        if t.to == State::Connected {
                            last_failure.send_replace(None);
                        }
                    }
                    ClientEvent::Error { cause, .. } => {
                        last_failure.send_replace(Some(*cause));
                    }
                    _ => {}
                }
                out.emit(RunEvent::Client(event)).await;
            }
            Err(RecvError::Lagged(_)) => continue,
            Err(RecvError::Closed) => return,
        }
    }
}
