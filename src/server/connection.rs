//! One connection: read, de-frame, commit in arrival order, acknowledge in the same order, and
//! contain every failure to this connection. Frames already complete when a fatal byte arrives
//! are committed and acknowledged before the connection closes.
//!
//! This file follows each batch from read to committed to answered. Each concern is its own
//! type: `intake` reads and de-frames, `commit` turns frames into messages and hands them to the
//! sink, `answer` builds and writes the ACKs, `ledger` holds the connection's identity, counters
//! and events, and the budget (`Buffered`) what the connection holds of memory; `close` lingers
//! after the last ACK so the peer can still read it.

mod answer;
mod buffer;
mod close;
mod commit;
mod flight;
mod intake;
mod ledger;
mod scratch;
mod stop;

use super::event::ServerEvent;
use super::limits::{Buffered, Part, PeerSlot};
use super::sink::{Reply, SinkResult};
use super::{Accepted, Shared, Shutdown};
use crate::ack::Disposition;
use crate::cause::{classify_io, Cause};
use crate::framing::{Frame, FramingError};
use crate::warning::WarningCode;
use answer::Answers;
use bytes::Bytes;
use commit::{Batch, Entry, Results};
use flight::Flights;
use intake::{Intake, Read};
use ledger::Ledger;
use std::sync::Arc;
use std::time::{Instant, SystemTime};
use stop::Stops;
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::sync::OwnedSemaphorePermit;

/// MSA-3 of the answer to a frame past the size limit; never payload content.
const TOO_LARGE: &str = "Frame too large: bytes past the size limit were discarded, nothing kept";

/// What one wait of a commit came to.
enum Step {
    Stop,
    Committed(Vec<SinkResult>),
    Graceful,
    Ahead(Option<usize>),
}

/// How a connection ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct End {
    pub(crate) cause: Cause,
    pub(crate) code: Option<WarningCode>,
    /// Ended by a policy's reset: no linger.
    pub(crate) abort: bool,
}

impl End {
    pub(super) fn cause(cause: Cause) -> End {
        End {
            cause,
            code: None,
            abort: false,
        }
    }
}

/// The places a connection holds while it is open: one of `max_connections` (none for a stream
/// handed to `Server::serve`) and one of its peer address's.
pub(crate) struct Admission {
    // Fields drop in order: the per-address place goes back before the connection's place, so
    // a new peer woken by the freed place (an eviction's, say) finds its address's place free.
    pub(crate) peer: PeerSlot,
    /// Held, never read: dropping it gives the place back.
    #[allow(dead_code)]
    pub(crate) slot: Option<OwnedSemaphorePermit>,
}

/// Serve `stream` until it ends; reports open and close.
pub(crate) async fn serve<S>(
    shared: &Shared,
    accepted: Accepted<S>,
    id: u64,
    peer: Arc<str>,
    shutdown: &Shutdown,
    admission: Admission,
) where
    S: AsyncRead + AsyncWrite + Unpin + Send,
{
    let Accepted { mut stream, tls } = accepted;
    shared.stats.update(|s| {
        s.connections_accepted += 1;
        s.connections_open += 1;
    });
    shared
        .events
        .emit(ServerEvent::ConnectionOpened {
            connection: id,
            peer: Arc::clone(&peer),
            tls: tls.map(Box::new),
        })
        .await;
    let mut conn = InboundLink {
        shared,
        intake: Intake::new(shared, id),
        answers: Answers::new(shared),
        ledger: Ledger::new(shared, id, Arc::clone(&peer)),
        budget: shared.limits.account(&admission.peer),
        stream: &mut stream,
        stops: Stops::new(shutdown),
        flights: Flights::default(),
    };
    let end = conn.run().await;
    conn.ledger.send_events().await;
    conn.ledger.settle();
    let lingering = !conn.intake.eof() && !end.abort && !shutdown.immediate.is_cancelled();
    drop(conn);
    shared.policy.closed(id);
    shared.stats.update(|s| {
        s.connections_open -= 1;
        s.closed(end.cause);
    });
    shared
        .events
        .emit(ServerEvent::ConnectionClosed {
            connection: id,
            peer,
            cause: end.cause,
            code: end.code,
        })
        .await;
    // The connection is closed as far as anyone can see: a lingering socket must not keep a
    // `max_connections` slot (or its address's) from the next peer.
    drop(admission);
    if lingering {
        close::linger(&mut stream, shutdown).await;
    }
}

