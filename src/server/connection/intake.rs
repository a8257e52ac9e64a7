//! The read side of a connection: the input buffer and its codec, reads bounded by the budget,
//! the idle and frame deadlines, eviction while idle, and reading ahead during a commit.

use super::buffer::{ReadBuf, Room};
use super::stop::Stops;
use super::{commit, scratch, End, Ledger, Part, Shutdown};
use crate::cause::classify_io;
use crate::framing::{Block, Decoded, Frame, FramingError, MllpCodec, Release};
use crate::server::evict::IdleEntry;
use crate::server::limits::Buffered;
use crate::server::Shared;
use tokio::io::{AsyncRead, AsyncReadExt};
use tokio::time::Instant;
use tokio_util::codec::Decoder;

const READ_CHUNK: usize = 64 * 1024;
/// The first read of a connection with nothing buffered: small, so idle connections stay cheap.
const FIRST_READ: usize = scratch::SCRATCH;
/// Frames committed and answered together, at most: one batch's ACKs (about 100-300 bytes
/// each) stay within a small unsent cap, so a peer that does not read them is no longer read.
const MAX_BATCH: usize = 256;
/// While a commit is in flight the connection keeps reading, up to this much buffered input: the
/// next batch is ready when the commit returns, and a slow sink still pushes back on the peer.
const READ_AHEAD: usize = 256 * 1024;

/// What a read between batches came to.
pub(super) enum Read {
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

/// The input of one connection, from bytes read to complete frames.
pub(super) struct Intake<'a> {
    shared: &'a Shared,
    /// The connection's place among the idle, when idle ones may be evicted.
    idle: Option<IdleEntry<'a>>,
    codec: MllpCodec,
    buf: ReadBuf,
    eof: bool,
    /// The last read filled the small first-read array: more is coming, keep a real buffer.
    busy: bool,
    /// A read ahead (during a commit) failed: the connection ends once what is buffered has been
    /// committed and answered.
    ended: Option<End>,
    /// When the first byte after the last complete frame arrived: the frame deadline runs from
    /// here. `None` between frames.
    frame_started: Option<Instant>,
    /// What the frames decoded and not yet answered hold of the budget, all batches together.
    waiting: usize,
    /// What the last batch decoded holds of it.
    lent: usize,
}

