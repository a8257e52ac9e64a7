//! Handing payloads to the client: the framing-byte check, admission (backpressure), and the
//! trip to the actor, one send at a time or many in one command.
//!
//! A caller may drop these futures at any await, including while the actor's command channel
//! is full. Each admitted send carries its window room inside its [`Pending`], so a send
//! dropped before the actor took it gives its room back with it; it was never handed over, so
//! no fate is counted for it.

use super::admission::{Cancel, Room, Waited};
use super::fate::{Fate, FateCause, Refusal};
use super::fate_cell::{fate_cell, fate_cells, FateRx, FateTx};
use super::options::OnBackpressure;
use super::pending::Pending;
use super::{Client, Command, SendHandle};
use bytes::Bytes;
use std::pin::{pin, Pin};
use std::sync::atomic::Ordering;
use tokio::sync::mpsc;
use tokio_util::sync::{CancellationToken, WaitForCancellationFuture};

/// The stop of a caller of [`Client::send_some`]: its token, and its wait on it, made once for
/// every wait for room of the caller's run (made afresh, each would register with the token,
/// and unregister).
pub(crate) struct CallerStop<'w, 't> {
    pub token: &'t CancellationToken,
    pub wait: Pin<&'w mut WaitForCancellationFuture<'t>>,
}

impl<'t> CallerStop<'_, 't> {
    fn cancel(&mut self) -> Cancel<'_, 't> {
        self.wait.as_mut()
    }
}

impl Client {
    /// Hand one payload (an HL7 message, unframed) to the client. Under `reject` a full window
    /// settles the handle at once as refused; under `wait` this waits for room, bounded by the
    /// ACK timeout. Returns as soon as the send is admitted: await the handle for its fate.
    pub async fn send(&self, payload: Bytes) -> SendHandle {
        self.submit(payload, true, None).await
    }

