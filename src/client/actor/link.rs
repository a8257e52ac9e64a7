//! The connected phase: coalesced writes, the ACK reader, commands, and the timers (ACK,
//! application ACK, dead peer, drain), all in one select loop over a split stream.

use super::Actor;
use crate::cause::{classify_io, Cause};
use crate::client::fate::FateCause;
use crate::client::life::End;
use crate::client::state::{Reason, State};
use crate::client::stats::LinkFailure;
use crate::client::Command;
use crate::framing::{Decoded, FramingError, MllpCodec, Release, Tolerance};
use crate::sniff::{recognise, Recognised};
use crate::tls::{describe, Seen, Side};
use crate::transport::{BoxStream, Connection};
use bytes::BytesMut;
use std::io;
use std::pin::Pin;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::task::{ready, Context, Poll};
use std::time::Duration;
use tokio::io::AsyncWrite;
use tokio::time::Instant;
use tokio_util::codec::Decoder;
use tokio_util::io::poll_read_buf;

/// The read buffer grows by this much at a time, once less than `READ_LEAST` is left for a read.
const READ_BLOCK: usize = 16 * 1024;
const READ_LEAST: usize = 4 * 1024;

/// Reads and de-frames ACKs from the link's stream. Bytes read stay in `buf` across turns.
pub(crate) struct AckReader {
    buf: BytesMut,
    codec: MllpCodec,
    eof: bool,
    /// Bytes read since the stats last took them.
    pub fresh_bytes: u64,
    /// Nothing has come from the peer on this connection yet.
    nothing_received: bool,
    /// The first bytes from the peer showed it is not an MLLP receiver.
    foreign: Option<Recognised>,
}

impl AckReader {
    fn new(max_frame: usize) -> Self {
        AckReader {
            buf: BytesMut::with_capacity(READ_BLOCK),
            codec: MllpCodec::new(Tolerance::ACK_READER, max_frame),
            eof: false,
            fresh_bytes: 0,
            nothing_received: true,
            foreign: None,
        }
    }

    /// The next item, `None` at a clean end of stream.
    fn poll_next(
        &mut self,
        stream: &mut BoxStream,
        cx: &mut Context<'_>,
    ) -> Poll<Result<Option<Decoded>, FramingError>> {
        loop {
            if self.eof {
                return Poll::Ready(self.codec.decode_eof(&mut self.buf));
            }
            if let Some(item) = self.codec.decode(&mut self.buf)? {
                return Poll::Ready(Ok(Some(item)));
            }
            // A fresh block only when little room is left: by then the ACKs split off the
            // buffer are gone and it is reused in place, not reallocated on every read.
            if self.buf.capacity() - self.buf.len() < READ_LEAST {
                self.buf.reserve(READ_BLOCK);
            }
            let n = ready!(poll_read_buf(Pin::new(&mut *stream), cx, &mut self.buf))?;
            if n == 0 {
                self.eof = true;
            }
            let first = self.nothing_received && n > 0;
            self.nothing_received &= n == 0;
            self.fresh_bytes += n as u64;
            // An HTTP reply, an SSH or SMTP banner, a TLS record on a plain link: no ACK will
            // ever come, so say what answers instead of waiting for one.
            if let Some(seen) = recognise(&self.buf).filter(|r| first && r.kind.is_foreign()) {
                self.foreign = Some(seen);
                return Poll::Ready(Ok(None));
            }
        }
    }

    async fn next(&mut self, stream: &mut BoxStream) -> Result<Option<Decoded>, FramingError> {
        std::future::poll_fn(|cx| self.poll_next(stream, cx)).await
    }

    /// The next item already in the buffer, without reading; `None` when a read is needed
    /// (or the stream ended: `next` reports that).
    fn buffered(&mut self) -> Option<Result<Option<Decoded>, FramingError>> {
        if self.eof {
            return None;
        }
        self.codec
            .decode(&mut self.buf)
            .transpose()
            .map(|r| r.map(Some))
    }
}

/// How long a failed write on a TLS link that has received nothing looks at the read side for
/// the reason. A server that refuses our client certificate sends its alert and resets: the
/// write meets the reset, the alert waits unread. Reads after a reset return at once, so this
/// bound is only a safety net.
const ALERT_WAIT: Duration = Duration::from_millis(500);

