//! The connected phase: coalesced writes, the ACK reader, commands, and the timers (ACK,
//! application ACK, dead peer, drain), all in one select loop over one stream (`stream`).

mod stream;

use super::Actor;
use crate::cause::{classify_io, Cause};
use crate::client::fate::FateCause;
use crate::client::life::LinkEnd;
use crate::client::state::{Reason, State};
use crate::client::stats::LinkFailure;
use crate::client::Command;
use crate::framing::{Decoded, FramingError, Release};
use crate::transport::{BoxStream, Connection};
use bytes::BytesMut;
use std::task::Poll;
use std::time::Duration;
use stream::{link_failure, stream_turn, AckReader, Turn, WriteBatch};
use tokio::time::Instant;

/// How long after the first write a peer that has sent nothing at all may stay silent before a
/// lone LF follows (outside any frame, where MLLP receivers skip it): an HTTP server that waits
/// for a line end before it answers then answers, and is recognised at once, not after the ACK
/// timeout. Never more than half the ACK timeout.
const LONE_LF_AFTER: Duration = Duration::from_secs(2);

/// The lone LF (see LONE_LF_AFTER): when it goes out, and whether it was planned already
/// (once per connection).
struct LoneLf {
    at: Option<Instant>,
    planned: bool,
}

/// One connection as the loop holds it: the stream, what is being written and read on it, and
/// its clocks.
struct Wire {
    stream: BoxStream,
    tls: bool,
    reader: AckReader,
    /// The write in progress.
    write: Option<WriteBatch>,
    /// The IDs of the frames in the write being built.
    batch: Vec<u64>,
    /// The last write's buffer, for the next one.
    spare: BytesMut,
    last_inbound: Instant,
    /// The flight figures last published to the stats: queue depth, queue bytes, in flight.
    published: (usize, usize, usize),
    drain_deadline: Option<Instant>,
    lone_lf: LoneLf,
}

