//! Handing payloads to the client: the framing-byte check, admission (backpressure), and the
//! trip to the actor, one send at a time or many in one command.

use super::actor::Pending;
use super::admission::Waited;
use super::fate::{Fate, FateCause, Refusal};
use super::options::OnBackpressure;
use super::{Client, Command, Commit, SendHandle};
use bytes::Bytes;
use std::sync::atomic::Ordering;
use tokio::sync::{mpsc, oneshot};
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

    async fn submit(&self, payload: Bytes, cancel: Option<&CancellationToken>) -> SendHandle {
        let (handle, fate_tx, commit_tx) = self.new_handle();
        let refused = match framing_byte(&payload) {
            Some(fate) => Some(fate),
            None => self.admit(payload.len(), cancel).await.err(),
        };
        if let Some(fate) = refused {
            self.settle_now(fate_tx, fate);
            return handle;
        }
        let pending = Pending::new(handle.id, payload, fate_tx, commit_tx);
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
        let mut admitted: Vec<Pending> = Vec::new();
        for payload in payloads {
            let (handle, fate_tx, commit_tx) = self.new_handle();
            let len = payload.len();
            let refused = if let Some(fate) = framing_byte(&payload) {
                Some(fate)
            } else if self.shared.admission.try_admit(len) {
                None
            } else {
                // No room: the sends admitted so far go first, so their ACKs can make some.
                self.hand_over_many(&mut admitted).await;
                self.admit(len, cancel).await.err()
            };
            match refused {
                Some(fate) => self.settle_now(fate_tx, fate),
                None => admitted.push(Pending::new(handle.id, payload, fate_tx, commit_tx)),
            }
            handles.push(handle);
        }
        self.hand_over_many(&mut admitted).await;
        handles
    }

    fn new_handle(&self) -> (SendHandle, oneshot::Sender<Fate>, oneshot::Sender<Commit>) {
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        let (fate_tx, fate_rx) = oneshot::channel();
        let (commit_tx, commit_rx) = oneshot::channel();
        let handle = SendHandle {
            id,
            fate: fate_rx,
            commit: Some(commit_rx),
            commands: self.commands.downgrade(),
        };
        (handle, fate_tx, commit_tx)
    }

    /// Take room for a payload of `len` bytes by the backpressure policy; `Err` is its fate.
    async fn admit(&self, len: usize, cancel: Option<&CancellationToken>) -> Result<(), Fate> {
        let admission = &self.shared.admission;
        if admission.try_admit(len) {
            return Ok(());
        }
        let reason = match self.options.on_backpressure {
            OnBackpressure::Reject => Refusal::WindowFull,
            OnBackpressure::Wait => {
                match admission
                    .admit_wait(len, self.options.ack_timeout, cancel)
                    .await
                {
                    Waited::Admitted => return Ok(()),
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

    fn settle_now(&self, fate_tx: oneshot::Sender<Fate>, fate: Fate) {
        self.shared.counters().record_fate(&fate);
        let _ = fate_tx.send(fate);
    }

    async fn hand_over_many(&self, admitted: &mut Vec<Pending>) {
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
    /// taken in, and settle here.
    async fn hand_over(&self, command: Command) {
        let Err(mpsc::error::SendError(command)) = self.commands.send(command).await else {
            return;
        };
        let pendings = match command {
            Command::Send(p) => vec![p],
            Command::SendMany(ps) => ps,
            _ => Vec::new(),
        };
        for p in pendings {
            self.shared.admission.release(p.payload.len());
            p.settle_detached(
                &self.shared,
                Fate::NeverDelivered {
                    cause: FateCause::Closed,
                },
            );
        }
    }
}

/// A payload holding VT or FS cannot be framed: never delivered.
fn framing_byte(payload: &[u8]) -> Option<Fate> {
    memchr::memchr2(crate::framing::VT, crate::framing::FS, payload).map(|_| Fate::NeverDelivered {
        cause: FateCause::PayloadContainsFramingByte,
    })
}