/// The cause of a failed read or write on the link, with what went wrong: a TLS error before
/// the peer's first byte through the TLS table (a refused client certificate above all),
/// anything else as before. `look_for_alert` (a failed write on a TLS link) reads what the
/// peer may have said before the reset.
async fn link_failure(
    err: &io::Error,
    reader: &mut AckReader,
    stream: &mut BoxStream,
    look_for_alert: bool,
) -> LinkFailure {
    let failure = |err: &io::Error, nothing_received: bool| LinkFailure {
        cause: crate::tls::session_cause(err, nothing_received),
        detail: match crate::tls::rustls_error(err) {
            Some(tls) => describe(tls, Side::Client, Seen::default()).detail,
            None => err.to_string(),
        },
    };
    let first = failure(err, reader.nothing_received);
    if !look_for_alert || !reader.nothing_received || crate::tls::rustls_error(err).is_some() {
        return first;
    }
    match tokio::time::timeout(ALERT_WAIT, reader.next(stream)).await {
        Ok(Err(FramingError::Io(read)))
            if crate::tls::refuses_client_certificate(&read) && reader.nothing_received =>
        {
            failure(&read, true)
        }
        _ => first,
    }
}

/// How long after the first write a peer that has sent nothing at all may stay silent before a
/// lone LF follows (outside any frame, where MLLP receivers skip it): an HTTP server that waits
/// for a line end before it answers then answers, and is recognised at once, not after the ACK
/// timeout. Never more than half the ACK timeout.
const LONE_LF_AFTER: Duration = Duration::from_secs(2);

/// One buffer being written and flushed, publishing how much of it the stream has taken so
/// far: a reply to a frame is credited only once the whole frame was written. Its state lives
/// here, not in a future, so the link loop keeps one across turns without boxing one per write;
/// done, it gives back the buffer, to be reused for the next write.
struct WriteBatch {
    buf: BytesMut,
    done: usize,
    progress: Arc<AtomicUsize>,
    /// When the frames were taken for it; also when it was flushed, if the stream took it all
    /// at once (see [`WriteBatch::flushed_at`]).
    started: Option<Instant>,
    /// The stream made it wait at least once.
    waited: bool,
}

impl WriteBatch {
    fn new(buf: BytesMut, progress: Arc<AtomicUsize>) -> Self {
        WriteBatch {
            buf,
            done: 0,
            progress,
            started: None,
            waited: false,
        }
    }

    fn poll(&mut self, stream: &mut BoxStream, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let result = self.poll_write(stream, cx);
        self.waited |= result.is_pending();
        result
    }

    fn poll_write(&mut self, stream: &mut BoxStream, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        while self.done < self.buf.len() {
            let n = ready!(Pin::new(&mut *stream).poll_write(cx, &self.buf[self.done..]))?;
            if n == 0 {
                return Poll::Ready(Err(io::ErrorKind::WriteZero.into()));
            }
            self.done += n;
            self.progress.store(self.done, Ordering::Relaxed);
        }
        Pin::new(&mut *stream).poll_flush(cx)
    }

    /// The flush time when the write went out within the turn that took its frames: the clock
    /// read then stands for both (one reading per event). `None` means read it now.
    fn flushed_at(&self) -> Option<Instant> {
        self.started.filter(|_| !self.waited)
    }
}

/// What woke one turn of the link loop.
enum Turn {
    /// The write in progress finished (its result; the write is taken out).
    Wrote(WriteBatch, io::Result<()>),
    Read(Result<Option<Decoded>, FramingError>),
    Command(Option<Command>),
    Timer,
}

/// The next event on the stream: the write in progress finished, or an item was read. One
/// future for both directions, so one task drives the stream without splitting it (a split
/// puts a lock around every read and write).
async fn stream_turn(
    write: &mut Option<WriteBatch>,
    reader: &mut AckReader,
    stream: &mut BoxStream,
) -> Turn {
    std::future::poll_fn(|cx| {
        if let Some(w) = write.as_mut() {
            if let Poll::Ready(result) = w.poll(stream, cx) {
                if let Some(done) = write.take() {
                    return Poll::Ready(Turn::Wrote(done, result));
                }
            }
        }
        reader.poll_next(stream, cx).map(Turn::Read)
    })
    .await
}

/// The lone LF (see LONE_LF_AFTER): when it goes out, and whether it was planned already
/// (once per connection).
struct LoneLf {
    at: Option<Instant>,
    planned: bool,
}

