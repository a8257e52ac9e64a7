//! The link's stream as the loop drives it: the ACK reader, the write in progress, and one
//! future that polls both; the cause of a failed read or write.

use crate::client::stats::LinkFailure;
use crate::client::Command;
use crate::framing::{Decoded, FramingError, MllpCodec, Tolerance};
use crate::sniff::{recognise, Recognised};
use crate::tls::{describe, Seen, Side};
use crate::transport::BoxStream;
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
pub(super) const READ_BLOCK: usize = 16 * 1024;
pub(super) const READ_LEAST: usize = 4 * 1024;

/// Reads and de-frames ACKs from the link's stream. Bytes read stay in `buf` across turns.
pub(super) struct AckReader {
    buf: BytesMut,
    codec: MllpCodec,
    eof: bool,
    /// Bytes read since the stats last took them.
    pub(super) fresh_bytes: u64,
    /// Nothing has come from the peer on this connection yet.
    pub(super) nothing_received: bool,
    /// The first bytes from the peer showed it is not an MLLP receiver.
    pub(super) foreign: Option<Recognised>,
}

impl AckReader {
    pub(super) fn new(max_frame: usize) -> Self {
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
    pub(super) fn poll_next(
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
    pub(super) fn buffered(&mut self) -> Option<Result<Option<Decoded>, FramingError>> {
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
pub(super) const ALERT_WAIT: Duration = Duration::from_millis(500);

/// The cause of a failed read or write on the link, with what went wrong: a TLS error before
/// the peer's first byte through the TLS table (a refused client certificate above all),
/// anything else as before. `look_for_alert` (a failed write on a TLS link) reads what the
/// peer may have said before the reset.
pub(super) async fn link_failure(
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

/// One buffer being written and flushed, publishing how much of it the stream has taken so
/// far: a reply to a frame is credited only once the whole frame was written. Its state lives
/// here, not in a future, so the link loop keeps one across turns without boxing one per write;
/// done, it gives back the buffer, to be reused for the next write.
pub(super) struct WriteBatch {
    pub(super) buf: BytesMut,
    done: usize,
    progress: Arc<AtomicUsize>,
    /// When the frames were taken for it; also when it was flushed, if the stream took it all
    /// at once (see [`WriteBatch::flushed_at`]).
    pub(super) started: Option<Instant>,
    /// The stream made it wait at least once.
    waited: bool,
}

impl WriteBatch {
    pub(super) fn new(buf: BytesMut, progress: Arc<AtomicUsize>) -> Self {
        WriteBatch {
            buf,
            done: 0,
            progress,
            started: None,
            waited: false,
        }
    }

    pub(super) fn poll(
        &mut self,
        stream: &mut BoxStream,
        cx: &mut Context<'_>,
    ) -> Poll<io::Result<()>> {
        let result = self.poll_write(stream, cx);
        self.waited |= result.is_pending();
        result
    }

    pub(super) fn poll_write(
        &mut self,
        stream: &mut BoxStream,
        cx: &mut Context<'_>,
    ) -> Poll<io::Result<()>> {
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
    pub(super) fn flushed_at(&self) -> Option<Instant> {
        self.started.filter(|_| !self.waited)
    }
}

/// What woke one turn of the link loop.
pub(super) enum Turn {
    /// The write in progress finished (its result; the write is taken out).
    Wrote(WriteBatch, io::Result<()>),
    Read(Result<Option<Decoded>, FramingError>),
    Command(Option<Command>),
    Timer,
}

/// The next event on the stream: the write in progress finished, or an item was read. One
/// future for both directions, so one task drives the stream without splitting it (a split
/// puts a lock around every read and write).
pub(super) async fn stream_turn(
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
