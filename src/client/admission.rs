//! Backpressure: the in-flight plus queued bound, by count and by bytes (the stricter wins),
//! taken before a send reaches the actor and given back when its fate is decided.
//!
//! Room is a [`Room`] token that gives itself back when dropped, so the room held is exactly
//! the live tokens: a send dropped anywhere before its fate is decided (its caller's future
//! cancelled on the way to the actor, a command left in a closed channel) cannot shrink the
//! window.

use super::options::Window;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::sync::Notify;
use tokio_util::sync::CancellationToken;

#[derive(Debug, Default)]
struct Held {
    count: usize,
    bytes: usize,
}

#[derive(Debug)]
pub(crate) struct Admission {
    window: Window,
    held: Mutex<Held>,
    freed: Notify,
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
    admission: Arc<Admission>,
    len: usize,
    /// Cleared by [`Room::give_back_quietly`]: whoever gives it back wakes the waiters later.
    wake: bool,
}

impl Room {
    /// Give the room back without waking anyone yet: the caller calls [`Admission::wake`]
    /// before it next waits, so waiters wake once for all the room freed.
    pub fn give_back_quietly(mut self) {
        self.wake = false;
    }
}

impl Drop for Room {
    fn drop(&mut self) {
        self.admission.give_back(self.len);
        if self.wake {
            self.admission.wake();
        }
    }
}

pub(crate) enum Waited {
    Admitted(Room),
    TimedOut,
    Cancelled,
}

impl Admission {
    pub fn new(window: Window) -> Self {
        Admission {
            window,
            held: Mutex::new(Held::default()),
            freed: Notify::new(),
            waiting: AtomicUsize::new(0),
        }
    }

    /// Take room for one payload of `len` bytes if there is some. A payload larger than the
    /// byte window is admitted alone, or it could never be sent.
    pub fn try_admit(self: &Arc<Self>, len: usize) -> Option<Room> {
        let mut held = self.held.lock().unwrap_or_else(|p| p.into_inner());
        self.take(&mut held, len)
    }

    /// Take room for each of `lens` in order under one lock, as [`Admission::try_admit`]
    /// would one at a time, up to the first that does not fit (left, with the rest, to the
    /// caller). Pushes one room per payload admitted onto `rooms`; returns how many.
    pub fn try_admit_many(
        self: &Arc<Self>,
        lens: impl IntoIterator<Item = usize>,
        rooms: &mut Vec<Room>,
    ) -> usize {
        let mut held = self.held.lock().unwrap_or_else(|p| p.into_inner());
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
    pub async fn admit_wait(
        self: &Arc<Self>,
        len: usize,
        limit: Duration,
        cancel: Option<&CancellationToken>,
    ) -> Waited {
        let deadline = tokio::time::Instant::now() + limit;
        // Counted before the first check under the lock: a release that this check misses sees
        // the count after its own update, and wakes this waiter.
        self.waiting.fetch_add(1, Ordering::SeqCst);
        let _waiting = WaitingGuard(&self.waiting);
        let cancelled = async {
            match cancel {
                Some(cancel) => cancel.cancelled().await,
                None => std::future::pending().await,
            }
        };
        // Made once for the whole wait, not on each time round.
        let timeout = tokio::time::sleep_until(deadline);
        tokio::pin!(cancelled, timeout);
        loop {
            let freed = self.freed.notified();
            tokio::pin!(freed);
            // Register before checking, so a release between check and wait is not missed.
            freed.as_mut().enable();
            if let Some(room) = self.try_admit(len) {
                return Waited::Admitted(room);
            }
            // A cancel comes first: a wait cancelled as room came takes none.
            tokio::select! {
                biased;
                () = &mut cancelled => return Waited::Cancelled,
                _ = &mut freed => {}
                () = &mut timeout => return Waited::TimedOut,
            }
        }
    }

    fn give_back(&self, len: usize) {
        let mut held = self.held.lock().unwrap_or_else(|p| p.into_inner());
        held.count = held.count.saturating_sub(1);
        held.bytes = held.bytes.saturating_sub(len);
    }

    /// Wake the callers waiting for room, if any.
    pub fn wake(&self) {
        // Read after the update under the lock: a waiter whose check missed it is counted.
        if self.waiting.load(Ordering::SeqCst) > 0 {
            self.freed.notify_waiters();
        }
    }

    #[cfg(test)]
    pub fn held(&self) -> (usize, usize) {
        let held = self.held.lock().unwrap_or_else(|p| p.into_inner());
        (held.count, held.bytes)
    }

    #[cfg(test)]
    pub fn waiting(&self) -> usize {
        self.waiting.load(Ordering::SeqCst)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn admission(count: Option<usize>, bytes: Option<usize>) -> Arc<Admission> {
        Arc::new(Admission::new(Window { count, bytes }))
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
}
