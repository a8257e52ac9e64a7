//! Where a run's messages come from: an [`InputSet`] read on a thread of its own and handed over
//! in chunks (one wake-up per chunk, not per message), or any channel of messages; and the
//! producer's end that takes them out one by one.

use crate::input::{InputError, InputSet, Message};
use tokio::sync::mpsc;

/// Chunks read ahead of the client, at most: with the window, this bounds memory.
const READ_AHEAD_CHUNKS: usize = 4;

/// A chunk is handed over (finite input) once it holds this many messages or [`CHUNK_BYTES`]
/// of payload: one wake-up of each side per chunk, not per message, and read-ahead bounded in
/// bytes whatever the messages' size.
const CHUNK: usize = 1024;
const CHUNK_BYTES: usize = 256 * 1024;

/// The messages of one run, in the order they are to be sent.
pub struct Input {
    feed: Feed,
    endless: bool,
}

impl Input {
    /// The messages of `set`, read on a thread of their own (file reads block) at most a few
    /// chunks ahead of the client. `endless` is for a stream read as it comes (`InputSet` made
    /// with `stream`): each message is handed over as soon as it is read, a run past its
    /// deadline stops reading it, and so does a run whose client gave up.
    pub fn from_set(set: InputSet, endless: bool) -> Input {
        Input {
            feed: spawn_reader(set, endless),
            endless,
        }
    }

    /// Messages from any producer; the input ends when every sender is dropped. `endless` as
    /// for [`Input::from_set`]. A bounded channel holds the producer back with the client.
    pub fn from_channel(messages: mpsc::Receiver<Message>, endless: bool) -> Input {
        Input {
            feed: Feed::Channel(messages),
            endless,
        }
    }

    pub(super) fn into_parts(self) -> (Feed, bool) {
        (self.feed, self.endless)
    }
}

impl std::fmt::Debug for Input {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Input")
            .field("endless", &self.endless)
            .finish_non_exhaustive()
    }
}

/// The reader thread: blocking file reads, at most [`READ_AHEAD_CHUNKS`] chunks ahead. Endless
/// input goes one message at a time so none waits for a full chunk.
fn spawn_reader(mut set: InputSet, endless: bool) -> Feed {
    let chunk = if endless { 1 } else { CHUNK };
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
                // Sized as the chunk just filled: large messages fill few slots of a chunk.
                let room = batch.len();
                let full = std::mem::replace(&mut batch, Vec::with_capacity(room));
                if tx.blocking_send(full).is_err() || failed {
                    return;
                }
            }
        }
        if !batch.is_empty() {
            let _ = tx.blocking_send(batch);
        }
    });
    Feed::Chunks {
        chunks: rx,
        current: Vec::new().into_iter(),
    }
}

/// The producer's end of the input: messages one by one.
pub(super) enum Feed {
    Chunks {
        chunks: mpsc::Receiver<Vec<Result<Message, InputError>>>,
        current: std::vec::IntoIter<Result<Message, InputError>>,
    },
    Channel(mpsc::Receiver<Message>),
}

impl Feed {
    /// The next message, `None` at the end of the input. Cancel-safe: a message is taken out of
    /// the chunk only when this returns.
    pub(crate) async fn recv(&mut self) -> Option<Result<Message, InputError>> {
        match self {
            Feed::Chunks { chunks, current } => loop {
                if let Some(message) = current.next() {
                    return Some(message);
                }
                *current = chunks.recv().await?.into_iter();
            },
            Feed::Channel(messages) => messages.recv().await.map(Ok),
        }
    }

    /// The next message of the chunk in hand, without waiting; `None` when a wait (or the
    /// end) comes first. What [`Feed::recv`] would give next, when it is `Some`.
    pub(crate) fn try_recv(&mut self) -> Option<Result<Message, InputError>> {
        match self {
            Feed::Chunks { current, .. } => current.next(),
            Feed::Channel(messages) => messages.try_recv().ok().map(Ok),
        }
    }

    /// Whether every message comes from the crate's splitter, which lets no VT or FS through.
    pub(crate) fn is_split(&self) -> bool {
        matches!(self, Feed::Chunks { .. })
    }

    /// Read no more: messages not yet taken are never counted as read.
    pub(crate) fn close(&mut self) {
        match self {
            Feed::Chunks { chunks, current } => {
                chunks.close();
                *current = Vec::new().into_iter();
            }
            Feed::Channel(messages) => messages.close(),
        }
    }
}
