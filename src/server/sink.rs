//! The commit step: a [`Sink`] takes each inbound message and says whether it is committed.
//! The server writes an ACK only after the sink has returned.

pub(crate) mod exec;
pub(crate) mod groups;
pub(crate) mod out_dir;
#[cfg(feature = "postgres")]
pub(crate) mod postgres;
#[cfg(feature = "sqlite")]
pub(crate) mod sqlite;
pub(crate) mod stdout;

use crate::ack::Disposition;
use crate::cause::Cause;
use crate::hl7::{self, Shape};
use bytes::Bytes;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::time::SystemTime;

pub use exec::{ExecOptions, ExecSink, EXEC_STDERR_LINE_MAX};
pub use groups::CommitGroups;
pub use out_dir::OutDirSink;
#[cfg(all(feature = "postgres", feature = "sqlite"))]
pub use postgres::PostgresRows;
#[cfg(feature = "postgres")]
pub use postgres::{ConnInfoError, Failure, PostgresError, PostgresSink};
#[cfg(feature = "sqlite")]
pub use sqlite::{SqliteError, SqliteSink};
pub use stdout::{OutputFormat, StdoutSink};

/// One de-framed inbound message and what the server knows about it.
#[derive(Debug, Clone)]
pub struct Inbound {
    /// The ID of the connection it arrived on.
    pub connection: u64,
    /// Arrival order across the whole server, starting at 1.
    pub seq: u64,
    /// The peer's address.
    pub peer: Arc<str>,
    /// When the server took it from the connection.
    pub received_at: SystemTime,
    /// Exactly the de-framed bytes.
    pub payload: Bytes,
    /// Where the header fields lie in `payload`: offsets rather than slices, so making an
    /// `Inbound` touches no reference count.
    header: HeaderSpans,
    /// What the payload holds: one message, a batch, several concatenated, or none.
    pub shape: Shape,
    /// The frame carried `MLLP_TRAILING_BYTES`: part of it was discarded.
    pub damaged: bool,
    /// MSH-9 says this is itself an acknowledgement.
    pub is_ack: bool,
}

/// A field's place in the payload: `start..end`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Span {
    start: usize,
    end: usize,
}

/// The header fields an `Inbound` exposes, as places in its payload.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
struct HeaderSpans {
    control_id: Option<Span>,
    message_type: Option<Span>,
    msh7: Option<Span>,
    msh3: Option<Span>,
    msh4: Option<Span>,
}

impl Inbound {
    /// Scan the header once; the fields stay places in the payload.
    pub fn new(
        connection: u64,
        seq: u64,
        peer: Arc<str>,
        payload: Bytes,
        damaged: bool,
    ) -> Inbound {
        let scan = hl7::scan(&payload);
        let header = HeaderSpans::of(&payload, &scan);
        let is_ack = scan.msh.as_ref().is_some_and(|m| m.is_ack());
        let shape = scan.shape;
        Inbound {
            connection,
            seq,
            peer,
            received_at: SystemTime::now(),
            header,
            shape,
            damaged,
            is_ack,
            payload,
        }
    }

    /// [`Inbound::new`] with the header already scanned (`scan` reads `payload`'s bytes) and the
    /// arrival time given (the frames of one read share it).
    pub(crate) fn scanned(
        connection: u64,
        seq: u64,
        peer: Arc<str>,
        payload: Bytes,
        damaged: bool,
        scan: &hl7::Scan<'_>,
        received_at: SystemTime,
    ) -> Inbound {
        Inbound {
            connection,
            seq,
            peer,
            received_at,
            header: HeaderSpans::of(&payload, scan),
            shape: scan.shape,
            damaged,
            is_ack: scan.msh.as_ref().is_some_and(|m| m.is_ack()),
            payload,
        }
    }

    fn span(&self, span: Option<Span>) -> Option<&[u8]> {
        span.map(|s| &self.payload[s.start..s.end])
    }

    /// MSH-10 as written.
    pub fn control_id(&self) -> Option<&[u8]> {
        self.span(self.header.control_id)
    }

    /// MSH-9 as written.
    pub fn message_type(&self) -> Option<&[u8]> {
        self.span(self.header.message_type)
    }

    /// MSH-7 (date/time of message) as written.
    pub fn msh7(&self) -> Option<&[u8]> {
        self.span(self.header.msh7)
    }

    /// MSH-3 (sending application) as written.
    pub fn msh3(&self) -> Option<&[u8]> {
        self.span(self.header.msh3)
    }

    /// MSH-4 (sending facility) as written.
    pub fn msh4(&self) -> Option<&[u8]> {
        self.span(self.header.msh4)
    }

    /// A field as a slice sharing the payload's memory, for what outlives the `Inbound`.
    fn shared(&self, span: Option<Span>) -> Option<Bytes> {
        span.map(|s| self.payload.slice(s.start..s.end))
    }

