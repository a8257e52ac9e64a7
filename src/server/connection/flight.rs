//! Batches in flight: for a sink that lets one connection's commits overlap (a relay's upstream),
//! each batch's commit starts as soon as its frames are read, while earlier batches still wait
//! for theirs; the answers are written in arrival order, each batch's once it is committed and
//! every earlier batch is answered. A batch that must be answered alone (a refusal, a delay, a
//! decision that ends the connection) waits for every batch before it to be answered first.

use super::commit::{Batch, Entry};
use super::{Cause, End, InboundLink, Shared};
use crate::hl7::{self, Scan, Shape};
use crate::server::policy::Decision;
use crate::server::sink::{pad_results, Inbound, Reply, SinkFuture, SinkResult};
use std::collections::VecDeque;
use std::future::poll_fn;
use std::sync::Arc;
use std::task::{Context, Poll, Waker};
use std::time::{Instant, SystemTime};
use tokio::io::{AsyncRead, AsyncWrite};

/// Batches of one connection committed at once, at most: with the read-ahead cap, what bounds
/// the frames a connection holds while its sink is slow.
const MAX_IN_FLIGHT: usize = 8;

/// The scan of a message whose answer is passed on as it came: nothing reads it.
const UNSCANNED: Scan<'static> = Scan {
    msh: None,
    shape: Shape::NoMsh,
};

/// One batch whose commit is under way.
struct Flight<'a> {
    messages: Arc<[Inbound]>,
    decisions: Vec<Decision>,
    /// What its frames hold of the budget until they are answered.
    held: usize,
    /// When its commit started, for the per-message events only.
    started: Option<Instant>,
    commit: SinkFuture<'a, Vec<SinkResult>>,
    /// The sink's results, once the commit is done.
    results: Option<Vec<SinkResult>>,
}

/// A connection's batches in flight, in arrival order.
#[derive(Default)]
pub(super) struct Flights<'a> {
    queue: VecDeque<Flight<'a>>,
}

impl<'a> Flights<'a> {
    pub(super) fn is_empty(&self) -> bool {
        self.queue.is_empty()
    }

    /// Whether `batch` may be committed while the batches before it still are.
    pub(super) fn takes(&self, shared: &Shared, batch: &Batch<'_>) -> bool {
        shared.sink.overlapping() && batch.may_overlap()
    }

    /// No more batches may start before the earliest is answered.
    pub(super) fn full(&self) -> bool {
        self.queue.len() >= MAX_IN_FLIGHT
    }

    /// Start committing `batch`, whose frames hold `held` of the budget.
    pub(super) fn start(&mut self, shared: &'a Shared, batch: Batch<'_>, held: usize, timed: bool) {
        let (messages, decisions) = batch.into_parts();
        let messages: Arc<[Inbound]> = messages.into();
        let sent = Arc::clone(&messages);
        let mut commit: SinkFuture<'a, Vec<SinkResult>> = Box::pin(async move {
            let results = shared.sink.commit_batch(&sent).await;
            pad_results(results, sent.len())
        });
        // Polled once now, before any later batch exists: the sink sees the commits in the order
        // they started. The next poll brings the connection's own waker.
        let mut cx = Context::from_waker(Waker::noop());
        let results = match commit.as_mut().poll(&mut cx) {
            Poll::Ready(results) => Some(results),
            Poll::Pending => None,
        };
        self.queue.push_back(Flight {
            messages,
            decisions,
            held,
            started: timed.then(Instant::now),
            commit,
            results,
        });
    }

    /// Returns once the earliest batch is committed (at once when none is in flight), every
    /// batch's commit driven meanwhile.
    async fn landed(&mut self) {
        poll_fn(|cx| {
            for flight in &mut self.queue {
                if flight.results.is_none() {
                    if let Poll::Ready(results) = flight.commit.as_mut().poll(cx) {
                        flight.results = Some(results);
                    }
                }
            }
            match self.queue.front() {
                Some(flight) if flight.results.is_none() => Poll::Pending,
                _ => Poll::Ready(()),
            }
        })
        .await
    }
}

/// What waiting for the earliest batch came to.
enum Wait {
    Stop,
    Landed,
    Graceful,
    Ahead(Option<usize>),
}

impl<S: AsyncRead + AsyncWrite + Unpin + Send> InboundLink<'_, S> {
    /// Wait for the earliest batch in flight to be committed and answer it, or for more input
    /// to decode (read within the read-ahead cap) while it is not. `Some` ends the connection.
    pub(super) async fn land_or_read(&mut self) -> Option<End> {
        let mut reading = true;
        loop {
            let room = reading
                && !self.stops.graceful.is_set()
                && !self.intake.eof()
                && self.intake.read_ahead_room();
            let stream = &mut *self.stream;
            let (intake, budget, stops) = (&mut self.intake, &mut self.budget, &mut self.stops);
            let flights = &mut self.flights;
            let wait = tokio::select! {
                // An immediate stop before all, then the earliest answer: reading ahead only
                // fills the time the commits take.
                biased;
                () = stops.immediate.set() => Wait::Stop,
                () = flights.landed() => Wait::Landed,
                () = stops.graceful.set(), if room => Wait::Graceful,
                more = intake.read_ahead(stream, budget), if room => Wait::Ahead(more),
            };
            match wait {
                Wait::Stop => return Some(End::cause(Cause::Shutdown)),
                Wait::Landed => return self.answer_landed().await,
                Wait::Graceful => reading = false,
                Wait::Ahead(None) => reading = false,
                Wait::Ahead(Some(n)) => {
                    self.ledger.bytes_in(n);
                    return None;
                }
            }
        }
    }

    /// Answer every batch in flight, in order. `Some` ends the connection.
    pub(super) async fn land_all(&mut self) -> Option<End> {
        while !self.flights.is_empty() {
            if let Some(end) = self.land_one().await {
                return Some(end);
            }
        }
        None
    }

    /// Wait for the earliest batch in flight to be committed, and answer it. `Some` ends the
    /// connection.
    pub(super) async fn land_one(&mut self) -> Option<End> {
        let flights = &mut self.flights;
        if self.stops.immediate.guard(flights.landed()).await.is_none() {
            return Some(End::cause(Cause::Shutdown));
        }
        self.answer_landed().await
    }

    /// Write the answers of the earliest batch, committed. `Some` ends the connection.
    async fn answer_landed(&mut self) -> Option<End> {
        let flight = self.flights.queue.pop_front()?;
        let commit_ms = flight.started.map(|at| at.elapsed().as_secs_f64() * 1000.0);
        let mut results = flight.results.unwrap_or_default().into_iter();
        self.answers.begin(SystemTime::now());
        let mut ended = None;
        for (message, decision) in flight.messages.iter().zip(&flight.decisions) {
            let scan;
            let mut entry = Entry {
                message,
                scan: &UNSCANNED,
                decision,
                refused: None,
                too_large: false,
            };
            let (mut result, duplicate) = entry.result(&mut results);
            // Scanned again only for an ACK built here (the frames the first scan borrowed are
            // gone): answers passed on as they came need no header of the message.
            if !matches!(result.reply, Reply::Relayed { .. }) {
                scan = hl7::scan(&message.payload);
                entry.scan = &scan;
            }
            self.record(&entry, &mut result);
            if let Some(cause) = self.answer_built(&entry, result, duplicate, commit_ms) {
                // The later messages are not answered.
                ended = Some(cause);
                break;
            }
        }
        let sent = self.send().await;
        self.intake.served_part(flight.held, &mut self.budget);
        self.ledger.settle();
        sent.or(ended.map(End::cause))
    }
}
