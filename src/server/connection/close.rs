//! The end of a connection: after a close with input still arriving, keep reading (and
//! discarding) for a while so the kernel sends FIN, not RST, and the peer can still read the ACKs
//! already written.

use super::Shutdown;
use std::time::Duration;
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};

const LINGER: Duration = Duration::from_millis(500);
const LINGER_BYTES: usize = 1024 * 1024;

/// Send FIN, then discard what the peer still sends for a bounded time.
pub(super) async fn linger<S: AsyncRead + AsyncWrite + Unpin>(stream: &mut S, shutdown: &Shutdown) {
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
