//! The first read of a connection with nothing buffered lands in a block of the worker thread,
//! not of the connection: what arrives is split off the block (no copy, no allocation), so an
//! idle connection's task carries no read array, and the frames cut from it share the block.
//! Thousands of idle connections cost a block per thread instead of a buffer each; a block is
//! reused once every frame cut from it has gone, or replaced when one is still held.

use bytes::{BufMut, BytesMut};
use std::cell::Cell;
use std::future::poll_fn;
use std::io;
use std::pin::Pin;
use std::task::{Context, Poll};
use tokio::io::AsyncRead;
use tokio_util::io::poll_read_buf;

/// The most a first read takes.
pub(super) const SCRATCH: usize = 2048;
/// A thread's block: a few first reads' worth, so a frame still held pins little.
const BLOCK: usize = 8 * SCRATCH;

thread_local! {
    /// Taken while a read is polled and put back after; a poll that finds it taken (nested in
    /// another) uses one of its own.
    static SPARE: Cell<Option<BytesMut>> = const { Cell::new(None) };
}

/// Read once from `stream`, at most `limit` bytes (and [`SCRATCH`]), appending what arrived to
/// `buf`; how many bytes, 0 at the end of the stream.
pub(super) async fn read_once<S: AsyncRead + Unpin>(
    stream: &mut S,
    limit: usize,
    buf: &mut BytesMut,
) -> io::Result<usize> {
    poll_fn(|cx| poll_once(Pin::new(&mut *stream), cx, limit, buf)).await
}

fn poll_once<S: AsyncRead>(
    stream: Pin<&mut S>,
    cx: &mut Context<'_>,
    limit: usize,
    buf: &mut BytesMut,
) -> Poll<io::Result<usize>> {
    let limit = limit.min(SCRATCH);
    let mut block = SPARE
        .try_with(Cell::take)
        .ok()
        .flatten()
        .unwrap_or_default();
    if block.capacity() < limit {
        // In place when nothing cut from the block is held any more, else a new block.
        block.reserve(BLOCK);
    }
    let polled = poll_read_buf(stream, cx, &mut (&mut block).limit(limit));
    if let Poll::Ready(Ok(n)) = polled {
        buf.unsplit(block.split_to(n));
    }
    // At thread exit the block is simply dropped.
    let _ = SPARE.try_with(|spare| spare.set(Some(block)));
    polled
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::future::Future;
    use tokio::io::AsyncWriteExt;

    #[tokio::test]
    async fn reads_at_most_the_limit_and_keeps_only_what_arrived() {
        let (mut peer, mut stream) = tokio::io::duplex(8192);
        peer.write_all(&[7u8; 3000]).await.unwrap();
        let mut buf = BytesMut::new();
        assert_eq!(read_once(&mut stream, 100, &mut buf).await.unwrap(), 100);
        assert_eq!(&buf[..], &[7u8; 100][..]);
        // Never past the scratch buffer, whatever the limit.
        let n = read_once(&mut stream, 1 << 20, &mut buf).await.unwrap();
        assert_eq!(n, SCRATCH);
        assert_eq!(buf.len(), 100 + SCRATCH);
        drop(peer);
        let rest = 3000 - 100 - SCRATCH;
        assert_eq!(
            read_once(&mut stream, 1 << 20, &mut buf).await.unwrap(),
            rest
        );
        assert_eq!(read_once(&mut stream, 1 << 20, &mut buf).await.unwrap(), 0);
        assert_eq!(buf.len(), 3000);
    }

    #[tokio::test]
    async fn a_read_that_waited_for_input_keeps_what_came() {
        let (mut peer, mut stream) = tokio::io::duplex(64);
        // Nothing has arrived: the read waits, and nothing is appended.
        let mut buf = BytesMut::new();
        {
            let reading = read_once(&mut stream, 64, &mut buf);
            tokio::pin!(reading);
            let mut cx = Context::from_waker(std::task::Waker::noop());
            assert!(reading.as_mut().poll(&mut cx).is_pending());
            peer.write_all(b"abc").await.unwrap();
            assert_eq!(reading.await.unwrap(), 3);
        }
        assert_eq!(&buf[..], b"abc");
    }
}