    /// MSH-10 as a slice of the payload.
    pub(crate) fn control_id_bytes(&self) -> Option<Bytes> {
        self.shared(self.header.control_id)
    }

    /// The identity de-duplication remembers: MSH-3, MSH-4, MSH-10 and MSH-7. `None` for what
    /// is never de-duplicated: an empty MSH-10, a batch or concatenated frame, an inbound ACK, a
    /// damaged frame.
    pub(crate) fn dedupe_key(&self) -> Option<DedupeKey> {
        let control_id = self.control_id_bytes().filter(|c: &Bytes| !c.is_empty())?;
        if self.shape != Shape::Single || self.is_ack || self.damaged {
            return None;
        }
        let or_empty = |f: Option<Span>| self.shared(f).unwrap_or_default();
        Some(DedupeKey {
            sending_application: or_empty(self.header.msh3),
            sending_facility: or_empty(self.header.msh4),
            control_id,
            date_time: or_empty(self.header.msh7),
        })
    }

    /// MSH-10, as text with invalid UTF-8 replaced; empty without one.
    pub(crate) fn control_id_lossy(&self) -> String {
        lossy(self.control_id())
    }

    /// MSH-9, as text with invalid UTF-8 replaced; empty without one.
    pub(crate) fn message_type_lossy(&self) -> String {
        lossy(self.message_type())
    }
}

impl HeaderSpans {
    /// The places of the fields `scan` found; `scan` must have read `payload`.
    fn of(payload: &[u8], scan: &hl7::Scan<'_>) -> HeaderSpans {
        let Some(msh) = &scan.msh else {
            return HeaderSpans::default();
        };
        // Fields as places in the segment (read off the header's index), moved to the payload.
        let Some(base) = (msh.segment.as_ptr() as usize).checked_sub(payload.as_ptr() as usize)
        else {
            return HeaderSpans::default();
        };
        if let Some(fields) = msh.indexed_to_msh10() {
            let span = |n: usize| {
                let (start, end) = fields.span(n);
                let (start, end) = (base + start, base + end);
                (end <= payload.len()).then_some(Span { start, end })
            };
            return HeaderSpans {
                control_id: span(10),
                message_type: span(9),
                msh7: span(7),
                msh3: span(3),
                msh4: span(4),
            };
        }
        let span = |n: usize| {
            let (start, end) = msh.span(n)?;
            let (start, end) = (base + start, base + end);
            (end <= payload.len()).then_some(Span { start, end })
        };
        HeaderSpans {
            control_id: span(10),
            message_type: span(9),
            msh7: span(7),
            msh3: span(3),
            msh4: span(4),
        }
    }
}

/// A message's duplicate key, each field as written: a different sender (MSH-3, MSH-4) reusing a
/// control ID and time is a different message.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub(crate) struct DedupeKey {
    /// MSH-3.
    pub sending_application: Bytes,
    /// MSH-4.
    pub sending_facility: Bytes,
    /// MSH-10, never empty.
    pub control_id: Bytes,
    /// MSH-7.
    pub date_time: Bytes,
}

fn lossy(bytes: Option<&[u8]>) -> String {
    bytes
        .map(|b| String::from_utf8_lossy(b).into_owned())
        .unwrap_or_default()
}

/// A sink's answer for one message. `detail` says why it failed or rejected (an OS error, an
/// exit status), never payload content.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SinkResult {
    /// Whether it was committed, failed, or rejected.
    pub disposition: Disposition,
    /// Why it failed or was rejected.
    pub detail: Option<String>,
    /// Committed earlier (a de-duplicating sink found it already stored): answered positively,
    /// not stored again.
    pub duplicate: bool,
    /// How the message is answered; by default the server builds the answer from the
    /// disposition.
    pub reply: Reply,
}

/// How the server answers a message once its sink has returned. A sink that hands messages on
/// (a relay) knows better than the disposition what the peer may be told: the answers of the
/// system it handed them to, or nothing at all.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum Reply {
    /// The answer the MSH-15 table gives for the disposition.
    #[default]
    Table,
    /// The table's answer, a negative one saying this in MSA-3 instead of the usual phrase.
    Saying(&'static str),
    /// The table's answer worded by the committing program (a command's first line, made safe:
    /// no control bytes, no separators): MSA-3 whatever the code, and ERR-8 when negative.
    Worded(String),
    /// Answers that came from elsewhere, framed and written byte for byte, in order (none is
    /// allowed). With `close`, the connection then ends for that cause, and no later message of
    /// it is answered: its fate is as unknown to the peer as to the sink.
    Relayed {
        /// The answers, each one frame's payload.
        acks: Vec<Bytes>,
        /// End the connection after them, for this cause.
        close: Option<Cause>,
    },
}

