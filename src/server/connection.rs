//! One connection: read, de-frame, commit in arrival order, acknowledge in the same order, and
//! contain every failure to this connection. Frames already complete when a fatal byte arrives
//! are committed and acknowledged before the connection closes.

use super::event::ServerEvent;
use super::policy::{Action, Decision};
use super::sink::{pad_results, Inbound, SinkResult};
use super::stats::StatsSnapshot;
use super::{Accepted, AckMode, Shared, Shutdown};
use crate::ack::{self, AckCode, AckContext, BuiltAck, Disposition, NackReason};
use crate::cause::{classify_io, Cause};
use crate::framing::{encode_frame, Decoded, Frame, FramingError, MllpCodec};
use crate::hl7::{self, Scan, Shape};
use crate::server::clock::Utc;
use crate::server::event::NackWhy;
use crate::warning::{Warning, WarningCode};
use bytes::BytesMut;
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};
use tokio_util::codec::Decoder;

const READ_CHUNK: usize = 64 * 1024;
/// The first read of a connection with nothing buffered: small, so idle connections stay cheap.
const FIRST_READ: usize = 2048;
/// After a close with input still arriving, keep reading (and discarding) this long so the
/// kernel sends FIN, not RST, and the peer can still read the ACKs already written.
const LINGER: Duration = Duration::from_millis(500);
const LINGER_BYTES: usize = 1024 * 1024;
/// While a commit is in flight the connection keeps reading, up to this much buffered input: the
/// next batch is ready when the commit returns, and a slow sink still pushes back on the peer.
const READ_AHEAD: usize = 256 * 1024;

/// How a connection ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct End {
    pub(crate) cause: Cause,
    pub(crate) code: Option<WarningCode>,
    /// Ended by a policy's reset: no linger.
    pub(crate) abort: bool,
}

impl End {
    fn cause(cause: Cause) -> End {
        End {
            cause,
            code: None,
            abort: false,
        }
    }
}

/// Serve `stream` until it ends; reports open and close.
pub(crate) async fn serve<S>(
    shared: &Shared,
    accepted: Accepted<S>,
    id: u64,
    peer: Arc<str>,
    shutdown: &Shutdown,
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
    let mut conn = Connection {
        shared,
        id,
        peer: Arc::clone(&peer),
        codec: MllpCodec::new(shared.config.tolerance, shared.config.max_frame),
        buf: BytesMut::new(),
        out: BytesMut::new(),
        eof: false,
        busy: false,
        ended: None,
        tally: StatsSnapshot::default(),
        ack: AckContext::default(),
        stamped: None,
        ack_buf: Vec::new(),
        stream: &mut stream,
    };
    let end = conn.run(shutdown).await;
    shared.stats.absorb(&mut conn.tally);
    let lingering = !conn.eof && !end.abort && !shutdown.immediate.is_cancelled();
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
    if lingering {
        linger(&mut stream, shutdown).await;
    }
}

/// Send FIN, then discard what the peer still sends for a bounded time.
async fn linger<S: AsyncRead + AsyncWrite + Unpin>(stream: &mut S, shutdown: &Shutdown) {
    let work = async {
        let _ = stream.shutdown().await;
        let mut sink = vec![0u8; 8192];
        let mut total = 0;
        while total < LINGER_BYTES {
            match stream.read(&mut sink).await {
                Ok(0) | Err(_) => break,
                Ok(n) => total += n,
            }
        }
    };
    tokio::select! {
        _ = work => {}
        _ = tokio::time::sleep(LINGER) => {}
        _ = shutdown.immediate.cancelled() => {}
    }
}

struct Connection<'a, S> {
    shared: &'a Shared,
    id: u64,
    peer: Arc<str>,
    codec: MllpCodec,
    buf: BytesMut,
    /// ACK frames waiting to be written together.
    out: BytesMut,
    eof: bool,
    /// The last read filled the small first-read array: more is coming, keep a real buffer.
    busy: bool,
    /// A read ahead (during a commit) failed: the connection ends once what is buffered has been
    /// committed and answered.
    ended: Option<End>,
    /// This connection's counters since they were last added to the server's.
    tally: StatsSnapshot,
    /// Reused for every ACK: the control ID is rewritten in place, MSH-7 once a second.
    ack: AckContext,
    /// The second `ack.timestamp` shows.
    stamped: Option<u64>,
    /// The last ACK's payload buffer, reused for the next.
    ack_buf: Vec<u8>,
    stream: &'a mut S,
}

enum Read {
    Data(usize),
    Eof,
    Failed(std::io::Error),
    Idle,
    Stop,
}

