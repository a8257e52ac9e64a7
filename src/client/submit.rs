//! Handing payloads to the client: the framing-byte check, admission (backpressure), and the
//! trip to the actor, one send at a time or many in one command.
//!
//! A caller may drop these futures at any await, including while the actor's command channel
//! is full. Each admitted send carries its window room inside its [`Pending`], so a send
//! dropped before the actor took it gives its room back with it; it was never handed over, so
//! no fate is counted for it.

use super::admission::{Room, Waited};
use super::fate::{Fate, FateCause, Refusal};
use super::fate_cell::{fate_cell, FateTx};
use super::options::OnBackpressure;
use super::pending::Pending;
use super::{Client, Command, SendHandle};
use bytes::Bytes;
use std::sync::atomic::Ordering;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

impl Client {
    /// Hand one payload (an HL7 message, unframed) to the client. Under `reject` a full window
    /// settles the handle at once as refused; under `wait` this waits for room, bounded by the
    /// ACK timeout. Returns as soon as the send is admitted: await the handle for its fate.
    pub async fn send(&self, payload: Bytes) -> SendHandle {
        self.submit(payload, None).await
    }

    /// As [`Client::send`]; `cancel` aborts a wait for room (the send is then never delivered).
    /// After admission, cancel through [`SendHandle::cancel`].
    pub async fn send_cancellable(&self, payload: Bytes, cancel: &CancellationToken) -> SendHandle {
        self.submit(payload, Some(cancel)).await
    }

    /// Hand many payloads over, in order, without awaiting each: one handle per payload, in
    /// the same order. Each is admitted exactly as by [`Client::send`]; the sends admitted
    /// together reach the link in one command. Under `wait`, the sends already admitted are
    /// handed over before waiting for room for the next, so a batch larger than the window
    /// flows through it.
    pub async fn send_many<I>(&self, payloads: I) -> Vec<SendHandle>
    where
        I: IntoIterator<Item = Bytes>,
    {
        self.submit_many(payloads, None).await
    }

    /// As [`Client::send_many`]; `cancel` aborts the waits for room of the sends not yet
    /// admitted (each is then never delivered).
    pub async fn send_many_cancellable<I>(
        &self,
        payloads: I,
        cancel: &CancellationToken,
    ) -> Vec<SendHandle>
    where
        I: IntoIterator<Item = Bytes>,
    {
        self.submit_many(payloads, Some(cancel)).await
    }

    /// As [`Client::send_cancellable`] for a payload the crate's input splitter made: it
    /// refuses VT and FS inside a message, so the payload is not searched for them again.
    pub(crate) async fn send_split(
        &self,
        payload: Bytes,
        cancel: &CancellationToken,
    ) -> SendHandle {
        self.submit_from(payload, Some(cancel), Origin::Splitter)
            .await
    }

    async fn submit(&self, payload: Bytes, cancel: Option<&CancellationToken>) -> SendHandle {
        self.submit_from(payload, cancel, Origin::Caller).await
    }

    async fn submit_from(
        &self,
        payload: Bytes,
        cancel: Option<&CancellationToken>,
        origin: Origin,
    ) -> SendHandle {
        let (mut handle, fate_tx) = self.new_handle();
        let framing = match origin {
            Origin::Caller => framing_byte(&payload),
            Origin::Splitter => None,
        };
        let admitted = match framing {
            Some(fate) => Err(fate),
            None => self.admit(payload.len(), cancel).await,
        };
        let room = match admitted {
            Ok(room) => room,
            Err(fate) => {
                self.settle_now(fate_tx, fate);
                return handle;
            }
        };
        let mut pending = Pending::new(handle.id, payload, room, fate_tx);
        handle.commit = pending.commit_channel();
        self.hand_over(Command::Send(pending)).await;
        handle
    }