impl SinkResult {
    /// Kept: answered positively.
    pub fn committed() -> Self {
        SinkResult {
            disposition: Disposition::Committed,
            detail: None,
            duplicate: false,
            reply: Reply::Table,
        }
    }
    /// Kept earlier: answered positively, not stored again.
    pub fn duplicate() -> Self {
        SinkResult {
            duplicate: true,
            ..SinkResult::committed()
        }
    }
    /// Not kept: the commit failed, `detail` says why.
    pub fn failed(detail: impl Into<String>) -> Self {
        SinkResult {
            disposition: Disposition::CommitFailed,
            detail: Some(detail.into()),
            duplicate: false,
            reply: Reply::Table,
        }
    }
    /// Not kept: the message is refused, `detail` says why.
    pub fn rejected(detail: impl Into<String>) -> Self {
        SinkResult {
            disposition: Disposition::Rejected,
            detail: Some(detail.into()),
            duplicate: false,
            reply: Reply::Table,
        }
    }
    /// Answered with `reply` instead of the table's answer.
    pub(crate) fn replying(self, reply: Reply) -> Self {
        SinkResult { reply, ..self }
    }
}

/// A boxed future a sink returns.
pub(crate) type SinkFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// Where messages are committed. Implementations must be durable (or as durable as they claim)
/// when the future resolves: the ACK follows at once.
pub trait Sink: Send + Sync + 'static {
    /// Commit one message.
    fn commit<'a>(&'a self, message: &'a Inbound) -> SinkFuture<'a, SinkResult>;

    /// Commit messages that arrived together, in order, one result each (same length and order
    /// as `messages`). Override to share one flush, fsync or transaction between them.
    fn commit_batch<'a>(&'a self, messages: &'a [Inbound]) -> SinkFuture<'a, Vec<SinkResult>> {
        Box::pin(async move {
            let mut results = Vec::with_capacity(messages.len());
            for message in messages {
                results.push(self.commit(message).await);
            }
            results
        })
    }

    /// Optional, for speed only: commit the whole batch before returning, when this sink's
    /// writes never wait (a pipe or a file that takes the bytes at once), and give the one
    /// result that holds for every message of it; the server then skips `commit_batch`'s future.
    /// `None` (the default, and the answer whenever a write could wait) means "use
    /// `commit_batch`": a sink that never overrides this loses nothing but a little speed.
    fn commit_now(&self, _messages: &[Inbound]) -> Option<SinkResult> {
        None
    }

    /// Optional, for speed only: whether a connection may start a batch's commit while its
    /// earlier batches are still being committed. A sink that says yes keeps one connection's
    /// commits in the order they were first polled (the server polls each once as it starts
    /// it) and never waits for a later one to finish an earlier one. Answers are still written
    /// in arrival order, each after its own commit. `false` (the default): one at a time.
    fn overlapping(&self) -> bool {
        false
    }

    /// Called when a run starts, after `Listening`: where to report the store's state (a
    /// database link lost and back). Most sinks have nothing to report.
    fn report_to(&self, _reports: crate::server::StoreReports) {}

    /// How the sink grouped its commits so far, for sinks that share one transaction between
    /// messages that arrived together.
    fn commit_groups(&self) -> Option<CommitGroups> {
        None
    }
}

/// Commits everything and keeps nothing: for benchmarks and tests.
#[derive(Debug, Default, Clone, Copy)]
pub struct DiscardSink;

impl Sink for DiscardSink {
    fn commit<'a>(&'a self, _message: &'a Inbound) -> SinkFuture<'a, SinkResult> {
        Box::pin(std::future::ready(SinkResult::committed()))
    }

    fn commit_batch<'a>(&'a self, messages: &'a [Inbound]) -> SinkFuture<'a, Vec<SinkResult>> {
        Box::pin(std::future::ready(vec![
            SinkResult::committed();
            messages.len()
        ]))
    }
}

/// `commit` for a sink whose one message is a batch of one; `missing` is the failure when the
/// batch came back empty.
pub(crate) fn commit_as_batch<'a, S: Sink>(
    sink: &'a S,
    message: &'a Inbound,
    missing: &'static str,
) -> SinkFuture<'a, SinkResult> {
    Box::pin(async move {
        let mut results = sink.commit_batch(std::slice::from_ref(message)).await;
        results.pop().unwrap_or_else(|| SinkResult::failed(missing))
    })
}

/// Make sure a batch result has exactly one entry per message: a sink that returns too few
/// leaves the rest failed, never acknowledged positively.
pub(crate) fn pad_results(mut results: Vec<SinkResult>, len: usize) -> Vec<SinkResult> {
    results.truncate(len);
    while results.len() < len {
        results.push(SinkResult::failed("the sink returned no result"));
    }
    results
}
