//! The commit step: a [`Sink`] takes each inbound message and says whether it is committed.
//! The server writes an ACK only after the sink has returned.

pub mod exec;
pub mod out_dir;
#[cfg(feature = "sqlite")]
pub mod sqlite;
pub mod stdout;

use crate::ack::Disposition;
use crate::hl7::{self, Shape};
use bytes::Bytes;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::time::SystemTime;

pub use exec::{ExecOptions, ExecSink};
pub use out_dir::OutDirSink;
#[cfg(feature = "sqlite")]
pub use sqlite::{SqliteError, SqliteSink};
pub use stdout::{OutputFormat, StdoutSink};

/// One de-framed inbound message and what the server knows about it.
#[derive(Debug, Clone)]
pub struct Inbound {
    pub connection: u64,
    /// Arrival order across the whole server, starting at 1.
    pub seq: u64,
    pub peer: Arc<str>,
    pub received_at: SystemTime,
    /// Exactly the de-framed bytes.
    pub payload: Bytes,
    /// MSH-10 as written (a slice of `payload`).
    pub control_id: Option<Bytes>,
    /// MSH-9 as written (a slice of `payload`).
    pub message_type: Option<Bytes>,
    /// MSH-7 (date/time of message) as written (a slice of `payload`).
    pub msh7: Option<Bytes>,
    /// MSH-3 (sending application) as written (a slice of `payload`).
    pub msh3: Option<Bytes>,
    /// MSH-4 (sending facility) as written (a slice of `payload`).
    pub msh4: Option<Bytes>,
    pub shape: Shape,
    /// The frame carried `MLLP_TRAILING_BYTES`: part of it was discarded.
    pub damaged: bool,
    /// MSH-9 says this is itself an acknowledgement.
    pub is_ack: bool,
}

impl Inbound {
    /// Scan the header once; the fields stay slices of the payload.
    pub fn new(
        connection: u64,
        seq: u64,
        peer: Arc<str>,
        payload: Bytes,
        damaged: bool,
    ) -> Inbound {
        let scan = hl7::scan(&payload);
        let now = SystemTime::now();
        Inbound::scanned(connection, seq, peer, payload.clone(), damaged, &scan, now)
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
        let field = |f: Option<&[u8]>| f.map(|s| payload.slice_ref(s));
        let (control_id, message_type, msh7, is_ack) = match &scan.msh {
            Some(msh) => (
                field(msh.control_id()),
                field(msh.message_type()),
                field(msh.date_time()),
                msh.is_ack(),
            ),
            None => (None, None, None, false),
        };
        let (msh3, msh4) = match &scan.msh {
            Some(msh) => (field(msh.field(3)), field(msh.field(4))),
            None => (None, None),
        };
        Inbound {
            connection,
            seq,
            peer,
            received_at,
            control_id,
            message_type,
            msh7,
            msh3,
            msh4,
            shape: scan.shape,
            damaged,
            is_ack,
            payload,
        }
    }

    /// The identity de-duplication remembers: MSH-3, MSH-4, MSH-10 and MSH-7. `None` for what
    /// is never de-duplicated: an empty MSH-10, a batch or concatenated frame, an inbound ACK, a
    /// damaged frame.
    pub fn dedupe_key(&self) -> Option<DedupeKey> {
        let control_id = self.control_id.clone().filter(|c| !c.is_empty())?;
        if self.shape != Shape::Single || self.is_ack || self.damaged {
            return None;
        }
        let or_empty = |f: &Option<Bytes>| f.clone().unwrap_or_default();
        Some(DedupeKey {
            sending_application: or_empty(&self.msh3),
            sending_facility: or_empty(&self.msh4),
            control_id,
            date_time: or_empty(&self.msh7),
        })
    }

    pub fn control_id_lossy(&self) -> String {
        lossy(self.control_id.as_deref())
    }

    pub fn message_type_lossy(&self) -> String {
        lossy(self.message_type.as_deref())
    }
}

/// A message's duplicate key, each field as written: a different sender (MSH-3, MSH-4) reusing a
/// control ID and time is a different message.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct DedupeKey {
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
    pub disposition: Disposition,
    pub detail: Option<String>,
    /// Committed earlier (a de-duplicating sink found it already stored): answered positively,
    /// not stored again.
    pub duplicate: bool,
}

impl SinkResult {
    pub fn committed() -> Self {
        SinkResult {
            disposition: Disposition::Committed,
            detail: None,
            duplicate: false,
        }
    }
    pub fn duplicate() -> Self {
        SinkResult {
            duplicate: true,
            ..SinkResult::committed()
        }
    }
    pub fn failed(detail: impl Into<String>) -> Self {
        SinkResult {
            disposition: Disposition::CommitFailed,
            detail: Some(detail.into()),
            duplicate: false,
        }
    }
    pub fn rejected(detail: impl Into<String>) -> Self {
        SinkResult {
            disposition: Disposition::Rejected,
            detail: Some(detail.into()),
            duplicate: false,
        }
    }
}

pub type SinkFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

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

/// Make sure a batch result has exactly one entry per message: a sink that returns too few
/// leaves the rest failed, never acknowledged positively.
pub(crate) fn pad_results(mut results: Vec<SinkResult>, len: usize) -> Vec<SinkResult> {
    results.truncate(len);
    while results.len() < len {
        results.push(SinkResult::failed("the sink returned no result"));
    }
    results
}