impl Actor {
    pub(crate) async fn run_link(&mut self, conn: Connection) -> End {
        self.flights.new_connection();
        self.life.link_started();
        let tls = conn.tls.is_some();
        // One task polls both directions in turn, so the stream needs no split (and no lock
        // around each read and write).
        let mut stream = conn.stream;
        let mut reader = AckReader::new(self.options.max_ack_frame);
        let mut write: Option<WriteBatch> = None;
        let mut batch: Vec<u64> = Vec::new();
        // The last write's buffer, for the next one.
        let mut spare = BytesMut::new();
        let mut last_inbound = Instant::now();
        // The flight figures last published to the stats: queue depth, queue bytes, in flight.
        let mut published = (usize::MAX, 0, 0);
        let mut drain_deadline: Option<Instant> = None;
        let mut lone_lf = LoneLf {
            at: None,
            planned: !self.options.adapt_to_peer,
        };
        // Read once: the timer's resting place when nothing is due.
        let far = Instant::now() + Duration::from_secs(86_400 * 365);
        let sleep = tokio::time::sleep_until(far);
        tokio::pin!(sleep);
        loop {
            // The peer spoke: no lone LF is due (and no clock is read for it every turn).
            if lone_lf.at.is_some() && !reader.nothing_received {
                lone_lf.at = None;
            }
            if write.is_none() && lone_lf.at.is_some_and(|at| at <= Instant::now()) {
                lone_lf.at = None;
                if reader.nothing_received {
                    let progress = self.flights.start_write();
                    let lf = BytesMut::from(&b"\n"[..]);
                    write = Some(WriteBatch::new(lf, progress));
                }
            }
            if write.is_none() && self.state() == State::Connected {
                if let Some((buf, started, full)) = self.flights.take_batch(&mut batch, &mut spare)
                {
                    self.life.wrote();
                    let progress = self.flights.start_write();
                    let mut w = WriteBatch::new(buf, progress);
                    w.started = Some(started);
                    // Written in this turn when the stream takes it at once: its ACK clocks
                    // start, and the timer is armed for them, below, with no turn of its own.
                    let result = std::future::poll_fn(|cx| Poll::Ready(w.poll(&mut stream, cx)));
                    match result.await {
                        Poll::Ready(Err(e)) => {
                            let failure = link_failure(&e, &mut reader, &mut stream, tls).await;
                            return self.link_failed(failure);
                        }
                        Poll::Ready(Ok(())) => {
                            self.wrote(w, &mut batch, &mut spare, &mut lone_lf, &reader);
                            // The write was full: what it left may go now.
                            if full {
                                continue;
                            }
                        }
                        Poll::Pending => write = Some(w),
                    }
                }
                // The next send's ID was given up on here and nothing else is outstanding: only
                // a new connection lets it go.
                if write.is_none() && self.flights.waits_for_new_link() {
                    return End::Failed(Cause::AckTimeout);
                }
            }
            if self.state() == State::Draining && write.is_none() && self.flights.is_empty() {
                return End::Drained { timed_out: false };
            }
            // Published only when they changed: the lock is taken for a change, not every turn.
            let figures = self.flights.figures();
            if reader.fresh_bytes != 0 || figures != published {
                published = figures;
                let mut c = self.out.shared().counters();
                c.record_received(std::mem::take(&mut reader.fresh_bytes));
                c.record_flight(figures.0, figures.1, figures.2);
            }
            let deadline = self
                .flights
                .next_deadline(last_inbound, drain_deadline)
                .into_iter()
                .chain(lone_lf.at)
                .min()
                .unwrap_or(far);
            // Re-armed only for a sooner deadline (or once it fired): re-arming moves the timer
            // in the wheel, and every write and read moves a deadline later. Firing early looks
            // at every deadline again, settles nothing before its time, and re-arms.
            if deadline < sleep.deadline() || sleep.is_elapsed() {
                sleep.as_mut().reset(deadline);
            }
            // The stream first (the write in progress, then the ACK reader), then the commands
            // and the timer: ACKs already here free room before more frames are taken, and a
            // timer settles nothing that an answer read in the same turn would have.
            let turn = tokio::select! {
                biased;
                turn = stream_turn(&mut write, &mut reader, &mut stream) => turn,
                cmd = self.rx.recv() => Turn::Command(cmd),
                () = &mut sleep => Turn::Timer,
            };
            match turn {
                Turn::Wrote(done, result) => {
                    if let Err(e) = result {
                        let failure = link_failure(&e, &mut reader, &mut stream, tls).await;
                        return self.link_failed(failure);
                    }
                    self.wrote(done, &mut batch, &mut spare, &mut lone_lf, &reader);
                }
                Turn::Read(item) => {
                    if let Some(seen) = reader.foreign.take() {
                        self.flights.not_mllp(seen.kind);
                        return self.link_failed(LinkFailure {
                            cause: Cause::FramingFatal,
                            detail: format!("{} (first byte 0x{:02X})", seen.kind, seen.first_byte),
                        });
                    }
                    let item = match item {
                        Err(FramingError::Io(e)) => {
                            let failure = link_failure(&e, &mut reader, &mut stream, false).await;
                            return self.link_failed(failure);
                        }
                        item => item,
                    };
                    let now = Instant::now();
                    last_inbound = now;
                    // Every ACK already read is credited in this pass: one clock reading, one
                    // counters sync and one timer reset per read, not per ACK.
                    let mut item = item;
                    self.out.begin_read();
                    let end = loop {
                        if let Some(end) = self.on_inbound(item, now) {
                            break Some(end);
                        }
                        match reader.buffered() {
                            Some(next) => item = next,
                            None => break None,
                        }
                    };
                    self.out.end_read();
                    if let Some(end) = end {
                        return end;
                    }
                }
                Turn::Command(cmd) => {
                    // Take every command already waiting, so their frames share one write.
                    let mut next = Some(cmd);
                    let mut budget = 1024;
                    while let Some(cmd) = next.take() {
                        if let Some(end) = self.on_command(cmd, &mut drain_deadline) {
                            return end;
                        }
                        budget -= 1;
                        if budget > 0 {
                            next = self.rx.try_recv().ok().map(Some);
                        }
                    }
                }
                Turn::Timer => {
                    if let Some(end) =
                        self.flights
                            .on_timers(&mut self.out, last_inbound, drain_deadline)
                    {
                        return end;
                    }
                }
            }
        }
    }

