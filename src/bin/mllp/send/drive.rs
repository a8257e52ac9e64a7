//! The event loop `send` runs over one link or several: each outcome, client event and note
//! rendered as it comes, the output written out once no event waits and the oldest line has
//! lingered a moment, a closed stdout turned into an abandon. One link's run and a run over
//! several differ only in where they come from.

use super::live::Live;
use super::render::Output;
use super::signals::StopSignal;
use crate::output::send::SendEvent;
use mllp::delivery::{LinkEvent, ParallelRun, Run, RunControls, RunEvent, RunNote};
use std::sync::OnceLock;
use std::time::Duration;
use tokio::time::Instant;

/// How long a record may wait in the buffer for the ones after it once no event waits. Messages
/// settled one at a time (a window of 1, a slow peer) would otherwise cost a write each, and a
/// wake-up of whatever reads stdout; a reader sees its lines at most this much later.
const LINGER: Duration = Duration::from_millis(5);

/// A delivery run as the loop takes its events.
pub(crate) trait Delivery {
    /// The next event, with its link in a run over several; `None` once the run is over.
    /// Cancel safe: a call dropped before it returns loses no event.
    async fn next_event(&mut self) -> Option<LinkEvent>;
    fn has_pending(&self) -> bool;
    fn controls(&self) -> RunControls;
    /// Messages queued or in flight, and reconnect attempts, over every link.
    fn load(&self) -> (u64, u64);
}

impl Delivery for Run {
    async fn next_event(&mut self) -> Option<LinkEvent> {
        let event = self.next().await?;
        Some(LinkEvent { link: None, event })
    }

    fn has_pending(&self) -> bool {
        Run::has_pending(self)
    }

    fn controls(&self) -> RunControls {
        Run::controls(self)
    }

    fn load(&self) -> (u64, u64) {
        self.stats().map_or((0, 0), |s| {
            ((s.in_flight + s.queue_depth) as u64, s.reconnect_attempts)
        })
    }
}

impl Delivery for ParallelRun {
    async fn next_event(&mut self) -> Option<LinkEvent> {
        self.next().await
    }

    fn has_pending(&self) -> bool {
        ParallelRun::has_pending(self)
    }

    fn controls(&self) -> RunControls {
        ParallelRun::controls(self)
    }

    fn load(&self) -> (u64, u64) {
        self.stats().iter().flatten().fold((0, 0), |(q, r), s| {
            (
                q + (s.in_flight + s.queue_depth) as u64,
                r + s.reconnect_attempts,
            )
        })
    }
}

/// Takes every event of `run` until it is over; `stopped_by` is the first signal, if one came.
pub async fn events(
    run: &mut impl Delivery,
    output: &mut Output,
    live: &Live,
    stopped_by: &OnceLock<StopSignal>,
) {
    // Reset only when a line starts to linger: a timer made or moved per message would cost
    // about what the write it saves does.
    let flush_by = tokio::time::sleep(Duration::ZERO);
    tokio::pin!(flush_by);
    let mut lingering = false;
    loop {
        let next = if lingering {
            tokio::select! {
                biased;
                next = run.next_event() => next,
                () = &mut flush_by => {
                    output.flush();
                    lingering = false;
                    abandon_if_unread(run);
                    continue;
                }
            }
        } else {
            run.next_event().await
        };
        let Some(LinkEvent { link, event }) = next else {
            break;
        };
        // Lines on stdout before what stderr says after them.
        if !matches!(event, RunEvent::Outcome(_)) {
            output.flush();
        }
        match event {
            RunEvent::Outcome(outcome) => {
                live.answered(|| outcome.item.control_id(), &outcome.fate);
                output.message_on(link, &outcome.item, &outcome.fate, outcome.cause);
                // A stats snapshot computes latency quantiles: take one only when the bar shows it.
                live.settled(|| run.load());
            }
            RunEvent::Client(event) => live.event_on(link.unwrap_or(0), &event),
            RunEvent::Note(note) => say(live, note, stopped_by.get().copied()),
            RunEvent::Closing => {
                output.flush();
                live.finish();
            }
            _ => {}
        }
        if !lingering && output.holds_lines() && !run.has_pending() {
            flush_by.as_mut().reset(Instant::now() + LINGER);
            lingering = true;
        }
        abandon_if_unread(run);
    }
    output.flush();
}

/// Nobody reads the results any more: the run reads no more input and drains.
fn abandon_if_unread(run: &impl Delivery) {
    if crate::stdout::is_closed() {
        run.controls().abandon();
    }
}

/// A note about the run, on stderr.
fn say(live: &Live, note: RunNote, stopped_by: Option<StopSignal>) {
    if let (RunNote::Interrupted, Some(stop)) = (&note, stopped_by) {
        let human = || {
            format!(
                "mllp: {}: nothing more is sent; the rest of the input is reported; \
                 draining ({})",
                stop.interruption(),
                stop.again()
            )
        };
        let event = SendEvent::Interrupted {
            draining: true,
            signal: Some(stop.signal()),
        };
        return live.note(human, &event);
    }
    let human = || match &note {
        RunNote::InputError(error) => format!("mllp: error: {error}; no more messages are read"),
        RunNote::TimedOut => {
            "mllp: --timeout ran out: nothing more is sent; the rest is reported".into()
        }
        RunNote::Interrupted => {
            "interrupted: no more messages are read; draining (Ctrl-C again to stop at once)".into()
        }
        RunNote::GaveUp(failure) => format!("mllp: {}: {}", failure.cause, failure.detail),
        RunNote::FailedOutWrite { file, error } => {
            format!("mllp: warning: --failed-out: cannot write {file}: {error}")
        }
    };
    live.note(human, &SendEvent::note(&note));
}