impl<'a> Intake<'a> {
    pub(super) fn new(shared: &'a Shared, id: u64) -> Intake<'a> {
        Intake {
            shared,
            idle: shared.config.evict_idle_after.map(|_| shared.idle.join(id)),
            codec: MllpCodec::new(shared.config.tolerance, shared.config.max_frame)
                .discarding_oversize(),
            buf: ReadBuf::new(),
            eof: false,
            busy: false,
            ended: None,
            frame_started: None,
            waiting: 0,
            lent: 0,
        }
    }

    /// The peer has ended its side of the stream.
    pub(super) fn eof(&self) -> bool {
        self.eof
    }

    /// A read ahead failed: the connection ends once what is buffered is answered.
    pub(super) fn has_ended(&self) -> bool {
        self.ended.is_some()
    }

    /// The failure of a read ahead, once: the connection ends with it.
    pub(super) fn take_ended(&mut self) -> Option<End> {
        self.ended.take()
    }

    /// Whether reading ahead during a commit may go on: below its cap of buffered input.
    pub(super) fn read_ahead_room(&self) -> bool {
        self.buf.len() < READ_AHEAD
    }

    /// The complete frames buffered (a batch's worth at most), and the framing error that stopped
    /// decoding, if one did; late warnings go to `ledger`. Afterwards the frame deadline starts
    /// or stops, `budget` holds the frames' memory as waiting for their answers (see
    /// [`Intake::served`]), and just the buffer's own as partial.
    pub(super) fn decode(
        &mut self,
        ledger: &mut Ledger<'_>,
        budget: &mut Buffered,
    ) -> (Vec<Frame>, Option<FramingError>) {
        let mut frames = Vec::new();
        let mut fatal = None;
        while frames.len() < MAX_BATCH {
            let next = if self.eof {
                self.codec.decode_eof(self.buf.bytes())
            } else {
                self.codec.decode(self.buf.bytes())
            };
            match next {
                // Release 2: the peer's block for an answer of ours, no message.
                Ok(Some(Decoded::Frame(frame)))
                    if self.shared.config.release == Release::Two
                        && Block::of(&frame.payload).is_some() => {}
                Ok(Some(Decoded::Frame(frame))) => frames.push(frame),
                Ok(Some(Decoded::LateWarning { warning, .. })) => ledger.warn(warning),
                Ok(None) => break,
                Err(e) => {
                    fatal = Some(e);
                    break;
                }
            }
        }
        self.lent = 0;
        if !frames.is_empty() {
            // Counted as waiting before the buffer lets go of it: the total never dips.
            let held = self.buf.lend(frames.iter().map(|f| &f.payload[..]));
            self.lent = held + commit::overhead(&frames);
            self.waiting += self.lent;
            budget.set(Part::Waiting, self.waiting);
        }
        self.track_partial_frame(budget);
        (frames, fatal)
    }

    /// What the last frames decoded hold of the budget, for a batch answered later.
    pub(super) fn lent(&self) -> usize {
        self.lent
    }

    /// The batch of the last frames decoded is served and its frames are gone: their memory,
    /// where it is still the buffer's, is held as partial again.
    pub(super) fn served(&mut self, budget: &mut Buffered) {
        self.served_part(self.lent, budget);
    }

    /// A batch whose frames held `held` is served and its frames are gone. The allocation they
    /// were cut from is the buffer's own again once no batch holds any frame of it (until then a
    /// later batch's frames may be counting it).
    pub(super) fn served_part(&mut self, held: usize, budget: &mut Buffered) {
        self.waiting = self.waiting.saturating_sub(held);
        if self.waiting == 0 {
            self.buf.returned();
        }
        budget.set(Part::Partial, self.buf.held());
        budget.set(Part::Waiting, self.waiting);
    }

    /// After decoding: start or stop the frame deadline, and hold just the buffer's own memory.
    fn track_partial_frame(&mut self, budget: &mut Buffered) {
        if self.buf.is_empty() && self.codec.between_frames() {
            self.frame_started = None;
        } else if self.frame_started.is_none() {
            self.frame_started = Some(Instant::now());
        }
        budget.set(Part::Partial, self.buf.held());
    }

    /// Room to read up to `want` bytes, the buffer grown within the budget if it must be; how
    /// many bytes the read may take, or 0 when the budget has no room for the growth now.
    fn make_room(&mut self, budget: &mut Buffered, want: usize) -> usize {
        let (least, best, spare) = match self.buf.room(want) {
            Room::Ready(n) => return n,
            Room::Grow { least, best, spare } => (least, best, spare),
        };
        let held = self.buf.held();
        let granted = budget.grant(Part::Partial, best - held);
        if held + granted < least {
            // No room to grow: read into what there is, if anything.
            budget.set(Part::Partial, held);
            return spare;
        }
        self.buf.grow(held + granted);
        // The old allocation is gone, or still counted by the batch its frames are in.
        budget.set(Part::Partial, self.buf.held());
        self.buf.room(want).ready()
    }

    /// Room for a read of up to `want` bytes; how much. At the budget, reading stops until
    /// something held is given back; when nothing held frees itself (the budget is all partial
    /// frames), the connection ends instead of waiting for their deadlines. `lazy`: the read
    /// lands in the thread's scratch block and holds nothing until decoded; it only waits for
    /// the budget to have room.
    async fn room(
        &mut self,
        budget: &mut Buffered,
        want: usize,
        lazy: bool,
        deadline: Option<Instant>,
        shutdown: &Shutdown,
    ) -> Result<usize, Read> {
        let try_now = |intake: &mut Self, budget: &mut Buffered| match lazy {
            true => {
                let granted = budget.grant(Part::Partial, want);
                budget.set(Part::Partial, 0);
                granted
            }
            false => intake.make_room(budget, want),
        };
        // Room at once is the common case: no wake-up to register for it.
        let granted = try_now(self, budget);
        if granted > 0 {
            return Ok(granted);
        }
        let released = budget.released();
        let _waiting = released.waiting();
        loop {
            let notified = released.notified();
            tokio::pin!(notified);
            notified.as_mut().enable();
            let granted = try_now(self, budget);
            if granted > 0 {
                return Ok(granted);
            }
            if !budget.room_will_come() {
                return Err(Read::OverBudget);
            }
            tokio::select! {
                biased;
                _ = shutdown.immediate.cancelled() => return Err(Read::Stop),
                _ = shutdown.graceful.cancelled() => return Err(Read::Stop),
                _ = until(deadline) => return Err(Read::FrameTimeout),
                _ = &mut notified => {}
            }
        }
    }

    /// Wait for more input from `stream`, within `budget` and the deadlines. `unsent` says ACKs
    /// are still waiting to be written: the connection is not idle, so it cannot be evicted.
    pub(super) async fn read<S: AsyncRead + Unpin>(
        &mut self,
        stream: &mut S,
        budget: &mut Buffered,
        unsent: bool,
        stops: &mut Stops<'_>,
    ) -> Read {
        let idle = self.shared.config.idle_timeout;
        let deadline = self
            .frame_started
            .zip(self.shared.config.frame_timeout)
            .map(|(started, limit)| started + limit);
        // An idle connection holds no read buffer: with nothing pending, the first read lands in
        // the thread's scratch buffer and the buffer is allocated only for what arrives.
        let lazy = self.buf.is_empty() && !self.busy;
        if lazy {
            // Waiting, the connection holds nothing of the budget; it reads only while the
            // budget has room, and what arrives is counted once decoded.
            self.buf.free();
            budget.set(Part::Partial, 0);
        }
        // A peer sending a few bytes at a time gets a buffer to match, not a full chunk.
        let want = if self.busy { READ_CHUNK } else { FIRST_READ };
        let granted = match self
            .room(budget, want, lazy, deadline, stops.shutdown)
            .await
        {
            Ok(granted) => granted,
            Err(read) => return read,
        };
        let buf = self.buf.bytes();
        let read = async {
            let read_once = async {
                if lazy {
                    scratch::read_once(stream, granted, buf).await
                } else {
                    let mut within = (&mut *stream).take(granted as u64);
                    within.read_buf(buf).await
                }
            };
            match idle {
                Some(limit) => tokio::time::timeout(limit, read_once).await.ok(),
                None => Some(read_once.await),
            }
        };
        // Idle: between frames, nothing buffered, nothing awaiting commit or answer.
        let evictable = lazy && self.codec.between_frames() && !unsent;
        let hoarding = self.idle.as_ref().filter(|_| evictable);
        if let Some(idle) = &hoarding {
            idle.enter();
        }
        let evicted = async {
            match &hoarding {
                Some(idle) => idle.evicted().await,
                None => std::future::pending().await,
            }
        };
        let result = tokio::select! {
            // A stop before all, then the frame deadline and eviction: a peer trickling bytes
            // does not hold off any of them.
            biased;
            () = stops.either_set() => None,
            () = until(deadline) => Some(Err(Read::FrameTimeout)),
            () = evicted => Some(Err(Read::Evicted)),
            result = read => Some(Ok(result)),
        };
        if let Some(idle) = hoarding {
            idle.leave();
        }
        match result {
            None => Read::Stop,
            Some(Err(read)) => read,
            Some(Ok(result)) => self.landed(result),
        }
    }

    /// What a read came to (`None`: the idle timeout passed first).
    #[inline]
    fn landed(&mut self, result: Option<std::io::Result<usize>>) -> Read {
        match result {
            None => Read::Idle,
            Some(Ok(0)) => {
                self.eof = true;
                Read::Eof
            }
            Some(Ok(n)) => {
                self.busy = n >= FIRST_READ;
                Read::Data(n)
            }
            Some(Err(e)) => Read::Failed(e),
        }
    }

    /// Read more input while a commit is in flight; the bytes read, or `None` once reading ahead
    /// must stop (no room in the budget, the end of the stream, or a failure kept for later).
    pub(super) async fn read_ahead<S: AsyncRead + Unpin>(
        &mut self,
        stream: &mut S,
        budget: &mut Buffered,
    ) -> Option<usize> {
        // A peer sending one message at a time: the read for its next one lands in the
        // thread's scratch block, as between messages, rather than in a buffer of its own made
        // and freed again for every message.
        let lazy = self.buf.is_unallocated() && !self.busy;
        // Only within the budget: the commit under way gives room back when it ends.
        let granted = match lazy {
            true => {
                let granted = budget.grant(Part::Partial, FIRST_READ);
                budget.set(Part::Partial, 0);
                granted
            }
            false => self.make_room(budget, READ_CHUNK),
        };
        if granted == 0 {
            return None;
        }
        let read = match lazy {
            true => scratch::read_once(stream, granted, self.buf.bytes()).await,
            false => {
                let mut within = (&mut *stream).take(granted as u64);
                within.read_buf(self.buf.bytes()).await
            }
        };
        match read {
            Ok(0) => {
                self.eof = true;
                None
            }
            Ok(n) => {
                self.busy = !lazy || n >= FIRST_READ;
                Some(n)
            }
            Err(e) => {
                self.ended = Some(End::cause(classify_io(&e)));
                None
            }
        }
    }
}

/// Sleeps until `deadline`, or for ever without one.
async fn until(deadline: Option<Instant>) {
    match deadline {
        Some(at) => tokio::time::sleep_until(at).await,
        None => std::future::pending().await,
    }
}
