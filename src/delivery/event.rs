//! What a run hands out as it goes: each message's one [`MessageOutcome`], the client's events, and
//! [`RunNote`]s about the run as a whole; and the channel that carries them, a batch at a time.

use crate::cause::Cause;
use crate::client::{ClientEvent, Fate, LinkFailure};
use crate::input::{InputError, Message};
use bytes::Bytes;
use std::sync::Arc;
use tokio::sync::mpsc;

/// One message on its way, across rewrites. `Debug` shows the payload's length, never its bytes.
#[derive(Clone)]
pub struct Item {
    /// The source as shown to the user: a path, or `-` for stdin.
    pub source: Arc<str>,
    /// 1-based position of the message in its source.
    pub index: u64,
    /// The bytes sent, control ID rewritten when the run gives fresh ones.
    pub payload: Bytes,
    /// Its place in the run's input, from 1: the order it was read and first handed over.
    pub seq: u64,
    /// How many times its frame was written: 0 for a message never written, more than 1 when
    /// the client wrote it again after a reconnect.
    pub writes: u32,
    /// MSH-10 as the input had it, when the run gave the message a fresh one.
    pub original_control_id: Option<Arc<str>>,
}

impl Item {
    pub(super) fn new(message: Message, seq: u64) -> Item {
        Item {
            source: message.source,
            index: message.index,
            payload: message.payload,
            seq,
            writes: 0,
            original_control_id: message.original_control_id,
        }
    }

    /// `adt.hl7#2`, `-#1`.
    pub fn label(&self) -> String {
        format!("{}#{}", self.source, self.index)
    }

    /// MSH-10, when the message has one.
    pub fn control_id(&self) -> Option<String> {
        // A payload that opens with its header (every one the input check passes) has it as its
        // first MSH segment: read MSH-10 off it rather than scanning every segment.
        let id = if self.payload.starts_with(b"MSH") {
            crate::input::header::control_id_and_app_ack(&self.payload).0
        } else {
            crate::hl7::scan(&self.payload).msh?.control_id()
        };
        let id = id?;
        (!id.is_empty()).then(|| String::from_utf8_lossy(id).into_owned())
    }

    /// Times its bytes went on the wire: the first write and every rewrite.
    pub fn attempts(&self) -> u32 {
        self.writes
    }

    /// Times it was written again after its first write.
    pub fn rewrites(&self) -> u32 {
        self.writes.saturating_sub(1)
    }
}

impl std::fmt::Debug for Item {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Item")
            .field("source", &self.source)
            .field("index", &self.index)
            .field("bytes", &self.payload.len())
            .field("seq", &self.seq)
            .field("writes", &self.writes)
            .finish()
    }
}

/// A message's final fate: it comes out exactly once per message read.
#[derive(Debug)]
pub struct MessageOutcome {
    /// The message.
    pub item: Item,
    /// What became of it.
    pub fate: Fate,
    /// The cause when the run, not the link, ended the message, overriding the fate's own: the
    /// cause the client gave up on, `run-timeout` past the deadline, or after a stop the link's
    /// last failure (a refused port stays `connection-refused`, not the shutdown that followed).
    pub cause: Option<Cause>,
}

/// Something about the run as a whole. Exhaustive: the command says every note there is.
#[derive(Debug)]
pub enum RunNote {
    /// Reading the input failed part way; no more is read, the rest of the run goes on.
    InputError(InputError),
    /// The deadline passed: nothing more is sent; what was written and not answered ends
    /// unknown-fate, the rest never-delivered, both `run-timeout`.
    TimedOut,
    /// [`RunControls::stop`](super::RunControls::stop): no more is read; what was written drains.
    Interrupted,
    /// The failure the client gave up on, in its own words. Comes after [`RunEvent::Closing`].
    GaveUp(LinkFailure),
    /// A message could not be written to the failed-messages directory.
    FailedOutWrite {
        /// The file's name in the directory (`000006-adt.hl7#6.hl7`).
        file: String,
        /// Why writing it failed.
        error: std::io::Error,
    },
}

/// What [`Run::next`](super::Run::next) hands out.
#[derive(Debug)]
#[non_exhaustive]
pub enum RunEvent {
    /// A message's one final fate, in input order.
    Outcome(MessageOutcome),
    /// A client event (state changes, errors, warnings), as the client broadcast it.
    Client(ClientEvent),
    /// Something about the run as a whole.
    Note(RunNote),
    /// No more outcomes come: every message read has its fate. The link's last events and
    /// notes follow, then the end.
    Closing,
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// The rule: MSH-10 of the payload's first MSH segment, as the whole-payload scan reads it.
    fn reference(payload: &[u8]) -> Option<String> {
        let id = crate::hl7::scan(payload).msh?.control_id()?;
        (!id.is_empty()).then(|| String::from_utf8_lossy(id).into_owned())
    }

    fn item(payload: Vec<u8>) -> Item {
        Item {
            source: "a.hl7".into(),
            index: 1,
            payload: payload.into(),
            seq: 1,
            writes: 1,
            original_control_id: None,
        }
    }

    /// Header-like bytes: separators, CR and LF dense enough to end fields and segments
    /// anywhere, sometimes behind the `MSH` that opens the payload.
    fn payload() -> impl Strategy<Value = Vec<u8>> {
        let byte = prop_oneof![
            4 => prop::sample::select(b"|^~\\&AB1".to_vec()),
            1 => prop::sample::select(b"\r\n".to_vec()),
            1 => any::<u8>(),
        ];
        (
            prop::sample::select(vec![&b"MSH"[..], b"MSH|^~\\&|", b"", b"\rMSH|", b"EVN|"]),
            prop::collection::vec(byte, 0..160),
        )
            .prop_map(|(head, tail)| [head, &tail[..]].concat())
    }

    proptest! {
        #[test]
        fn the_control_id_is_the_first_headers_msh_10(payload in payload()) {
            prop_assert_eq!(item(payload.clone()).control_id(), reference(&payload));
        }
    }
}

/// What the run's channel carries: one event, or a run of them handed over at once (the
/// outcomes of one turn of the collector), so a burst of fates costs one channel send and one
/// wake-up of the reader, not one each.
#[derive(Debug)]
pub(super) enum EventBatch<T = RunEvent> {
    One(T),
    Many(Vec<T>),
}

/// Events handed over in one batch at most, and batches the channel holds: the run is at most
/// about [`EVENTS_AHEAD`](super::EVENTS_AHEAD) events ahead of its reader.
pub(super) const BATCH_EVENTS: usize = 64;
pub(super) const BATCHES_AHEAD: usize = super::EVENTS_AHEAD / BATCH_EVENTS;

/// Where the run's events go; a reader that went away makes every send a no-op.
#[derive(Clone)]
pub(super) struct Out(pub mpsc::Sender<EventBatch>);

impl Out {
    pub(crate) async fn emit(&self, event: RunEvent) {
        self.send(EventBatch::One(event)).await;
    }

    /// Straight into the channel when it has room (the usual case): no send future to move
    /// the batch through, no semaphore wait to set up.
    pub(crate) async fn send(&self, batch: EventBatch) {
        if let Err(mpsc::error::TrySendError::Full(batch)) = self.0.try_send(batch) {
            let _ = self.0.send(batch).await;
        }
    }
}
