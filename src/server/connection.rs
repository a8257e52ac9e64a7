//! One connection: read, de-frame, commit in arrival order, acknowledge in the same order, and
//! contain every failure to this connection. Frames already complete when a fatal byte arrives
//! are committed and acknowledged before the connection closes.
//!
//! This file holds the read loop; `commit` hands a batch of frames to the sink and `answer`
//! writes their ACKs; `close` lingers after the last ACK so the peer can still read it.

mod answer;
mod close;
mod commit;

use super::event::ServerEvent;
use super::limits::{Buffered, Part, PeerSlot};
use super::stats::{AckTally, StatsSnapshot};
use super::{Accepted, Shared, Shutdown};
use crate::ack::{AckContext, AckTemplate};
use crate::cause::{classify_io, Cause};
use crate::framing::{Decoded, FramingError, MllpCodec};
use crate::warning::{Warning, WarningCode};
use bytes::BytesMut;
use std::sync::Arc;
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite};
use tokio::sync::OwnedSemaphorePermit;
use tokio::time::Instant;
use tokio_util::codec::Decoder;

const READ_CHUNK: usize = 64 * 1024;
/// The first read of a connection with nothing buffered: small, so idle connections stay cheap.
const FIRST_READ: usize = 2048;
/// Frames committed and answered together, at most: one batch's ACKs (about 100-300 bytes
/// each) stay within a small unsent cap, so a peer that does not read them is no longer read.
const MAX_BATCH: usize = 256;
/// What a complete frame costs besides its payload while it waits for its commit and answer
/// (its message, header scan and decision), counted in the budget so tiny frames are not free.
const FRAME_OVERHEAD: usize = 512;

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
        id,
        peer: Arc::clone(&peer),
        codec: MllpCodec::new(shared.config.tolerance, shared.config.max_frame)
            .discarding_oversize(),
        buf: BytesMut::new(),
        out: BytesMut::new(),
        eof: false,
        busy: false,
        ended: None,
        tally: StatsSnapshot::default(),
        acks: AckTally::default(),
        ack: AckContext::default(),
        template: AckTemplate::default(),
        stamped: None,
        ack_buf: Vec::new(),
        pending: Vec::new(),
        frame_started: None,
        buffered: shared.limits.account(&admission.peer),
        stream: &mut stream,
    };
    let end = conn.run(shutdown).await;
    conn.send_events().await;
    conn.settle_tally();
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
    // The connection is closed as far as anyone can see: a lingering socket must not keep a
    // `max_connections` slot (or its address's) from the next peer.
    drop(admission);
    if lingering {
        close::linger(&mut stream, shutdown).await;
    }
}

/// One accepted connection being served: its buffers, codec and pending ACKs.
struct InboundLink<'a, S> {
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
    /// ACKs written since the tally was last added to the server's.
    acks: AckTally,
    /// Reused for every ACK: the control ID is rewritten in place, MSH-7 once a second.
    ack: AckContext,
    /// The last positive ACK, patched for the next message from the same sender.
    template: AckTemplate,
    /// The second `ack.timestamp` shows.
    stamped: Option<u64>,
    /// The last ACK's payload buffer, reused for the next.
    ack_buf: Vec<u8>,
    /// Events noted since they were last sent.
    pending: Vec<ServerEvent>,
    /// When the first byte after the last complete frame arrived: the frame deadline runs from
    /// here. `None` between frames.
    frame_started: Option<Instant>,
    /// What this connection holds of the budget: partial frames, frames awaiting their answers,
    /// unsent ACKs.
    buffered: Buffered,
    stream: &'a mut S,
}

enum Read {
    Data(usize),
    Eof,
    Failed(std::io::Error),
    Idle,
    FrameTimeout,
    /// Closed while idle to admit a new peer at the connection cap.
    Evicted,
    /// No room in the budget, and none will come by itself.
    OverBudget,
    Stop,
}

