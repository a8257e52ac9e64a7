//! The connected phase: coalesced writes, the ACK reader, commands, and the timers (ACK,
//! application ACK, dead peer, drain), all in one select loop over a split stream.

use super::actor::{Actor, Slot, Written};
use super::events::ClientEvent;
use super::fate::FateCause;
use super::lifecycle::End;
use super::state::{Reason, State};
use super::stats::LinkFailure;
use super::Command;
use crate::cause::{classify_io, Cause};
use crate::framing::{Decoded, FramingError, MllpCodec, Tolerance, CR, FS, VT};
use crate::tls::{describe, Seen, Side};
use crate::transport::{BoxStream, Connection};
use bytes::{BufMut, BytesMut};
use std::future::Future;
use std::io;
use std::pin::Pin;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, SystemTime};
use tokio::io::{AsyncReadExt, AsyncWriteExt, ReadHalf, WriteHalf};
use tokio::time::Instant;
use tokio_util::codec::Decoder;

type Writer = WriteHalf<BoxStream>;
type WriteFuture = Pin<Box<dyn Future<Output = (Writer, io::Result<()>, usize)> + Send>>;

/// Reads and de-frames ACKs. Cancel-safe: bytes read stay in `buf` across select iterations.
pub(crate) struct AckReader {
    half: ReadHalf<BoxStream>,
    buf: BytesMut,
    codec: MllpCodec,
    eof: bool,
    /// Bytes read since the stats last took them.
    pub fresh_bytes: u64,
    /// Nothing has come from the peer on this connection yet.
    nothing_received: bool,
}

impl AckReader {
    fn new(half: ReadHalf<BoxStream>, max_frame: usize) -> Self {
        AckReader {
            half,
            buf: BytesMut::with_capacity(16 * 1024),
            codec: MllpCodec::new(Tolerance::ACK_READER, max_frame),
            eof: false,
            fresh_bytes: 0,
            nothing_received: true,
        }
    }

