//! Backpressure: the in-flight plus queued bound, by count and by bytes (the stricter wins),
//! taken before a send reaches the actor and given back when its fate is decided.
//!
//! Room is a [`Room`] token that gives itself back when dropped, so the room held is exactly
//! the live tokens: a send dropped anywhere before its fate is decided (its caller's future
//! cancelled on the way to the actor, a command left in a closed channel) cannot shrink the
//! window.

use super::options::Window;
use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll, Waker};
use std::time::Duration;
use tokio::time::{Instant, Sleep};
use tokio_util::sync::WaitForCancellationFuture;

/// What ends a wait for room early: the caller's wait on its token, made once by the caller
/// (it may serve many waits; made afresh, each would register with the token, and unregister).
pub(crate) type Cancel<'w, 't> = Pin<&'w mut WaitForCancellationFuture<'t>>;

#[derive(Debug, Default)]
struct Held {
    count: usize,
    bytes: usize,
    /// The wakers of the callers waiting for room, taken (and woken) by a release; a slot is
    /// emptied by its waiter when it stops waiting first.
    waiters: Vec<Option<Waker>>,
    /// Bumped each time `waiters` is emptied, so a waiter knows whether its slot is still there.
    round: u64,
    /// A wait's timer kept for the next wait: setting up a timer costs more than the wait.
    spare_timer: Option<Pin<Box<Sleep>>>,
}

#[derive(Debug)]
pub(crate) struct WindowRoom {
    window: Window,
    held: Mutex<Held>,
    /// Callers in `admit_wait`: releases wake no one when it is zero.
    waiting: AtomicUsize,
}

/// Counts one caller in `admit_wait` for as long as it waits, however the wait ends.
struct WaitingGuard<'a>(&'a AtomicUsize);

impl Drop for WaitingGuard<'_> {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::SeqCst);
    }
}

/// The room one admitted send holds in the window, given back on drop.
#[derive(Debug)]
pub(crate) struct Room {
    admission: Arc<WindowRoom>,
    len: usize,
    /// Cleared by [`Room::give_back_quietly`]: whoever gives it back wakes the waiters later.
    wake: bool,
}

impl Room {
    /// Give the room back without waking anyone yet: the caller calls [`WindowRoom::wake`]
    /// before it next waits, so waiters wake once for all the room freed.
    pub(crate) fn give_back_quietly(mut self) {
        self.wake = false;
    }
}

impl Drop for Room {
    fn drop(&mut self) {
        self.admission.give_back(self.len, self.wake);
    }
}

pub(crate) enum Waited {
    Admitted(Room),
    TimedOut,
    Cancelled,
}