    async fn submit_many<I>(
        &self,
        payloads: I,
        cancel: Option<&CancellationToken>,
    ) -> Vec<SendHandle>
    where
        I: IntoIterator<Item = Bytes>,
    {
        let payloads = payloads.into_iter();
        let mut handles = Vec::with_capacity(payloads.size_hint().0);
        let mut admitted: Vec<Box<Pending>> = Vec::new();
        for payload in payloads {
            let (mut handle, fate_tx) = self.new_handle();
            let len = payload.len();
            let room = if let Some(fate) = framing_byte(&payload) {
                Err(fate)
            } else if let Some(room) = self.shared.admission.try_admit(len) {
                Ok(room)
            } else {
                // No room: the sends admitted so far go first, so their ACKs can make some.
                self.hand_over_many(&mut admitted).await;
                self.admit(len, cancel).await
            };
            match room {
                Err(fate) => self.settle_now(fate_tx, fate),
                Ok(room) => {
                    let mut pending = Pending::new(handle.id, payload, room, fate_tx);
                    handle.commit = pending.commit_channel();
                    admitted.push(pending);
                }
            }
            handles.push(handle);
        }
        self.hand_over_many(&mut admitted).await;
        handles
    }

    /// A handle without a commit channel: the send's [`Pending`] makes one when its MSH-16
    /// asks for an application ACK.
    fn new_handle(&self) -> (SendHandle, FateTx) {
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        let (fate_tx, fate_rx) = fate_cell();
        let handle = SendHandle {
            id,
            fate: fate_rx,
            commit: None,
            commands: self.commands.downgrade(),
        };
        (handle, fate_tx)
    }

    /// Take room for a payload of `len` bytes by the backpressure policy; `Err` is its fate.
    async fn admit(&self, len: usize, cancel: Option<&CancellationToken>) -> Result<Room, Fate> {
        let admission = &self.shared.admission;
        if let Some(room) = admission.try_admit(len) {
            return Ok(room);
        }
        let reason = match self.options.on_backpressure {
            OnBackpressure::Reject => Refusal::WindowFull,
            OnBackpressure::Wait => {
                match admission
                    .admit_wait(len, self.options.ack_timeout, cancel)
                    .await
                {
                    Waited::Admitted(room) => return Ok(room),
                    Waited::TimedOut => Refusal::WaitTimedOut,
                    Waited::Cancelled => {
                        return Err(Fate::NeverDelivered {
                            cause: FateCause::Cancelled,
                        })
                    }
                }
            }
        };
        Err(Fate::Refused { reason })
    }

    fn settle_now(&self, fate_tx: FateTx, fate: Fate) {
        self.shared.counters().record_fate(&fate);
        fate_tx.send(fate);
    }

    // Each send keeps the box it was made in (see `Pending::new`).
    #[allow(clippy::vec_box)]
    async fn hand_over_many(&self, admitted: &mut Vec<Box<Pending>>) {
        match admitted.len() {
            0 => {}
            1 => {
                if let Some(p) = admitted.pop() {
                    self.hand_over(Command::Send(p)).await;
                }
            }
            _ => {
                self.hand_over(Command::SendMany(std::mem::take(admitted)))
                    .await
            }
        }
    }

    /// Give admitted sends to the actor; when it is gone (the client is closed) they were never
    /// taken in, and settle here. Waits while the command channel is full; dropped there, the
    /// command and its sends' rooms are dropped with it.
    async fn hand_over(&self, command: Command) {
        // Straight into the channel when it has room (the usual case): no send future to move
        // the command through, no semaphore wait to set up.
        let command = match self.commands.try_send(command) {
            Ok(()) => return,
            Err(mpsc::error::TrySendError::Full(command)) => {
                match self.commands.send(command).await {
                    Ok(()) => return,
                    Err(mpsc::error::SendError(command)) => command,
                }
            }
            Err(mpsc::error::TrySendError::Closed(command)) => command,
        };
        let pendings = match command {
            Command::Send(p) => vec![p],
            Command::SendMany(ps) => ps,
            _ => Vec::new(),
        };
        for p in pendings {
            p.settle_detached(
                &self.shared,
                Fate::NeverDelivered {
                    cause: FateCause::Closed,
                },
            );
        }
    }
}

/// Who made a payload: any caller's bytes are checked for framing bytes; the splitter's never
/// hold one.
#[derive(Clone, Copy)]
enum Origin {
    Caller,
    Splitter,
}

/// A payload holding VT or FS cannot be framed: never delivered.
fn framing_byte(payload: &[u8]) -> Option<Fate> {
    memchr::memchr2(crate::framing::VT, crate::framing::FS, payload).map(|_| Fate::NeverDelivered {
        cause: FateCause::PayloadContainsFramingByte,
    })
}