    /// The next item, `None` at a clean end of stream.
    async fn next(&mut self) -> Result<Option<Decoded>, FramingError> {
        loop {
            if self.eof {
                return self.codec.decode_eof(&mut self.buf);
            }
            if let Some(item) = self.codec.decode(&mut self.buf)? {
                return Ok(Some(item));
            }
            self.buf.reserve(16 * 1024);
            let n = self.half.read_buf(&mut self.buf).await?;
            if n == 0 {
                self.eof = true;
            }
            self.nothing_received &= n == 0;
            self.fresh_bytes += n as u64;
        }
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
    match tokio::time::timeout(ALERT_WAIT, reader.next()).await {
        Ok(Err(FramingError::Io(read)))
            if crate::tls::refuses_client_certificate(&read) && reader.nothing_received =>
        {
            failure(&read, true)
        }
        _ => first,
    }
}

/// Write and flush one buffer, publishing how much of it the stream has taken so far: a reply
/// to a frame is credited only once the whole frame was written.
async fn write_batch(
    mut writer: Writer,
    buf: BytesMut,
    progress: Arc<AtomicUsize>,
) -> (Writer, io::Result<()>, usize) {
    let result = async {
        let mut done = 0;
        while done < buf.len() {
            let n = writer.write(&buf[done..]).await?;
            if n == 0 {
                return Err(io::ErrorKind::WriteZero.into());
            }
            done += n;
            progress.store(done, Ordering::Relaxed);
        }
        writer.flush().await
    }
    .await;
    (writer, result, buf.len())
}

/// Await the write in progress, or never when there is none.
async fn writing(fut: &mut Option<WriteFuture>) -> (Writer, io::Result<()>, usize) {
    match fut {
        Some(fut) => fut.await,
        None => std::future::pending().await,
    }
}

impl Actor {
    pub(crate) async fn run_link(&mut self, conn: Connection) -> End {
        self.link += 1;
        self.given_up_here.clear();
        self.wrote_on_link = false;
        self.heard_on_link = false;
        let tls = conn.tls.is_some();
        let (read_half, write_half) = tokio::io::split(conn.stream);
        let mut reader = AckReader::new(read_half, self.options.max_ack_frame);
        let mut writer = Some(write_half);
        let mut write_fut: Option<WriteFuture> = None;
        let mut batch: Vec<u64> = Vec::new();
        let mut last_inbound = Instant::now();
        let mut drain_deadline: Option<Instant> = None;
        let far = || Instant::now() + Duration::from_secs(86_400 * 365);
        let sleep = tokio::time::sleep_until(far());
        tokio::pin!(sleep);
        loop {
            if write_fut.is_none() && self.state == State::Connected {
                if let Some(w) = writer.take() {
                    match self.take_batch(&mut batch) {
                        Some(buf) => {
                            self.wrote_on_link = true;
                            self.write_progress.store(0, Ordering::Relaxed);
                            let progress = self.write_progress.clone();
                            write_fut = Some(Box::pin(write_batch(w, buf, progress)));
                        }
                        None => writer = Some(w),
                    }
                }
                // The next send's ID was given up on here and nothing else is outstanding: only
                // a new connection lets it go.
                if write_fut.is_none() && self.waits_for_new_link() {
                    return End::Failed(Cause::AckTimeout);
                }
            }
            if self.state == State::Draining && write_fut.is_none() && self.sends.is_empty() {
                return End::Drained { timed_out: false };
            }
            self.sync_counters(&mut reader);
            let deadline = self
                .next_deadline(last_inbound, drain_deadline)
                .unwrap_or_else(far);
            if sleep.deadline() != deadline {
                sleep.as_mut().reset(deadline);
            }
            tokio::select! {
                biased;
                (w, result, n) = writing(&mut write_fut) => {
                    write_fut = None;
                    writer = Some(w);
                    if let Err(e) = result {
                        let failure = link_failure(&e, &mut reader, tls).await;
                        return self.link_failed(failure);
                    }
                    self.on_flushed(&mut batch, n);
                }
                item = reader.next() => {
                    let item = match item {
                        Err(FramingError::Io(e)) => {
                            let failure = link_failure(&e, &mut reader, false).await;
                            return self.link_failed(failure);
                        }
                        item => item,
                    };
                    let now = Instant::now();
                    last_inbound = now;
                    // Every ACK already read is credited in this pass: one clock reading, one
                    // counters sync and one timer reset per read, not per ACK.
                    let mut item = item;
                    self.read_wall = Some(SystemTime::now());
                    let end = loop {
                        if let Some(end) = self.on_inbound(item, now) {
                            break Some(end);
                        }
                        match reader.buffered() {
                            Some(next) => item = next,
                            None => break None,
                        }
                    };
                    self.read_wall = None;
                    self.shared.admission.wake();
                    if let Some(end) = end {
                        return end;
                    }
                }
                cmd = self.rx.recv() => {
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
                () = &mut sleep => {
                    if let Some(end) = self.on_timers(last_inbound, drain_deadline) {
                        return end;
                    }
                }
            }
        }
    }

    /// The link broke on a read or write: keep what went wrong for the stats.
    fn link_failed(&mut self, failure: LinkFailure) -> End {
        let cause = failure.cause;
        self.shared.counters().last_failure = Some(failure);
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
                self.heard_on_link = true;
                for w in &frame.warnings {
                    self.warn(w.code, w.byte_offset);
                }
                return self.on_ack(frame.payload, frame.offset, now);
            }
            Ok(Some(Decoded::LateWarning { warning, .. })) => {
                self.warn(warning.code, warning.byte_offset);
            }
            Ok(None) => return Some(End::Failed(Cause::PeerClosed)),
            // Closed in the middle of an answer: the link was lost, as by any close; the peer
            // still speaks MLLP.
            Err(FramingError::Truncated { .. }) => return Some(End::Failed(Cause::PeerClosed)),
            Err(FramingError::Io(e)) => return Some(End::Failed(classify_io(&e))),
            Err(err) => {
                if let Some(code) = err.code() {
                    self.warn(code, None);
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
                self.closing.push(tx);
                if self.state == State::Connected {
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
        self.report.get_or_insert_with(Default::default);
        let now = Instant::now();
        for id in std::mem::take(&mut self.queue) {
            if let Some(p) = self.sends.get(&id) {
                let fate = p.cut_off(FateCause::Closed, now);
                self.settle(id, fate);
            }
        }
    }

    /// Pipeline off: may the next send go? Control-ID mode leaves a settled send's slot behind
    /// until pruned; unpruned, it would hold the next send back with nothing left to wake the loop.
    fn nothing_in_flight(&mut self) -> bool {
        self.prune_flight();
        self.flight.is_empty() && self.sends.len() == self.queue.len()
    }

    /// Whether the queue's head may only be written on a new connection (its control ID was
    /// given up on here) and nothing written here is still outstanding.
    fn waits_for_new_link(&self) -> bool {
        let Some(head) = self.queue.front().and_then(|id| self.sends.get(id)) else {
            return false;
        };
        self.sends.len() == self.queue.len()
            && head
                .control_id
                .as_ref()
                .is_some_and(|cid| self.given_up_here.contains_key(cid))
    }

    /// Coalesce queued frames into one buffer: one write for everything that may go now. Sends
    /// go in order: one that may not be written yet holds back those behind it.
    fn take_batch(&mut self, batch: &mut Vec<u64>) -> Option<BytesMut> {
        if self.queue.is_empty() {
            return None;
        }
        let limit = if self.options.pipeline {
            self.queue.len()
        } else if self.nothing_in_flight() {
            1
        } else {
            return None;
        };
        let take = self
            .queue
            .iter()
            .take(limit)
            .take_while(|id| self.sends.get(id).is_none_or(|p| self.may_write(p)))
            .count();
        if take == 0 {
            return None;
        }
        let now = Instant::now();
        let bytes: usize = self
            .queue
            .iter()
            .take(take)
            .filter_map(|id| self.sends.get(id))
            .map(|p| p.payload.len() + 3)
            .sum();
        let mut buf = BytesMut::with_capacity(bytes);
        batch.clear();
        batch.extend(self.queue.drain(..take));
        let mut kept = 0;
        for i in 0..batch.len() {
            let id = batch[i];
            let Some(p) = self.sends.get_mut(&id) else {
                continue;
            };
            // Payloads holding VT or FS were refused at admission: frame without a second scan.
            buf.put_u8(VT);
            buf.put_slice(&p.payload);
            buf.put_slice(&[FS, CR]);
            p.written = Some(Written {
                started: now,
                flushed: None,
                bytes: p.payload.len() + 3,
                link: self.link,
                end: buf.len(),
            });
            p.writes.fetch_add(1, Ordering::Relaxed);
            self.flight.push_back(Slot { id, deadline: None });
            batch[kept] = id;
            kept += 1;
        }
        batch.truncate(kept);
        (!buf.is_empty()).then_some(buf)
    }

    /// The batch is on the wire: its ACK clocks start now.
    fn on_flushed(&mut self, batch: &mut Vec<u64>, n: usize) {
        let now = Instant::now();
        let wall = SystemTime::now();
        let deadline = now + self.options.ack_timeout;
        for slot in self.flight.iter_mut().rev() {
            if slot.deadline.is_some() {
                break;
            }
            slot.deadline = Some(deadline);
        }
        let frames = batch.len() as u64;
        for id in batch.drain(..) {
            let Some(p) = self.sends.get_mut(&id) else {
                continue;
            };
            if let Some(w) = p.written.as_mut() {
                w.flushed = Some((now, wall));
                if self.options.write_events {
                    let event = ClientEvent::Written {
                        control_id: p
                            .control_id
                            .as_ref()
                            .map(|c| String::from_utf8_lossy(c).into_owned()),
                        bytes: p.payload.len(),
                    };
                    let _ = self.events.send(event);
                }
            }
        }
        let mut counters = self.shared.counters();
        counters.bytes_out += n as u64;
        counters.sent += frames;
    }

    fn sync_counters(&mut self, reader: &mut AckReader) {
        let mut c = self.shared.counters();
        c.bytes_in += std::mem::take(&mut reader.fresh_bytes);
        c.queue_depth = self.queue.len();
        c.in_flight = self.sends.len() - self.queue.len().min(self.sends.len());
        // In pipelined flow the queue is empty here nearly always: nothing to sum.
        c.queue_bytes = self
            .queue
            .iter()
            .filter_map(|id| self.sends.get(id))
            .map(|p| p.payload.len())
            .sum();
    }
}
