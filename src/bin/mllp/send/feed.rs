//! The reader thread: blocking file reads, handed to the async side in chunks (one wake-up per
//! chunk, not per message), and the producer's end that takes them out one by one.

use mllp::input::{InputError, InputSet, Message};
use tokio::sync::mpsc;

/// Messages read ahead of the client, at most: with the window, this bounds memory.
const READ_AHEAD: usize = 256;

/// Messages the reader thread hands over at once (files only): one wake-up per chunk, not per
/// message.
const CHUNK: usize = 32;

/// The reader thread: blocking file reads, at most [`READ_AHEAD`] messages ahead, handed over in
/// chunks. Endless input (`--stream`) goes one message at a time so none waits for a full chunk.
pub fn spawn_reader(mut set: InputSet, stream: bool) -> Feed {
    let chunk = if stream { 1 } else { CHUNK };
    let (tx, rx) = mpsc::channel(READ_AHEAD / chunk);
    std::thread::spawn(move || {
        let mut batch = Vec::with_capacity(chunk);
        for message in set.messages() {
            let failed = message.is_err();
            batch.push(message);
            if batch.len() == chunk || failed {
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