impl WindowRoom {
    pub(crate) fn new(window: Window) -> Self {
        WindowRoom {
            window,
            held: Mutex::new(Held::default()),
            waiting: AtomicUsize::new(0),
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Held> {
        self.held.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Take room for one payload of `len` bytes if there is some. A payload larger than the
    /// byte window is admitted alone, or it could never be sent.
    pub(crate) fn try_admit(self: &Arc<Self>, len: usize) -> Option<Room> {
        let mut held = self.lock();
        self.take(&mut held, len)
    }

    /// Take room for each of `lens` in order under one lock, as [`WindowRoom::try_admit`]
    /// would one at a time, up to the first that does not fit (left, with the rest, to the
    /// caller). Pushes one room per payload admitted onto `rooms`; returns how many.
    pub(crate) fn try_admit_many(
        self: &Arc<Self>,
        lens: impl IntoIterator<Item = usize>,
        rooms: &mut Vec<Room>,
    ) -> usize {
        let mut held = self.lock();
        let mut admitted = 0;
        for len in lens {
            match self.take(&mut held, len) {
                Some(room) => rooms.push(room),
                None => break,
            }
            admitted += 1;
        }
        admitted
    }

    fn take(self: &Arc<Self>, held: &mut Held, len: usize) -> Option<Room> {
        let count_ok = self.window.count.is_none_or(|max| held.count < max);
        let bytes_ok = self
            .window
            .bytes
            .is_none_or(|max| held.count == 0 || held.bytes + len <= max);
        if count_ok && bytes_ok {
            held.count += 1;
            held.bytes += len;
            Some(Room {
                admission: Arc::clone(self),
                len,
                wake: true,
            })
        } else {
            None
        }
    }

    /// Wait for room, at most `limit`, or until `cancel`. Dropping this future mid-wait takes
    /// no room and leaves no waiter counted.
    pub(crate) async fn admit_wait(
        self: &Arc<Self>,
        len: usize,
        limit: Duration,
        cancel: Option<Cancel<'_, '_>>,
    ) -> Waited {
        let deadline = Instant::now() + limit;
        // Counted before the first check under the lock: a release that this check misses sees
        // the count after its own update, and wakes this waiter.
        self.waiting.fetch_add(1, Ordering::SeqCst);
        let _waiting = WaitingGuard(&self.waiting);
        let mut cancel = cancel;
        let mut cancelled = |cx: &mut Context<'_>| match &mut cancel {
            None => false,
            Some(wait) => wait.as_mut().poll(cx).is_ready(),
        };
        let mut wait = Wait {
            admission: self,
            slot: None,
            timer: None,
        };
        let mut first = true;
        std::future::poll_fn(|cx| {
            // A cancel comes first: a wait cancelled as room came takes none (the first look
            // is for the room alone, as the caller's own try just before).
            let first = std::mem::take(&mut first);
            if !first && cancelled(cx) {
                return Poll::Ready(Waited::Cancelled);
            }
            if let Some(room) = wait.take_or_register(len, cx.waker()) {
                return Poll::Ready(Waited::Admitted(room));
            }
            if first && cancelled(cx) {
                return Poll::Ready(Waited::Cancelled);
            }
            wait.poll_timer(cx, deadline).map(|()| Waited::TimedOut)
        })
        .await
    }

    /// Give back one room's `len` bytes; `wake`: wake the waiters, under the same lock.
    fn give_back(&self, len: usize, wake: bool) {
        let mut held = self.lock();
        held.count = held.count.saturating_sub(1);
        held.bytes = held.bytes.saturating_sub(len);
        // Read after the update under the lock: a waiter whose check missed it is counted.
        if wake && self.waiting.load(Ordering::SeqCst) > 0 {
            Self::wake_all(&mut held);
        }
    }

    /// Wake the callers waiting for room, if any.
    pub(crate) fn wake(&self) {
        // Read after the update under the lock: a waiter whose check missed it is counted.
        if self.waiting.load(Ordering::SeqCst) > 0 {
            Self::wake_all(&mut self.lock());
        }
    }

    /// Waking under the lock: a waker only schedules its task, it never polls it here.
    fn wake_all(held: &mut Held) {
        held.round = held.round.wrapping_add(1);
        for waker in held.waiters.drain(..).flatten() {
            waker.wake();
        }
    }

    #[cfg(test)]
    pub(crate) fn held(&self) -> (usize, usize) {
        let held = self.lock();
        (held.count, held.bytes)
    }

    #[cfg(test)]
    pub(crate) fn waiting(&self) -> usize {
        self.waiting.load(Ordering::SeqCst)
    }
}

/// One caller's wait for room: its waker's slot, and its timer.
struct Wait<'a> {
    admission: &'a Arc<WindowRoom>,
    /// `(round, index)` of this waiter's slot in `Held::waiters`, while it is there.
    slot: Option<(u64, usize)>,
    /// Armed for this wait's deadline or an earlier one (a spare from a past wait): it is
    /// re-armed when it fires early, so a wait never ends before its own deadline.
    timer: Option<Pin<Box<Sleep>>>,
}

impl Wait<'_> {
    /// Take room, or leave `waker` to be woken by the next release, under one lock: a release
    /// cannot fall between the check and the registration.
    fn take_or_register(&mut self, len: usize, waker: &Waker) -> Option<Room> {
        let mut held = self.admission.lock();
        match self.slot {
            // Not woken by a release: room given back quietly waits for its wake.
            Some((round, at)) if round == held.round => {
                match &mut held.waiters[at] {
                    Some(w) if w.will_wake(waker) => {}
                    w => *w = Some(waker.clone()),
                }
                return None;
            }
            _ => {}
        }
        if let Some(room) = self.admission.take(&mut held, len) {
            self.leave(&mut held);
            return Some(room);
        }
        held.waiters.push(Some(waker.clone()));
        self.slot = Some((held.round, held.waiters.len() - 1));
        if self.timer.is_none() {
            self.timer = held.spare_timer.take();
        }
        None
    }