impl Actor {
    pub(crate) async fn run_link(&mut self, conn: Connection) -> LinkEnd {
        self.flights.new_connection();
        self.life.link_started();
        // One task polls both directions in turn, so the stream needs no split (and no lock
        // around each read and write).
        let mut wire = Wire {
            tls: conn.tls.is_some(),
            stream: conn.stream,
            reader: AckReader::new(self.options.max_ack_frame),
            write: None,
            batch: Vec::new(),
            spare: BytesMut::new(),
            last_inbound: Instant::now(),
            published: (usize::MAX, 0, 0),
            drain_deadline: None,
            lone_lf: LoneLf {
                at: None,
                planned: !self.options.adapt_to_peer,
            },
        };
        // Read once: the timer's resting place when nothing is due.
        let far = Instant::now() + Duration::from_secs(86_400 * 365);
        let sleep = tokio::time::sleep_until(far);
        tokio::pin!(sleep);
        loop {
            match self.start_write(&mut wire).await {
                Err(end) => return end,
                // The write was full: what it left may go now.
                Ok(true) => continue,
                Ok(false) => {}
            }
            if self.state() == State::Draining && wire.write.is_none() && self.flights.is_empty() {
                return LinkEnd::Drained { timed_out: false };
            }
            self.publish(&mut wire);
            let deadline = self
                .flights
                .next_deadline(wire.last_inbound, wire.drain_deadline)
                .into_iter()
                .chain(wire.lone_lf.at)
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
                turn = stream_turn(&mut wire.write, &mut wire.reader, &mut wire.stream) => turn,
                cmd = self.rx.recv() => Turn::Command(cmd),
                () = &mut sleep => Turn::Timer,
            };
            if let Some(end) = self.on_turn(turn, &mut wire).await {
                return end;
            }
        }
    }

    /// The lone LF when it is due, else the next write when the link is up, written at once
    /// when the stream takes it. `Ok(true)`: a full write went out, and what it left may go
    /// now; `Err`: the connected phase ends.
    async fn start_write(&mut self, wire: &mut Wire) -> Result<bool, LinkEnd> {
        // The peer spoke: no lone LF is due (and no clock is read for it every turn).
        if wire.lone_lf.at.is_some() && !wire.reader.nothing_received {
            wire.lone_lf.at = None;
        }
        if wire.write.is_none() && wire.lone_lf.at.is_some_and(|at| at <= Instant::now()) {
            wire.lone_lf.at = None;
            if wire.reader.nothing_received {
                let progress = self.flights.start_write();
                let lf = BytesMut::from(&b"\n"[..]);
                wire.write = Some(WriteBatch::new(lf, progress));
            }
        }
        if wire.write.is_some() || self.state() != State::Connected {
            return Ok(false);
        }
        if let Some((buf, started, full)) =
            self.flights.take_batch(&mut wire.batch, &mut wire.spare)
        {
            self.life.wrote();
            let progress = self.flights.start_write();
            let mut w = WriteBatch::new(buf, progress);
            w.started = Some(started);
            // Written in this turn when the stream takes it at once: its ACK clocks start, and
            // the timer is armed for them, below, with no turn of its own.
            let stream = &mut wire.stream;
            let result = std::future::poll_fn(|cx| Poll::Ready(w.poll(stream, cx)));
            match result.await {
                Poll::Ready(Err(e)) => {
                    let failure =
                        link_failure(&e, &mut wire.reader, &mut wire.stream, wire.tls).await;
                    return Err(self.link_failed(failure));
                }
                Poll::Ready(Ok(())) => {
                    self.wrote(w, wire);
                    if full {
                        return Ok(true);
                    }
                }
                Poll::Pending => wire.write = Some(w),
            }
        }
        // The next send's ID was given up on here and nothing else is outstanding: only a new
        // connection lets it go.
        if wire.write.is_none() && self.flights.waits_for_new_link() {
            return Err(LinkEnd::Failed(Cause::AckTimeout));
        }
        Ok(false)
    }

    /// The flight figures and bytes read, to the stats, only when they changed: the lock is
    /// taken for a change, not every turn.
    fn publish(&mut self, wire: &mut Wire) {
        let figures = self.flights.figures();
        if wire.reader.fresh_bytes != 0 || figures != wire.published {
            wire.published = figures;
            let mut c = self.out.shared().counters();
            c.record_received(std::mem::take(&mut wire.reader.fresh_bytes));
            c.record_flight(figures.0, figures.1, figures.2);
        }
    }

    /// One turn of the loop: a write done, an item read, a command, or the timer; `Some` ends
    /// the connected phase.
    async fn on_turn(&mut self, turn: Turn, wire: &mut Wire) -> Option<LinkEnd> {
        match turn {
            Turn::Wrote(done, result) => {
                if let Err(e) = result {
                    let failure =
                        link_failure(&e, &mut wire.reader, &mut wire.stream, wire.tls).await;
                    return Some(self.link_failed(failure));
                }
                self.wrote(done, wire);
                None
            }
            Turn::Read(item) => self.on_read(item, wire).await,
            Turn::Command(cmd) => {
                // Take every command already waiting, so their frames share one write.
                let mut next = Some(cmd);
                let mut budget = 1024;
                while let Some(cmd) = next.take() {
                    if let Some(end) = self.on_command(cmd, &mut wire.drain_deadline) {
                        return Some(end);
                    }
                    budget -= 1;
                    if budget > 0 {
                        next = self.rx.try_recv().ok().map(Some);
                    }
                }
                None
            }
            Turn::Timer => {
                self.flights
                    .on_timers(&mut self.out, wire.last_inbound, wire.drain_deadline)
            }
        }
    }

    /// What the ACK reader gave, and every item already buffered behind it; `Some` ends the
    /// connected phase.
    async fn on_read(
        &mut self,
        item: Result<Option<Decoded>, FramingError>,
        wire: &mut Wire,
    ) -> Option<LinkEnd> {
        if let Some(seen) = wire.reader.foreign.take() {
            self.flights.not_mllp(seen.kind);
            return Some(self.link_failed(LinkFailure {
                cause: Cause::FramingFatal,
                detail: format!("{} (first byte 0x{:02X})", seen.kind, seen.first_byte),
            }));
        }
        let mut item = match item {
            Err(FramingError::Io(e)) => {
                let failure = link_failure(&e, &mut wire.reader, &mut wire.stream, false).await;
                return Some(self.link_failed(failure));
            }
            item => item,
        };
        let now = Instant::now();
        wire.last_inbound = now;
        // Every ACK already read is credited in this pass: one clock reading, one counters
        // sync and one timer reset per read, not per ACK.
        self.out.begin_read();
        let end = loop {
            if let Some(end) = self.on_inbound(item, now) {
                break Some(end);
            }
            match wire.reader.buffered() {
                Some(next) => item = next,
                None => break None,
            }
        };
        self.out.end_read();
        end
    }

    /// A write went out whole: its buffer is kept for the next one, its frames' ACK clocks
    /// start, and the first write to a peer that has said nothing plans the lone LF.
    fn wrote(&mut self, done: WriteBatch, wire: &mut Wire) {
        let flushed_at = done.flushed_at();
        let n = done.buf.len();
        wire.spare = done.buf;
        self.flights
            .on_flushed(&self.out, &mut wire.batch, n, flushed_at);
        if !wire.lone_lf.planned && wire.reader.nothing_received {
            wire.lone_lf.planned = true;
            let after = LONE_LF_AFTER.min(self.options.ack_timeout / 2);
            wire.lone_lf.at = Some(Instant::now() + after);
        }
    }

    /// The link broke on a read or write: keep what went wrong for the stats.
    fn link_failed(&mut self, failure: LinkFailure) -> LinkEnd {
        let cause = failure.cause;
        self.out.shared().counters().record_link_failure(failure);
        LinkEnd::Failed(cause)
    }

    /// One item from the ACK reader; `Some` ends the connected phase.
    fn on_inbound(
        &mut self,
        item: Result<Option<Decoded>, FramingError>,
        now: Instant,
    ) -> Option<LinkEnd> {
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
            Ok(None) => return Some(LinkEnd::Failed(Cause::PeerClosed)),
            // Closed in the middle of an answer: the link was lost, as by any close; the peer
            // still speaks MLLP.
            Err(FramingError::Truncated { .. }) => return Some(LinkEnd::Failed(Cause::PeerClosed)),
            Err(FramingError::Io(e)) => return Some(LinkEnd::Failed(classify_io(&e))),
            Err(err) => {
                if let Some(code) = err.code() {
                    self.out.warn(code, None);
                }
                return Some(LinkEnd::Failed(Cause::FramingFatal));
            }
        }
        None
    }

    /// One command in the connected phase; `Some` ends it.
    fn on_command(
        &mut self,
        cmd: Option<Command>,
        drain_deadline: &mut Option<Instant>,
    ) -> Option<LinkEnd> {
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
                return Some(LinkEnd::Destroy(Some(tx), FateCause::Destroyed))
            }
            None => return Some(LinkEnd::Destroy(None, FateCause::ClientDropped)),
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
