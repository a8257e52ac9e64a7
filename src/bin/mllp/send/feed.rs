//! The reader thread: blocking file reads, handed to the async side in chunks (one wake-up per
//! chunk, not per message), and the producer's end that takes them out one by one.

use mllp::input::{InputError, InputSet, Message};
use tokio::sync::mpsc;

/// Chunks read ahead of the client, at most: with the window, this bounds memory.
const READ_AHEAD_CHUNKS: usize = 4;

/// A chunk is handed over (files only) once it holds this many messages or [`CHUNK_BYTES`]
/// of payload: one wake-up of each side per chunk, not per message, and read-ahead bounded in
/// bytes whatever the messages' size.
const CHUNK: usize = 1024;
const CHUNK_BYTES: usize = 256 * 1024;

/// The reader thread: blocking file reads, at most [`READ_AHEAD_CHUNKS`] chunks ahead. Endless
/// input (`--stream`) goes one message at a time so none waits for a full chunk.
pub fn spawn_reader(mut set: InputSet, stream: bool) -> Feed {
    let chunk = if stream { 1 } else { CHUNK };
    let (tx, rx) = mpsc::channel(READ_AHEAD_CHUNKS);
    std::thread::spawn(move || {
        let mut batch = Vec::with_capacity(chunk);
        let mut bytes = 0;
        for message in set.messages() {
            let failed = message.is_err();
            bytes += message.as_ref().map_or(0, |m| m.payload.len());
            batch.push(message);
            if batch.len() == chunk || bytes >= CHUNK_BYTES || failed {
                bytes = 0;
                let full = std::mem::replace(&mut batch, Vec::with_capacity(chunk));
                if tx.blocking_send(full).is_err() || failed {
                    return;
                }
            }
        }
        if !batch.is_empty() {
            let _ = tx.blocking_send(batch);
        }
    });
    Feed {
        chunks: rx,
        current: Vec::new().into_iter(),
    }
}

/// The producer's end of the reader thread: messages one by one out of the chunks.
pub struct Feed {
    chunks: mpsc::Receiver<Vec<Result<Message, InputError>>>,
    current: std::vec::IntoIter<Result<Message, InputError>>,
}

impl Feed {
    /// The next message, `None` at the end of the input. Cancel-safe: a message is taken out of
    /// the chunk only when this returns.
    pub async fn recv(&mut self) -> Option<Result<Message, InputError>> {
        loop {
            if let Some(message) = self.current.next() {
                return Some(message);
            }
            self.current = self.chunks.recv().await?.into_iter();
        }
    }

    /// Read no more: messages not yet taken are never counted as read.
    pub fn close(&mut self) {
        self.chunks.close();
        self.current = Vec::new().into_iter();
    }
}
