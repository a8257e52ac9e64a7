//! Backpressure: the in-flight plus queued bound, by count and by bytes (the stricter wins),
//! taken before a send reaches the actor and given back when its fate is decided.

use super::options::Window;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;
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

pub(crate) enum Waited {
    Admitted,
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
    pub fn try_admit(&self, len: usize) -> bool {
        let mut held = self.held.lock().unwrap_or_else(|p| p.into_inner());
        let count_ok = self.window.count.map_or(true, |max| held.count < max);
        let bytes_ok = self
            .window
            .bytes
            .map_or(true, |max| held.count == 0 || held.bytes + len <= max);
        if count_ok && bytes_ok {
            held.count += 1;
            held.bytes += len;
            true
        } else {
            false
        }
    }

    /// Wait for room, at most `limit`, or until `cancel`.
    pub async fn admit_wait(
        &self,
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
        tokio::pin!(cancelled);
        loop {
            let freed = self.freed.notified();
            tokio::pin!(freed);
            // Register before checking, so a release between check and wait is not missed.
            freed.as_mut().enable();
            if self.try_admit(len) {
                return Waited::Admitted;
            }
            tokio::select! {
                _ = &mut freed => {}
                _ = tokio::time::sleep_until(deadline) => return Waited::TimedOut,
                () = &mut cancelled => return Waited::Cancelled,
            }
        }
    }

    /// Give back the room of one settled send, and wake the callers waiting for room.
    pub fn release(&self, len: usize) {
        self.give_back(len);
        self.wake();
    }

    /// Give back the room of one settled send without waking anyone yet: the caller calls
    /// [`Admission::wake`] before it next waits, so waiters wake once for all the room freed.
    pub fn give_back(&self, len: usize) {
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
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stricter_bound_wins() {
        let a = Admission::new(Window {
            count: Some(3),
            bytes: Some(10),
        });
        assert!(a.try_admit(4));
        assert!(a.try_admit(4));
        assert!(!a.try_admit(4), "bytes bound");
        assert!(a.try_admit(2));
        assert!(!a.try_admit(0), "count bound");
        a.release(4);
        assert_eq!(a.held(), (2, 6));
    }

    #[test]
    fn oversize_payload_goes_alone() {
        let a = Admission::new(Window {
            count: None,
            bytes: Some(10),
        });
        assert!(a.try_admit(50));
        assert!(!a.try_admit(1));
        a.release(50);
        assert!(a.try_admit(1));
    }
}
