//! What the server reports: typed events on a bounded channel. No event carries payload bytes;
//! a message's event names it by its header (MSH-10 and MSH-9), as HL7 receivers' logs do.
//! Rendering them (human lines, JSON) is the embedder's business.

use crate::ack::AckCode;
use crate::cause::{Cause, Hint};
use crate::tls::AcceptedTls;
use crate::warning::{Warning, WarningCode};
use std::net::SocketAddr;
use std::sync::Arc;
use tokio::sync::mpsc;

/// One connection's number, unique within a server run, starting at 1.
pub type ConnectionId = u64;

/// Why a message was not answered positively, as reported in `nack` events.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NackWhy {
    /// A reason from the ACK builder (`handler-rejected`, `uncorrelatable-inbound`,
    /// `discarded-bytes`).
    Reason(crate::ack::NackReason),
    /// The sink could not commit the message: the handler's failure, so reason
    /// `handler-rejected`, with detail `commit-failed`.
    CommitFailed,
    /// A negative code forced (`--ack`) on a message that was committed and is sound: reason
    /// `handler-rejected`, with detail `forced`.
    Forced,
}

impl NackWhy {
    /// The reason, always one of the three public ones.
    pub fn as_str(self) -> &'static str {
        match self {
            NackWhy::Reason(reason) => reason.as_str(),
            NackWhy::CommitFailed | NackWhy::Forced => {
                crate::ack::NackReason::HandlerRejected.as_str()
            }
        }
    }

    /// What the reason alone does not say: `commit-failed` when the sink failed rather than
    /// rejected, `forced` when the message was committed and only the code is negative.
    pub fn detail(self) -> Option<&'static str> {
        match self {
            NackWhy::Reason(_) => None,
            NackWhy::CommitFailed => Some("commit-failed"),
            NackWhy::Forced => Some("forced"),
        }
    }
}

/// Everything the server tells its embedder.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum ServerEvent {
    /// Always the first event of [`crate::server::Server::run`].
    Listening {
        /// The address the listener is bound to.
        addr: SocketAddr,
    },
    /// Always the first event of [`crate::server::Server::dial`]: where it connects.
    Dialling {
        /// The endpoint dialled, `host:port`.
        target: Arc<str>,
    },
    /// A connect of [`crate::server::Server::dial`] failed; the next one follows `retry_in`.
    DialFailed {
        /// The endpoint dialled, `host:port`.
        target: Arc<str>,
        /// Failed connects in a row, this one included.
        attempt: u32,
        /// The class of the failure (transient or permanent: dialling goes on either way).
        cause: Cause,
        /// The step that failed.
        phase: crate::transport::Phase,
        /// What failed, in words: host, address, OS or TLS error.
        detail: String,
        /// The wait before the next connect.
        retry_in: std::time::Duration,
    },
    /// [`crate::server::Server::dial`] connected; the connection is served from now on.
    Dialled {
        /// The connection's ID within this server.
        connection: ConnectionId,
        /// The endpoint dialled, `host:port`.
        target: Arc<str>,
        /// What TLS negotiated; `None` on plain TCP.
        tls: Option<Box<crate::tls::TlsSummary>>,
    },
    /// A connection was accepted and is served from now on.
    ConnectionOpened {
        /// The connection's ID within this server.
        connection: ConnectionId,
        /// The peer's address.
        peer: Arc<str>,
        /// What the TLS handshake established; `None` on plain TCP.
        tls: Option<Box<AcceptedTls>>,
    },
    /// An accepted socket never became a connection (a failed TLS handshake, say).
    AcceptFailed {
        /// The connection's ID within this server.
        connection: ConnectionId,
        /// The peer's address.
        peer: Arc<str>,
        /// The class of the failure.
        cause: Cause,
        /// What failed, in words.
        detail: String,
        /// What would fix it, when that is known (the client's certificate, its TLS settings).
        hint: Option<Hint>,
    },
    /// Accepting a new socket failed (out of descriptors and the like); `count` is the number of
    /// failed accepts so far in this run. The accept loop backs off before trying again.
    AcceptError {
        /// What the operating system said.
        error: String,
        /// Failed accepts so far in this run.
        count: u64,
    },
    /// `code` is the framing code for `framing-fatal` (and `MLLP_FRAME_TOO_LARGE` for
    /// `buffer-budget`), else `None`.
    ConnectionClosed {
        /// The connection's ID within this server.
        connection: ConnectionId,
        /// The peer's address.
        peer: Arc<str>,
        /// Why it closed.
        cause: Cause,
        /// The framing code behind the close, if one is.
        code: Option<WarningCode>,
    },
    /// A tolerated deviation (or a non-framing warning such as an unknown MSH-15).
    Warning {
        /// The connection's ID within this server.
        connection: ConnectionId,
        /// The deviation, with its code and stream offset.
        warning: Warning,
    },
    /// One message's disposition. `ack_code` is `None` when no ACK was written (an inbound ACK,
    /// `--ack none`, or a policy that stays silent).
    Message {
        /// The connection's ID within this server.
        connection: ConnectionId,
        /// The payload's length in bytes.
        bytes: usize,
        /// The ACK code written first, if any.
        ack_code: Option<AckCode>,
        /// It was committed before: answered positively, not stored again.
        duplicate: bool,
        /// How long the commit took; `None` when the message never reached the sink (refused
        /// unread: no MSH-10, damaged, a batch not answered per message).
        commit_ms: Option<f64>,
        /// MSH-10 as written, when the message has one.
        control_id: Option<bytes::Bytes>,
        /// MSH-9 as written (`ADT^A01`), when the message has one.
        message_type: Option<bytes::Bytes>,
    },
    /// A negative ACK was written, and why.
    Nack {
        /// The connection's ID within this server.
        connection: ConnectionId,
        /// The negative code written.
        ack_code: AckCode,
        /// Why the answer is negative.
        why: NackWhy,
    },
    /// The sink said why it failed or rejected (an OS error, an exit status); never payload.
    SinkFailed {
        /// The connection's ID within this server.
        connection: ConnectionId,
        /// The sink's words: never payload.
        detail: String,
    },
    /// A security warning about how the server is set up, by its code.
    SecurityWarning {
        /// Which warning.
        code: WarningCode,
    },
    /// The sink's store became unreachable (a database link lost): until [`StoreRestored`],
    /// every message is answered negatively while the sink reconnects. `detail` says why, never
    /// with a password or payload.
    ///
    /// [`StoreRestored`]: ServerEvent::StoreRestored
    StoreLost {
        /// Why the store is unreachable.
        detail: String,
    },
    /// The store is reachable again after `down_ms` milliseconds; `refused` messages were
    /// answered negatively meanwhile.
    StoreRestored {
        /// How long the store was unreachable, in milliseconds.
        down_ms: u64,
        /// Messages answered negatively meanwhile.
        refused: u64,
    },
    /// The sink's store went wrong in a way no single message's answer says: a file moved under
    /// it, a row it cannot read, a write that failed after the answer (a relay's settle or
    /// record). `detail` says what and what was done, never payload.
    StoreError {
        /// What went wrong, and what was done about it.
        detail: String,
    },
    /// A line a command sink's command wrote on its stderr while committing a message of
    /// `connection`: the command's own words, never the server's. At most
    /// [`EXEC_STDERR_LINE_MAX`](crate::server::sink::exec::EXEC_STDERR_LINE_MAX) bytes of it;
    /// `truncated` when the line was longer.
    ExecStderr {
        /// The connection's ID within this server.
        connection: ConnectionId,
        /// The command's process ID (`sh -c`'s).
        pid: u32,
        /// The line, without its newline.
        line: String,
        /// The line was longer than the cap and was cut.
        truncated: bool,
    },
}