    /// Ready once this wait's own deadline has passed.
    fn poll_timer(&mut self, cx: &mut Context<'_>, deadline: Instant) -> Poll<()> {
        let timer = self
            .timer
            .get_or_insert_with(|| Box::pin(tokio::time::sleep_until(deadline)));
        // A spare armed for later than this wait would let it overstay.
        if timer.deadline() > deadline {
            timer.as_mut().reset(deadline);
        }
        loop {
            std::task::ready!(timer.as_mut().poll(cx));
            if timer.deadline() >= deadline {
                self.leave(&mut self.admission.lock());
                return Poll::Ready(());
            }
            // A spare's earlier deadline: not this wait's.
            timer.as_mut().reset(deadline);
        }
    }

    /// Stop waiting: empty this waiter's slot, keep its timer for the next wait.
    fn leave(&mut self, held: &mut Held) {
        if let Some((round, at)) = self.slot.take() {
            if round == held.round {
                held.waiters[at] = None;
                // The slots left by waits that ended first, so they cannot pile up.
                while held.waiters.last().is_some_and(Option::is_none) {
                    held.waiters.pop();
                }
            }
        }
        if let Some(timer) = self.timer.take() {
            held.spare_timer = Some(timer);
        }
    }
}

impl Drop for Wait<'_> {
    fn drop(&mut self) {
        if self.slot.is_some() || self.timer.is_some() {
            let admission = self.admission;
            self.leave(&mut admission.lock());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn admission(count: Option<usize>, bytes: Option<usize>) -> Arc<WindowRoom> {
        Arc::new(WindowRoom::new(Window { count, bytes }))
    }

    #[test]
    fn stricter_bound_wins() {
        let a = admission(Some(3), Some(10));
        let first = a.try_admit(4).unwrap();
        let _second = a.try_admit(4).unwrap();
        assert!(a.try_admit(4).is_none(), "bytes bound");
        let _third = a.try_admit(2).unwrap();
        assert!(a.try_admit(0).is_none(), "count bound");
        drop(first);
        assert_eq!(a.held(), (2, 6));
    }

    #[test]
    fn many_take_the_prefix_that_fits_as_one_at_a_time_would() {
        let a = admission(Some(4), Some(10));
        let _held = a.try_admit(3).unwrap();
        let mut rooms = Vec::new();
        assert_eq!(
            a.try_admit_many([2, 4, 2, 1], &mut rooms),
            2,
            "bytes bound at the third"
        );
        assert_eq!((rooms.len(), a.held()), (2, (3, 9)));
        assert_eq!(a.try_admit_many([1, 1], &mut rooms), 1, "count bound");
        drop(rooms);
        assert_eq!(a.held(), (1, 3));
    }

    #[test]
    fn oversize_payload_goes_alone() {
        let a = admission(None, Some(10));
        let big = a.try_admit(50).unwrap();
        assert!(a.try_admit(1).is_none());
        drop(big);
        assert!(a.try_admit(1).is_some());
        assert_eq!(a.held(), (0, 0), "a room not kept is given back at once");
    }

    #[tokio::test(start_paused = true)]
    async fn a_dropped_room_wakes_a_waiter_and_a_quiet_one_waits_for_wake() {
        let a = admission(Some(1), None);
        let room = a.try_admit(1).unwrap();
        let wait = a.admit_wait(1, Duration::from_secs(1), None);
        tokio::pin!(wait);
        assert!(futures::poll!(&mut wait).is_pending());
        room.give_back_quietly();
        assert_eq!(a.held(), (0, 0));
        assert!(futures::poll!(&mut wait).is_pending(), "not woken yet");
        a.wake();
        let Waited::Admitted(room) = wait.await else {
            panic!("not admitted");
        };
        let wait = a.admit_wait(1, Duration::from_secs(1), None);
        tokio::pin!(wait);
        assert!(futures::poll!(&mut wait).is_pending());
        assert_eq!(a.waiting(), 1);
        drop(room);
        assert!(matches!(wait.await, Waited::Admitted(_)));
        assert_eq!((a.held(), a.waiting()), ((0, 0), 0));
    }

    #[tokio::test(start_paused = true)]
    async fn a_wait_keeps_its_own_deadline_on_a_timer_kept_from_an_earlier_wait() {
        let a = admission(Some(1), None);
        let _room = a.try_admit(1).unwrap();
        let step = Duration::from_millis(100);
        // Leaves its timer armed for 10 steps from now.
        {
            let early = a.admit_wait(1, step * 10, None);
            tokio::pin!(early);
            assert!(futures::poll!(&mut early).is_pending());
        }
        tokio::time::advance(step * 5).await;
        let wait = a.admit_wait(1, step * 10, None);
        tokio::pin!(wait);
        assert!(futures::poll!(&mut wait).is_pending());
        tokio::time::advance(step * 6).await;
        assert!(
            futures::poll!(&mut wait).is_pending(),
            "the earlier wait's deadline is not this one's"
        );
        tokio::time::advance(step * 3).await;
        assert!(futures::poll!(&mut wait).is_pending());
        tokio::time::advance(step).await;
        assert!(matches!(
            futures::poll!(&mut wait),
            Poll::Ready(Waited::TimedOut)
        ));
        // A timer kept from a longer wait is brought forward for a shorter one.
        {
            let long = a.admit_wait(1, step * 100, None);
            tokio::pin!(long);
            assert!(futures::poll!(&mut long).is_pending());
        }
        let short = a.admit_wait(1, step, None);
        tokio::pin!(short);
        assert!(futures::poll!(&mut short).is_pending());
        tokio::time::advance(step).await;
        assert!(matches!(
            futures::poll!(&mut short),
            Poll::Ready(Waited::TimedOut)
        ));
        assert_eq!((a.held(), a.waiting()), ((1, 1), 0));
    }

    #[tokio::test(start_paused = true)]
    async fn waits_that_end_first_leave_no_slots_behind() {
        use tokio_util::sync::CancellationToken;
        let a = admission(Some(1), None);
        let room = a.try_admit(1).unwrap();
        for _ in 0..3 {
            let wait = a.admit_wait(1, Duration::from_secs(1), None);
            tokio::pin!(wait);
            assert!(futures::poll!(&mut wait).is_pending());
        }
        assert_eq!(a.lock().waiters.len(), 0);
        let cancel = CancellationToken::new();
        let cancelled = std::pin::pin!(cancel.cancelled());
        let wait = a.admit_wait(1, Duration::from_secs(1), Some(cancelled));
        tokio::pin!(wait);
        assert!(futures::poll!(&mut wait).is_pending());
        assert_eq!(a.lock().waiters.len(), 1);
        cancel.cancel();
        drop(room);
        assert!(
            matches!(wait.await, Waited::Cancelled),
            "a cancel comes before the room"
        );
        assert_eq!(
            (a.held(), a.waiting(), a.lock().waiters.len()),
            ((0, 0), 0, 0)
        );
    }
}