impl<S: AsyncRead + AsyncWrite + Unpin + Send> InboundLink<'_, S> {
    async fn run(&mut self, shutdown: &Shutdown) -> End {
        loop {
            let mut frames = Vec::new();
            let mut fatal = None;
            while frames.len() < MAX_BATCH {
                let next = if self.eof {
                    self.codec.decode_eof(&mut self.buf)
                } else {
                    self.codec.decode(&mut self.buf)
                };
                match next {
                    Ok(Some(Decoded::Frame(frame))) => frames.push(frame),
                    Ok(Some(Decoded::LateWarning { warning, .. })) => self.warn(warning),
                    Ok(None) => break,
                    Err(e) => {
                        fatal = Some(e);
                        break;
                    }
                }
            }
            self.track_partial_frame();
            if !frames.is_empty() {
                let waiting = frames.iter().map(|f| f.payload.len() + FRAME_OVERHEAD);
                self.buffered.set(Part::Waiting, waiting.sum());
                let end = self.process(frames, shutdown).await;
                self.buffered.set(Part::Waiting, 0);
                self.settle_tally();
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
            self.send_events().await;
            match self.read(shutdown).await {
                Read::Data(n) => self.tally.bytes_in += n as u64,
                Read::Eof => self.eof = true,
                Read::Failed(e) => return End::cause(classify_io(&e)),
                Read::Idle => return End::cause(Cause::IdleTimeout),
                Read::FrameTimeout => return End::cause(Cause::FrameTimeout),
                Read::Evicted => return End::cause(Cause::EvictedIdle),
                Read::OverBudget => {
                    return End {
                        code: Some(WarningCode::FrameTooLarge),
                        ..End::cause(Cause::BufferBudget)
                    }
                }
                Read::Stop => return End::cause(Cause::Shutdown),
            }
        }
    }

    /// After decoding: start or stop the frame deadline, and hold just what is buffered of the
    /// next frame (the room reserved for the last read is given back).
    fn track_partial_frame(&mut self) {
        if self.buf.is_empty() && self.codec.between_frames() {
            self.frame_started = None;
        } else if self.frame_started.is_none() {
            self.frame_started = Some(Instant::now());
        }
        self.buffered.set(Part::Partial, self.buf.len());
    }

    /// Room in the budget for a read of up to `want` bytes; how much. At the budget, reading
    /// stops until something held is given back; when nothing held frees itself (the budget is
    /// all partial frames), the connection ends instead of waiting for their deadlines.
    async fn room(
        &mut self,
        want: usize,
        deadline: Option<Instant>,
        shutdown: &Shutdown,
    ) -> Result<usize, Read> {
        let released = self.buffered.released();
        loop {
            let notified = released.notified();
            tokio::pin!(notified);
            notified.as_mut().enable();
            let granted = self.buffered.grant(Part::Partial, want);
            if granted > 0 {
                return Ok(granted);
            }
            if !self.buffered.room_will_come() {
                return Err(Read::OverBudget);
            }
            let frame_deadline = async {
                match deadline {
                    Some(at) => tokio::time::sleep_until(at).await,
                    None => std::future::pending().await,
                }
            };
            tokio::select! {
                biased;
                _ = shutdown.immediate.cancelled() => return Err(Read::Stop),
                _ = shutdown.graceful.cancelled() => return Err(Read::Stop),
                _ = frame_deadline => return Err(Read::FrameTimeout),
                _ = &mut notified => {}
            }
        }
    }

    async fn read(&mut self, shutdown: &Shutdown) -> Read {
        let idle = self.shared.config.idle_timeout;
        let deadline = self
            .frame_started
            .zip(self.shared.config.frame_timeout)
            .map(|(started, limit)| started + limit);
        // An idle connection holds no read buffer: with nothing pending, the first read lands in
        // a small array inside the task and the buffer is allocated only for what arrives.
        let lazy = self.buf.is_empty() && !self.busy;
        // A peer sending a few bytes at a time gets a buffer to match, not a full chunk.
        let want = if self.busy { READ_CHUNK } else { FIRST_READ };
        let granted = match self.room(want, deadline, shutdown).await {
            Ok(granted) => granted,
            Err(read) => return read,
        };
        let mut first = [0u8; FIRST_READ];
        if lazy {
            // The small array is part of the task, not a buffer: an idle connection holds
            // nothing of the budget, but reads only while the budget has room.
            self.buffered.set(Part::Partial, 0);
            self.buf = BytesMut::new();
        } else {
            self.buf.reserve(granted);
        }
        let frame_deadline = async {
            match deadline {
                Some(at) => tokio::time::sleep_until(at).await,
                None => std::future::pending().await,
            }
        };
        let read = async {
            let read_once = async {
                if lazy {
                    self.stream.read(&mut first[..granted]).await
                } else {
                    let mut within = (&mut *self.stream).take(granted as u64);
                    within.read_buf(&mut self.buf).await
                }
            };
            match idle {
                Some(limit) => tokio::time::timeout(limit, read_once).await.ok(),
                None => Some(read_once.await),
            }
        };
        // Idle: between frames, nothing buffered, nothing awaiting commit or answer.
        let evictable = lazy && self.codec.between_frames() && self.out.is_empty();
        let evicted = match evictable {
            true => Some(self.shared.idle.enter(self.id)),
            false => None,
        };
        let eviction = async {
            match &evicted {
                Some(token) => token.cancelled().await,
                None => std::future::pending().await,
            }
        };
        let result = tokio::select! {
            biased;
            _ = shutdown.immediate.cancelled() => None,
            _ = shutdown.graceful.cancelled() => None,
            _ = frame_deadline => Some(Err(Read::FrameTimeout)),
            _ = eviction => Some(Err(Read::Evicted)),
            result = read => Some(Ok(result)),
        };
        if evicted.is_some() {
            self.shared.idle.leave(self.id);
        }
        let result = match result {
            None => return Read::Stop,
            Some(Err(read)) => return read,
            Some(Ok(result)) => result,
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
        // Only within the budget: the commit under way gives room back when it ends.
        self.buffered.set(Part::Partial, self.buf.len());
        let granted = self.buffered.grant(Part::Partial, READ_CHUNK);
        if granted == 0 {
            return false;
        }
        self.buf.reserve(granted);
        let mut within = (&mut *self.stream).take(granted as u64);
        match within.read_buf(&mut self.buf).await {
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

    /// Add this connection's counters to the server's, under one lock.
    fn settle_tally(&mut self) {
        self.acks.drain_into(&mut self.tally);
        self.shared.stats.absorb(&mut self.tally);
    }

    fn warn(&mut self, warning: Warning) {
        self.tally.warning(warning.code);
        self.note(ServerEvent::Warning {
            connection: self.id,
            warning,
        });
    }

    /// Hold `event` until [`InboundLink::send_events`]: one batch's events go out together.
    fn note(&mut self, event: ServerEvent) {
        if self.shared.events.wants(&event) {
            self.pending.push(event);
        }
    }

    async fn send_events(&mut self) {
        if !self.pending.is_empty() {
            self.shared.events.emit_all(&mut self.pending).await;
        }
    }
}