/// Where a sink reports on itself: how its store is doing, what its command wrote on stderr.
/// It holds the server's event channel weakly, so a
/// sink outliving the server never keeps the embedder's reader waiting.
#[derive(Debug, Clone)]
pub struct StoreReports(mpsc::WeakSender<ServerEvent>);

impl StoreReports {
    /// Send `event` (a store event, a command's stderr line), waiting for room like every other
    /// event.
    pub(crate) async fn send(&self, event: ServerEvent) {
        if let Some(tx) = self.0.upgrade() {
            let _ = tx.send(event).await;
        }
    }
}

/// Where events go: nowhere, or a bounded channel. A full channel slows the server down rather
/// than losing events.
#[derive(Debug, Clone, Default)]
pub(crate) struct Events {
    tx: Option<mpsc::Sender<ServerEvent>>,
    /// Send `Message` and `Nack` events (one per message).
    per_message: bool,
}

impl Events {
    pub(crate) fn new(tx: Option<mpsc::Sender<ServerEvent>>, per_message: bool) -> Self {
        Events { tx, per_message }
    }

    pub(crate) async fn emit(&self, event: ServerEvent) {
        if !self.wants(&event) {
            return;
        }
        if let Some(tx) = &self.tx {
            // A closed receiver means nobody listens any more; the server carries on.
            let _ = tx.send(event).await;
        }
    }

    /// Where a sink reports its store's state, when anyone listens.
    pub(crate) fn store_reports(&self) -> Option<StoreReports> {
        self.tx.as_ref().map(|tx| StoreReports(tx.downgrade()))
    }

    /// Whether per-message events would be sent: when not, they are not even made.
    pub(crate) fn per_message(&self) -> bool {
        self.tx.is_some() && self.per_message
    }

    /// Whether `event` would be sent at all.
    pub(crate) fn wants(&self, event: &ServerEvent) -> bool {
        self.tx.is_some()
            && (self.per_message
                || !matches!(
                    event,
                    ServerEvent::Message { .. } | ServerEvent::Nack { .. }
                ))
    }

    /// Send `events` in order and empty it, taking channel room for many at once: one wait per
    /// batch of messages rather than one per event.
    pub(crate) async fn emit_all(&self, events: &mut Vec<ServerEvent>) {
        let Some(tx) = &self.tx else {
            events.clear();
            return;
        };
        let mut events = events.drain(..);
        loop {
            let n = events.len().min(tx.max_capacity());
            if n == 0 {
                return;
            }
            let Ok(permits) = tx.reserve_many(n).await else {
                // Nobody listens any more; the server carries on.
                return;
            };
            for (permit, event) in permits.zip(&mut events) {
                permit.send(event);
            }
        }
    }
}