    /// As [`Client::send`]; `cancel` aborts a wait for room (the send is then never delivered).
    /// After admission, cancel through [`SendHandle::cancel`].
    pub async fn send_cancellable(&self, payload: Bytes, cancel: &CancellationToken) -> SendHandle {
        let wait = pin!(cancel.cancelled());
        self.submit(payload, true, Some(wait)).await
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
    #[cfg(feature = "sqlite")]
    pub(crate) async fn send_many_cancellable<I>(
        &self,
        payloads: I,
        cancel: &CancellationToken,
    ) -> Vec<SendHandle>
    where
        I: IntoIterator<Item = Bytes>,
    {
        self.submit_many(payloads, Some(cancel)).await
    }

    /// Hand over the longest run of `items` at their head that can go now, in order: every one
    /// that fits the window, admitted under one lock and given to the actor in one command.
    /// When the first does not fit, it waits for room as [`Client::send_cancellable`] would,
    /// then takes whatever else fits without waiting. Under `reject` a payload that does not fit
    /// is refused and the next tried, as one at a time. Pushes one handle per item taken onto
    /// `handles` (at least one when `items` is not empty), in order; the caller hands over the
    /// rest later, after looking at its stop. `split`: the payloads come from the crate's
    /// splitter, which lets no VT or FS through, and are not searched for them again.
    pub(crate) async fn send_some<T>(
        &self,
        items: &[T],
        payload: impl Fn(&T) -> &Bytes,
        split: bool,
        stop: &mut CallerStop<'_, '_>,
        handles: &mut Vec<SendHandle>,
    ) {
        if let [item] = items {
            // One message (each one at window 1): as one send, with no batch buffers to make.
            let item = payload(item).clone();
            handles.push(self.submit(item, !split, Some(stop.cancel())).await);
            return;
        }
        let taken_before = handles.len();
        let mut admitted: Vec<Box<Pending>> = Vec::with_capacity(items.len());
        let mut rooms = Vec::with_capacity(items.len());
        let mut at = 0;
        while at < items.len() {
            let rest = &items[at..];
            // Any caller's payloads go only up to the first holding a framing byte.
            let clean = if split {
                rest.len()
            } else {
                rest.iter()
                    .position(|i| framing_byte(payload(i)).is_some())
                    .unwrap_or(rest.len())
            };
            let n = self.take_fitting(&rest[..clean], &payload, &mut rooms, handles, &mut admitted);
            at += n;
            let Some(next) = items.get(at) else { break };
            let waits = self.options.on_backpressure == OnBackpressure::Wait && n < clean;
            if waits && handles.len() > taken_before {
                // What fits goes now; the caller comes back for the rest.
                break;
            }
            at += 1;
            // Stopped short of the window (`n == clean`): this one holds a framing byte.
            let framing = n == clean;
            let (handle, taken) = self
                .take_next(payload(next), framing, stop, &mut admitted)
                .await;
            handles.push(handle);
            // Stopped during the wait: no more. Refused after a wait, the caller looks at its
            // stop before any more.
            if waits && (!taken || stop.token.is_cancelled()) {
                break;
            }
        }
        self.hand_over_many(&mut admitted).await;
    }

    /// Takes the run of `items` that fits the window now, admitted under one lock: pushes their
    /// handles and queues them on `admitted`. How many it took.
    #[allow(clippy::vec_box)]
    fn take_fitting<T>(
        &self,
        items: &[T],
        payload: &impl Fn(&T) -> &Bytes,
        rooms: &mut Vec<Room>,
        handles: &mut Vec<SendHandle>,
        admitted: &mut Vec<Box<Pending>>,
    ) -> usize {
        let lens = items.iter().map(|i| payload(i).len());
        let n = self.shared.admission.try_admit_many(lens, rooms);
        // Their fate cells in one allocation (none when the window is full).
        let cells = (n > 0).then(|| fate_cells(n)).into_iter().flatten();
        for ((item, room), (fate_tx, fate_rx)) in items[..n].iter().zip(rooms.drain(..)).zip(cells)
        {
            let handle = self.handle(fate_rx);
            let payload = payload(item).clone();
            handles.push(self.admitted_with(handle, fate_tx, payload, room, admitted));
        }
        n
    }

    /// The send after a run that stopped short: refused when it holds a framing byte, else
    /// admitted once there is room (or refused, per the backpressure rule). Its handle, and
    /// whether it was admitted.
    #[allow(clippy::vec_box)]
    async fn take_next(
        &self,
        next: &Bytes,
        framing: bool,
        stop: &mut CallerStop<'_, '_>,
        admitted: &mut Vec<Box<Pending>>,
    ) -> (SendHandle, bool) {
        let (handle, fate_tx) = self.new_handle();
        let room = if framing {
            Err(Fate::NeverDelivered {
                cause: FateCause::PayloadContainsFramingByte,
            })
        } else {
            self.admit(next.len(), Some(stop.cancel())).await
        };
        match room {
            Ok(room) => {
                let handle = self.admitted_with(handle, fate_tx, next.clone(), room, admitted);
                (handle, true)
            }
            Err(fate) => {
                self.settle_now(fate_tx, fate);
                (handle, false)
            }
        }
    }

    /// A new send for `payload`, admitted with `room`, queued on `admitted`; its handle.
    // Each send keeps the box it was made in (see `Pending::new`).
    #[allow(clippy::vec_box)]
    fn admitted_with(
        &self,
        mut handle: SendHandle,
        fate_tx: FateTx,
        payload: Bytes,
        room: Room,
        admitted: &mut Vec<Box<Pending>>,
    ) -> SendHandle {
        let mut pending = Pending::new(handle.id, payload, room, fate_tx);
        handle.commit = pending.commit_channel();
        admitted.push(pending);
        handle
    }

    /// One send; `check`: search the payload for a framing byte (see `send_some`'s `split`).
    async fn submit(
        &self,
        payload: Bytes,
        check: bool,
        cancel: Option<Cancel<'_, '_>>,
    ) -> SendHandle {
        let (mut handle, fate_tx) = self.new_handle();
        let admitted = match check.then(|| framing_byte(&payload)).flatten() {
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
        let mut cancelled = pin!(cancel.map(CancellationToken::cancelled));
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
                let wait = cancelled.as_mut().as_pin_mut();
                self.admit(len, wait).await
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
        let (fate_tx, fate_rx) = fate_cell();
        (self.handle(fate_rx), fate_tx)
    }

    /// The handle of a new send whose fate comes through `fate`.
    fn handle(&self, fate: FateRx) -> SendHandle {
        SendHandle {
            id: self.next_id.fetch_add(1, Ordering::Relaxed),
            fate,
            commit: None,
            commands: self.commands.downgrade(),
        }
    }

    /// Take room for a payload of `len` bytes by the backpressure policy; `Err` is its fate.
    async fn admit(&self, len: usize, cancel: Option<Cancel<'_, '_>>) -> Result<Room, Fate> {
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

/// A payload holding VT or FS cannot be framed: never delivered.
fn framing_byte(payload: &[u8]) -> Option<Fate> {
    memchr::memchr2(crate::framing::VT, crate::framing::FS, payload).map(|_| Fate::NeverDelivered {
        cause: FateCause::PayloadContainsFramingByte,
    })
}