impl<S: AsyncRead + AsyncWrite + Unpin + Send> Connection<'_, S> {
    async fn run(&mut self, shutdown: &Shutdown) -> End {
        loop {
            let mut frames = Vec::new();
            let mut fatal = None;
            loop {
                let next = if self.eof {
                    self.codec.decode_eof(&mut self.buf)
                } else {
                    self.codec.decode(&mut self.buf)
                };
                match next {
                    Ok(Some(Decoded::Frame(frame))) => frames.push(frame),
                    Ok(Some(Decoded::LateWarning { warning, .. })) => self.warn(warning).await,
                    Ok(None) => break,
                    Err(e) => {
                        fatal = Some(e);
                        break;
                    }
                }
            }
            if !frames.is_empty() {
                let end = self.process(frames, shutdown).await;
                self.shared.stats.absorb(&mut self.tally);
                if let Some(end) = end {
                    return end;
                }
                if fatal.is_none() {
                    // Input read ahead during the commit (frames, end of stream) is decoded
                    // before waiting for more: the peer may be waiting for these ACKs.
                    continue;
                }
            }
            match fatal {
                Some(FramingError::Fatal { code, .. }) => {
                    return End {
                        code: Some(code),
                        ..End::cause(Cause::FramingFatal)
                    }
                }
                // At the end of the stream, an unfinished frame is lost with the connection.
                Some(_) if self.eof => return End::cause(Cause::PeerClosed),
                Some(FramingError::Io(e)) => return End::cause(classify_io(&e)),
                Some(_) => return End::cause(Cause::PeerClosed),
                None if self.eof => return End::cause(Cause::PeerClosed),
                None => {}
            }
            if let Some(end) = self.ended.take() {
                return end;
            }
            match self.read(shutdown).await {
                Read::Data(n) => self.tally.bytes_in += n as u64,
                Read::Eof => self.eof = true,
                Read::Failed(e) => return End::cause(classify_io(&e)),
                Read::Idle => return End::cause(Cause::IdleTimeout),
                Read::Stop => return End::cause(Cause::Shutdown),
            }
        }
    }

    async fn read(&mut self, shutdown: &Shutdown) -> Read {
        let idle = self.shared.config.idle_timeout;
        // An idle connection holds no read buffer: with nothing pending, the first read lands in
        // a small array inside the task and the buffer is allocated only for what arrives.
        let lazy = self.buf.is_empty() && !self.busy;
        let mut first = [0u8; FIRST_READ];
        if lazy {
            self.buf = BytesMut::new();
        } else {
            self.buf.reserve(READ_CHUNK);
        }
        let read = async {
            let read_once = async {
                if lazy {
                    self.stream.read(&mut first).await
                } else {
                    self.stream.read_buf(&mut self.buf).await
                }
            };
            match idle {
                Some(limit) => tokio::time::timeout(limit, read_once).await.ok(),
                None => Some(read_once.await),
            }
        };
        let result = tokio::select! {
            biased;
            _ = shutdown.immediate.cancelled() => return Read::Stop,
            _ = shutdown.graceful.cancelled() => return Read::Stop,
            result = read => result,
        };
        match result {
            None => Read::Idle,
            Some(Ok(0)) => Read::Eof,
            Some(Ok(n)) => {
                if lazy {
                    self.buf.extend_from_slice(&first[..n]);
                }
                self.busy = n >= FIRST_READ;
                Read::Data(n)
            }
            Some(Err(e)) => Read::Failed(e),
        }
    }

    /// Read more input while a commit is in flight; `false` once reading ahead must stop.
    async fn read_ahead(&mut self) -> bool {
        self.buf.reserve(READ_CHUNK);
        match self.stream.read_buf(&mut self.buf).await {
            Ok(0) => {
                self.eof = true;
                false
            }
            Ok(n) => {
                self.tally.bytes_in += n as u64;
                self.busy = true;
                true
            }
            Err(e) => {
                self.ended = Some(End::cause(classify_io(&e)));
                false
            }
        }
    }

    async fn warn(&mut self, warning: Warning) {
        self.tally.warning(warning.code);
        self.shared
            .events
            .emit(ServerEvent::Warning {
                connection: self.id,
                warning,
            })
            .await;
    }

    /// Commit `frames` in order, then write their ACKs in the same order. `Some` ends the
    /// connection.
    async fn process(&mut self, frames: Vec<Frame>, shutdown: &Shutdown) -> Option<End> {
        let shared = self.shared;
        let mut messages = Vec::with_capacity(frames.len());
        // Each header is scanned once: for the `Inbound` and again for its ACK.
        let mut scans: Vec<Scan<'_>> = Vec::with_capacity(frames.len());
        let mut decisions: Vec<Decision> = Vec::with_capacity(frames.len());
        let mut close_after = false;
        let received_at = SystemTime::now();
        for frame in &frames {
            for warning in &frame.warnings {
                self.warn(*warning).await;
            }
            let damaged = frame.is_damaged();
            let scan = hl7::scan(&frame.payload);
            let message = Inbound::scanned(
                self.id,
                shared.next_seq(),
                Arc::clone(&self.peer),
                frame.payload.clone(),
                damaged,
                &scan,
                received_at,
            );
            let decision = shared.policy.decide(&message);
            messages.push(message);
            scans.push(scan);
            decisions.push(decision);
            if decision.close_after || decision.reset {
                // Later frames are neither committed nor answered: the connection ends here.
                close_after = true;
                break;
            }
        }

        let started = Instant::now();
        let commit = commit(shared, &messages, &decisions);
        tokio::pin!(commit);
        let mut reading = !self.eof && !close_after;
        let results = loop {
            let room = reading && self.buf.len() < READ_AHEAD;
            tokio::select! {
                biased;
                _ = shutdown.immediate.cancelled() => return Some(End::cause(Cause::Shutdown)),
                results = &mut commit => break results,
                _ = shutdown.graceful.cancelled(), if room => reading = false,
                more = self.read_ahead(), if room => reading = more,
            }
        };
        let commit_ms = started.elapsed().as_secs_f64() * 1000.0;

        self.stamp(SystemTime::now());
        self.out.clear();
        let mut results = results.into_iter();
        for ((message, decision), scan) in messages.iter().zip(&decisions).zip(&scans) {
            let (result, duplicate) = match decision.action {
                Action::Commit => {
                    let result = results
                        .next()
                        .unwrap_or_else(|| SinkResult::failed("the sink returned no result"));
                    let duplicate = result.duplicate;
                    (result, duplicate)
                }
                Action::Duplicate => (SinkResult::committed(), true),
                Action::Fail => (SinkResult::failed("refused by policy"), false),
                Action::Reject => (SinkResult::rejected("refused by policy"), false),
            };
            if let Some(detail) = result.detail {
                shared
                    .events
                    .emit(ServerEvent::SinkFailed {
                        connection: self.id,
                        detail,
                    })
                    .await;
            }
            if result.disposition == Disposition::Committed {
                shared.policy.committed(message);
            }
            if let Some(delay) = decision.ack_delay {
                if let Some(end) = self.flush(shutdown).await {
                    return Some(end);
                }
                tokio::select! {
                    _ = shutdown.immediate.cancelled() => return Some(End::cause(Cause::Shutdown)),
                    _ = tokio::time::sleep(delay) => {}
                }
            }
            let silent = decision.silent || decision.reset;
            let ack_code = self.answer(message, scan, result.disposition, silent).await;
            let s = &mut self.tally;
            s.messages += 1;
            match result.disposition {
                Disposition::Committed if duplicate => s.duplicates += 1,
                Disposition::Committed => s.committed += 1,
                Disposition::CommitFailed => s.commit_failed += 1,
                Disposition::Rejected => s.rejected += 1,
            }
            shared
                .events
                .emit(ServerEvent::Message {
                    connection: self.id,
                    bytes: message.payload.len(),
                    ack_code,
                    duplicate,
                    commit_ms: if decision.action == Action::Commit {
                        commit_ms
                    } else {
                        0.0
                    },
                })
                .await;
        }
        if let Some(end) = self.flush(shutdown).await {
            return Some(end);
        }
        if decisions.last().is_some_and(|d| d.reset) {
            return Some(End {
                abort: true,
                ..End::cause(Cause::ConnectionReset)
            });
        }
        close_after.then_some(End::cause(Cause::Shutdown))
    }
    /// Set the ACKs' MSH-7 to `now`, formatted only when the second changes.
    fn stamp(&mut self, now: SystemTime) {
        let second = now.duration_since(UNIX_EPOCH).map_or(0, |d| d.as_secs());
        if self.stamped != Some(second) {
            self.ack.timestamp = Utc::from_system(now).hl7();
            self.stamped = Some(second);
        }
    }

    /// Build this message's ACK (and, in enhanced mode, its application ACK) into the write
    /// buffer; the first code written, if any. `scan` is the message's header scan.
    async fn answer(
        &mut self,
        message: &Inbound,
        scan: &Scan<'_>,
        disposition: Disposition,
        silent: bool,
    ) -> Option<AckCode> {
        let shared = self.shared;
        let forced = match shared.config.ack {
            AckMode::None => {
                self.tally.unanswered += 1;
                return None;
            }
            AckMode::Auto => None,
            AckMode::Forced(code) => Some(code),
        };
        if silent {
            self.tally.unanswered += 1;
            return None;
        }
        shared.next_ack_control_id(&mut self.ack.control_id);
        self.ack.text = match disposition {
            Disposition::Committed => None,
            Disposition::CommitFailed => Some("message not committed".into()),
            Disposition::Rejected => Some("message rejected by the receiver".into()),
        };
        self.ack.forced = forced;
        let ctx = &self.ack;
        let batch = shared.config.batch_ack && message.shape == Shape::Batch;
        let built = if batch {
            ack::build_batch_ack(&message.payload, disposition, message.damaged, ctx).map(|b| {
                BuiltAck {
                    payload: b.payload,
                    code: b.code,
                    reason: b.reason,
                    warnings: b.warnings,
                }
            })
        } else {
            ack::answer(
                scan,
                disposition,
                message.damaged,
                ctx,
                std::mem::take(&mut self.ack_buf),
            )
        };
        let Some(built) = built else {
            // An inbound ACK: committed like any message, never answered.
            self.tally.inbound_acks += 1;
            return None;
        };
        let code = self.write_ack(built, disposition).await?;
        // Enhanced mode: the application ACK follows the accept ACK, same MSA-2.
        if code.is_commit_level() && !batch {
            shared.next_ack_control_id(&mut self.ack.control_id);
            if let Some(app) = ack::application_answer(
                scan,
                disposition,
                message.damaged,
                &self.ack,
                std::mem::take(&mut self.ack_buf),
            ) {
                self.write_ack(app, disposition).await;
            }
        }
        Some(code)
    }

    /// Frame one built ACK into the write buffer and count it.
    async fn write_ack(&mut self, built: BuiltAck, disposition: Disposition) -> Option<AckCode> {
        let shared = self.shared;
        for code in &built.warnings {
            self.warn(Warning::new(*code)).await;
        }
        let framed = encode_frame(&built.payload, &mut self.out);
        self.ack_buf = built.payload;
        if let Err(e) = framed {
            // Cannot happen for a built ACK; if it ever does, say so rather than send it broken.
            self.warn(Warning::new(e.code)).await;
            return None;
        }
        if !built.code.is_positive() {
            // Defects always name their reason; a committed message without one (or with
            // handler-rejected) is negative only because a code was forced.
            let why = match (built.reason, disposition) {
                (None | Some(NackReason::HandlerRejected), Disposition::Committed) => {
                    NackWhy::Forced
                }
                (Some(reason), _) => NackWhy::Reason(reason),
                (None, _) => NackWhy::CommitFailed,
            };
            self.tally.nack(why.as_str());
            shared
                .events
                .emit(ServerEvent::Nack {
                    connection: self.id,
                    ack_code: built.code,
                    why,
                })
                .await;
        }
        self.tally.ack(built.code);
        Some(built.code)
    }

    /// Write the pending ACKs in one go, bounded by the write timeout.
    async fn flush(&mut self, shutdown: &Shutdown) -> Option<End> {
        if self.out.is_empty() {
            return None;
        }
        let limit = self.shared.config.write_timeout;
        let write = async {
            self.stream.write_all(&self.out).await?;
            self.stream.flush().await
        };
        let result = tokio::select! {
            biased;
            _ = shutdown.immediate.cancelled() => return Some(End::cause(Cause::Shutdown)),
            result = tokio::time::timeout(limit, write) => result,
        };
        let written = self.out.len() as u64;
        self.out.clear();
        match result {
            Ok(Ok(())) => {
                self.tally.bytes_out += written;
                None
            }
            Ok(Err(e)) => Some(End::cause(classify_io(&e))),
            // The peer does not take its ACKs.
            Err(_) => Some(End::cause(Cause::DeadPeer)),
        }
    }
}

/// Hand the messages the policy lets through to the sink, one result per such message.
async fn commit(shared: &Shared, messages: &[Inbound], decisions: &[Decision]) -> Vec<SinkResult> {
    let sink = &shared.sink;
    if decisions.iter().all(|d| d.action == Action::Commit) {
        let results = sink.commit_batch(messages).await;
        return pad_results(results, messages.len());
    }
    let chosen: Vec<Inbound> = messages
        .iter()
        .zip(decisions)
        .filter(|(_, d)| d.action == Action::Commit)
        .map(|(m, _)| m.clone())
        .collect();
    if chosen.is_empty() {
        return Vec::new();
    }
    let results = sink.commit_batch(&chosen).await;
    pad_results(results, chosen.len())
}