    /// A write went out whole: its buffer is kept for the next one, its frames' ACK clocks
    /// start, and the first write to a peer that has said nothing plans the lone LF.
    fn wrote(
        &mut self,
        done: WriteBatch,
        batch: &mut Vec<u64>,
        spare: &mut BytesMut,
        lone_lf: &mut LoneLf,
        reader: &AckReader,
    ) {
        let flushed_at = done.flushed_at();
        let n = done.buf.len();
        *spare = done.buf;
        self.flights.on_flushed(&self.out, batch, n, flushed_at);
        if !lone_lf.planned && reader.nothing_received {
            lone_lf.planned = true;
            let after = LONE_LF_AFTER.min(self.options.ack_timeout / 2);
            lone_lf.at = Some(Instant::now() + after);
        }
    }

    /// The link broke on a read or write: keep what went wrong for the stats.
    fn link_failed(&mut self, failure: LinkFailure) -> End {
        let cause = failure.cause;
        self.out.shared().counters().record_link_failure(failure);
        End::Failed(cause)
    }

    /// One item from the ACK reader; `Some` ends the connected phase.
    fn on_inbound(
        &mut self,
        item: Result<Option<Decoded>, FramingError>,
        now: Instant,
    ) -> Option<End> {
        match item {
            Ok(Some(Decoded::Frame(frame))) => {
                self.life.heard();
                for w in &frame.warnings {
                    self.out.warn(w.code, w.byte_offset);
                }
                if self.options.release == Release::Two {
                    return self.flights.on_release2(
                        &mut self.out,
                        frame.payload,
                        frame.offset,
                        now,
                    );
                }
                return self
                    .flights
                    .on_ack(&mut self.out, frame.payload, frame.offset, now);
            }
            Ok(Some(Decoded::LateWarning { warning, .. })) => {
                self.out.warn(warning.code, warning.byte_offset);
            }
            Ok(None) => return Some(End::Failed(Cause::PeerClosed)),
            // Closed in the middle of an answer: the link was lost, as by any close; the peer
            // still speaks MLLP.
            Err(FramingError::Truncated { .. }) => return Some(End::Failed(Cause::PeerClosed)),
            Err(FramingError::Io(e)) => return Some(End::Failed(classify_io(&e))),
            Err(err) => {
                if let Some(code) = err.code() {
                    self.out.warn(code, None);
                }
                return Some(End::Failed(Cause::FramingFatal));
            }
        }
        None
    }

    /// One command in the connected phase; `Some` ends it.
    fn on_command(
        &mut self,
        cmd: Option<Command>,
        drain_deadline: &mut Option<Instant>,
    ) -> Option<End> {
        match cmd {
            Some(Command::Send(p)) => self.accept(p),
            Some(Command::SendMany(ps)) => ps.into_iter().for_each(|p| self.accept(p)),
            Some(Command::Cancel(id)) => self.cancel(id, Instant::now()),
            Some(Command::Close(tx)) => {
                self.life.add_closing(Some(tx));
                if self.state() == State::Connected {
                    self.begin_drain();
                    *drain_deadline = Some(Instant::now() + self.options.drain_timeout);
                }
            }
            Some(Command::Destroy(tx)) => {
                return Some(End::Destroy(Some(tx), FateCause::Destroyed))
            }
            None => return Some(End::Destroy(None, FateCause::ClientDropped)),
        }
        None
    }

    /// CONNECTED -> DRAINING: nothing more is written; unwritten sends are never delivered.
    fn begin_drain(&mut self) {
        self.transition(State::Draining, Reason::CloseRequested);
        self.out.start_report();
        self.flights.cut_off_queue(&mut self.out);
    }
}