/// One accepted connection being served: its read side, its answers, its counters and its share
/// of the budget, over one stream.
struct InboundLink<'a, S> {
    shared: &'a Shared,
    intake: Intake<'a>,
    answers: Answers<'a>,
    ledger: Ledger<'a>,
    /// What this connection holds of the budget: partial frames, frames awaiting their answers,
    /// unsent ACKs.
    budget: Buffered,
    stream: &'a mut S,
    /// The server's stops, watched with a wait registered once for the whole connection.
    stops: Stops<'a>,
    /// Batches committed while earlier ones still are, when the sink allows it.
    flights: Flights<'a>,
}

impl<S: AsyncRead + AsyncWrite + Unpin + Send> InboundLink<'_, S> {
    async fn run(&mut self) -> End {
        loop {
            let (frames, fatal) = self.intake.decode(&mut self.ledger, &mut self.budget);
            if !frames.is_empty() {
                if let Some(end) = self.serve(frames, fatal.is_some()).await {
                    return end;
                }
                if fatal.is_none() {
                    // Input read ahead during the commit (frames, end of stream) is decoded
                    // before waiting for more: the peer may be waiting for these ACKs.
                    continue;
                }
            }
            if !self.flights.is_empty() {
                let reading = fatal.is_none() && !self.intake.eof() && !self.intake.has_ended();
                let end = match reading {
                    true => self.land_or_read().await,
                    false => self.land_all().await,
                };
                if let Some(end) = end {
                    return end;
                }
                if reading {
                    continue;
                }
            }
            if let Some(end) = self.ended(fatal) {
                return end;
            }
            self.ledger.send_events().await;
            if let Some(end) = self.read_more().await {
                return end;
            }
        }
    }

    /// The frames just decoded, as a batch: committed in flight beside earlier ones when the
    /// sink allows it, else answered once every earlier batch is. `Some` ends the connection.
    #[inline]
    async fn serve(&mut self, frames: Vec<Frame>, fatal: bool) -> Option<End> {
        let batch = Batch::admit(&frames, self.shared, &mut self.ledger);
        if !fatal && !self.stops.immediate.is_set() && self.flights.takes(self.shared, &batch) {
            let (held, timed) = (self.intake.lent(), self.ledger.per_message());
            if self.flights.full() {
                if let Some(end) = self.land_one().await {
                    return Some(end);
                }
            }
            self.flights.start(self.shared, batch, held, timed);
            return None;
        }
        // Every batch before this one is answered first.
        if let Some(end) = self.land_all().await {
            return Some(end);
        }
        let end = match self.answer_now(&batch) {
            Some(Some(cause)) => Some(self.send().await.unwrap_or(End::cause(cause))),
            Some(None) => self.finish(&batch).await,
            // On the heap only while a batch waits for its commit: the task's own size
            // is what each idle connection keeps resident.
            None => Box::pin(self.process(&batch)).await,
        };
        drop(batch);
        drop(frames);
        self.intake.served(&mut self.budget);
        self.ledger.settle();
        end
    }

    /// The end that a framing error, the end of the stream or an ended intake brings, if any.
    fn ended(&mut self, fatal: Option<FramingError>) -> Option<End> {
        let eof = self.intake.eof();
        let cause = match fatal {
            Some(FramingError::Fatal { code, .. }) => {
                return Some(End {
                    code: Some(code),
                    ..End::cause(Cause::FramingFatal)
                })
            }
            // At the end of the stream, an unfinished frame is lost with the connection.
            Some(_) if eof => Cause::PeerClosed,
            Some(FramingError::Io(e)) => classify_io(&e),
            Some(_) => Cause::PeerClosed,
            None if eof => Cause::PeerClosed,
            None => return self.intake.take_ended(),
        };
        Some(End::cause(cause))
    }

    /// Wait for more input (or a timeout, an eviction, a stop); `Some` ends the connection.
    async fn read_more(&mut self) -> Option<End> {
        let unsent = self.answers.unsent();
        let stream = &mut *self.stream;
        let read = self
            .intake
            .read(stream, &mut self.budget, unsent, &mut self.stops)
            .await;
        let cause = match read {
            Read::Data(n) => {
                self.ledger.bytes_in(n);
                return None;
            }
            Read::Eof => return None,
            Read::Failed(e) => classify_io(&e),
            Read::Idle => Cause::IdleTimeout,
            Read::FrameTimeout => Cause::FrameTimeout,
            Read::Evicted => Cause::EvictedIdle,
            Read::OverBudget => {
                return Some(End {
                    code: Some(WarningCode::FrameTooLarge),
                    ..End::cause(Cause::BufferBudget)
                })
            }
            Read::Stop => Cause::Shutdown,
        };
        Some(End::cause(cause))
    }

    /// Commit `batch` here and now and build its ACKs, with no future: the sink commits without
    /// waiting and no answer waits for a policy's delay. `None` (nothing committed) otherwise;
    /// `Some(Some(cause))` when a message's answer ends the connection with `cause` once the
    /// ACKs built are written (the later messages are not answered).
    fn answer_now(&mut self, batch: &Batch<'_>) -> Option<Option<Cause>> {
        if self.stops.immediate.is_set() || batch.entries().any(|e| e.decision.ack_delay.is_some())
        {
            return None;
        }
        let started = self.ledger.per_message().then(Instant::now);
        let mut results = batch.commit_now(self.shared)?;
        let commit_ms = started.map(|at| at.elapsed().as_secs_f64() * 1000.0);
        self.answers.begin(SystemTime::now());
        for entry in batch.entries() {
            let (mut result, duplicate) = entry.result(&mut results);
            self.record(&entry, &mut result);
            if let Some(cause) = self.answer_built(&entry, result, duplicate, commit_ms) {
                return Some(Some(cause));
            }
        }
        Some(None)
    }

    /// Commit `batch` in order, then write its ACKs in the same order. `Some` ends the
    /// connection.
    async fn process(&mut self, batch: &Batch<'_>) -> Option<End> {
        // The commit is timed only for the per-message events, the one place the time is told.
        let started = self.ledger.per_message().then(Instant::now);
        let mut results = match self.commit(batch).await {
            Ok(results) => results,
            Err(end) => return Some(end),
        };
        let commit_ms = started.map(|at| at.elapsed().as_secs_f64() * 1000.0);

        // Only now, with every commit settled, is any message of the batch answered.
        self.answers.begin(SystemTime::now());
        for entry in batch.entries() {
            let (result, duplicate) = entry.result(&mut results);
            if let Some(end) = self.answer(&entry, result, duplicate, commit_ms).await {
                return Some(end);
            }
        }
        self.finish(batch).await
    }

    /// Write the batch's ACKs; `Some` ends the connection (a write failed, or the batch's last
    /// decision resets or closes it).
    async fn finish(&mut self, batch: &Batch<'_>) -> Option<End> {
        if let Some(end) = self.send().await {
            return Some(end);
        }
        if batch.ends_in_reset() {
            return Some(End {
                abort: true,
                ..End::cause(Cause::ConnectionReset)
            });
        }
        batch.close_after().then_some(End::cause(Cause::Shutdown))
    }

    /// Commit `batch`, reading ahead meanwhile: the next batch is ready when it returns. `Err`
    /// ends the connection (an immediate stop) before any result.
    async fn commit(&mut self, batch: &Batch<'_>) -> Result<Results, End> {
        let shared = self.shared;
        if self.stops.immediate.is_set() {
            return Err(End::cause(Cause::Shutdown));
        }
        // A sink that commits at once is asked without a future: the commit would be ready at
        // its first poll, before any reading ahead.
        if let Some(results) = batch.commit_now(shared) {
            return Ok(results);
        }
        let commit = batch.commit(shared);
        tokio::pin!(commit);
        let mut reading = !self.intake.eof() && !batch.close_after();
        let results = loop {
            let room = reading && self.intake.read_ahead_room();
            let stream = &mut *self.stream;
            let (intake, budget, stops) = (&mut self.intake, &mut self.budget, &mut self.stops);
            let step = tokio::select! {
                // An immediate stop before all, then the commit: reading ahead only fills the
                // time it takes, and a graceful stop ends the reading, not the commit.
                biased;
                () = stops.immediate.set() => Step::Stop,
                results = &mut commit => Step::Committed(results),
                () = stops.graceful.set(), if room => Step::Graceful,
                more = intake.read_ahead(stream, budget), if room => Step::Ahead(more),
            };
            match step {
                Step::Stop => return Err(End::cause(Cause::Shutdown)),
                Step::Committed(results) => break results,
                Step::Graceful => reading = false,
                Step::Ahead(more) => {
                    reading = more.is_some();
                    if let Some(n) = more {
                        self.ledger.bytes_in(n);
                    }
                }
            }
        };
        Ok(results.into())
    }

    /// Answer one message of the batch with `result`, its fate, and count it. `Some` ends the
    /// connection: the later messages of the batch are not answered.
    async fn answer(
        &mut self,
        entry: &Entry<'_, '_>,
        mut result: SinkResult,
        duplicate: bool,
        commit_ms: Option<f64>,
    ) -> Option<End> {
        self.record(entry, &mut result);
        if let Some(delay) = entry.decision.ack_delay {
            if let Some(end) = self.send().await {
                return Some(end);
            }
            // On the heap: only a policy's delay needs it, and every batch's future would carry it.
            let delayed = self
                .stops
                .immediate
                .guard(Box::pin(tokio::time::sleep(delay)));
            if delayed.await.is_none() {
                return Some(End::cause(Cause::Shutdown));
            }
        }
        let cause = self.answer_built(entry, result, duplicate, commit_ms)?;
        // The peer learns the later messages' fate no better than this one's.
        if let Some(end) = self.send().await {
            return Some(end);
        }
        Some(End::cause(cause))
    }

    /// Tell what the sink said of a failure, and the policy of a commit (once: the detail is
    /// taken).
    fn record(&mut self, entry: &Entry<'_, '_>, result: &mut SinkResult) {
        if let Some(detail) = result.detail.take() {
            self.ledger.note(ServerEvent::SinkFailed {
                connection: self.ledger.id(),
                detail,
            });
        }
        if result.disposition == Disposition::Committed {
            self.shared.policy.committed(entry.message);
        }
    }

    /// Build one message's answer into the write buffer and count it, once it is recorded and its
    /// delay (if any) past. `Some` ends the connection with that cause once the ACKs built are written.
    fn answer_built(
        &mut self,
        entry: &Entry<'_, '_>,
        result: SinkResult,
        duplicate: bool,
        commit_ms: Option<f64>,
    ) -> Option<Cause> {
        let Entry {
            message, decision, ..
        } = *entry;
        let silent = decision.silent || decision.reset;
        let disposition = result.disposition;
        let answers = &mut self.answers;
        let ledger = &mut self.ledger;
        let (ack_code, close) = match result.reply {
            Reply::Table if entry.too_large => {
                let text = Some(TOO_LARGE.to_string());
                let code = answers.answer(entry, disposition, text, silent, ledger);
                (code, None)
            }
            Reply::Table => (
                answers.answer(entry, disposition, None, silent, ledger),
                None,
            ),
            Reply::Saying(text) => {
                let text = Some(text.to_string());
                let code = answers.answer(entry, disposition, text, silent, ledger);
                (code, None)
            }
            Reply::Worded(words) => (
                answers.answer_worded(entry, disposition, words, silent, ledger),
                None,
            ),
            Reply::Relayed { acks, close } => (answers.pass_on(&acks, silent, ledger), close),
        };
        ledger.message(disposition, entry.refused.is_some(), duplicate);
        if ledger.per_message() {
            ledger.note(ServerEvent::Message {
                connection: ledger.id(),
                bytes: message.payload.len(),
                ack_code,
                duplicate,
                commit_ms: commit_ms.filter(|_| entry.committing()),
                // Copies: an event waiting to be written must not keep the frame's memory.
                control_id: message.control_id().map(Bytes::copy_from_slice),
                message_type: message.message_type().map(Bytes::copy_from_slice),
            });
        }
        close
    }

    /// Write the ACKs built, then send the events noted: the peer's answer never waits for the
    /// event writer's wake-up (or for room in its channel).
    async fn send(&mut self) -> Option<End> {
        let stream = &mut *self.stream;
        let immediate = &mut self.stops.immediate;
        let end = (self.answers)
            .flush(stream, &mut self.budget, &mut self.ledger, immediate)
            .await;
        self.ledger.send_events().await;
        end
    }
}
