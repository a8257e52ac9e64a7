//! A wait in a select loop polled again only once it was woken: a loop that goes round for one
//! of its branches otherwise polls every other branch too, each time, to hear that it is still
//! pending (a socket read, a timer, a channel, a token each cost a few hundred instructions).
//!
//! The contract it leans on is every future's: one that returned `Pending` wakes the waker it
//! was given once it may make progress. So the wait is polled with a waker of its own, and after
//! a `Pending` it is left alone until that waker fires. After a `Ready`, or after [`Woken::touch`]
//! (for a change the loop made itself, such as a timer reset), it is polled the next time.
//! The waker wakes the task that polled the gate; polled from another task, the gate polls the
//! wait at once, so that it registers the waker for that task.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::task::{Context, Poll, Wake, Waker};

/// The gate of one wait (one branch of a select), kept across the loop's turns.
pub(crate) struct Woken {
    /// Made at the first poll, for the task polling; made again if another task polls.
    flag: Option<(Arc<Flag>, Waker)>,
    /// The last poll was not `Pending` (or there was none): poll next time.
    ready: bool,
}

struct Flag {
    woken: AtomicBool,
    /// The task to wake: fixed, so a wake takes no lock.
    task: Waker,
}

impl Wake for Flag {
    fn wake(self: Arc<Self>) {
        self.wake_by_ref();
    }

    fn wake_by_ref(self: &Arc<Self>) {
        self.woken.store(true, Ordering::Release);
        self.task.wake_by_ref();
    }
}

impl Woken {
    pub fn new() -> Woken {
        Woken {
            flag: None,
            ready: true,
        }
    }

    /// Poll the wait through `poll` with this gate's waker, unless its last poll was `Pending`
    /// and nothing woke it since (then `Pending` at once).
    pub fn poll<T>(
        &mut self,
        cx: &mut Context<'_>,
        poll: impl FnOnce(&mut Context<'_>) -> Poll<T>,
    ) -> Poll<T> {
        let (flag, waker) = match &self.flag {
            Some((flag, waker)) if flag.task.will_wake(cx.waker()) => (flag, waker),
            _ => {
                // A task it has not seen: what the wait registered wakes the other one, so the
                // wait is polled now, to register this gate's new waker.
                self.ready = true;
                let flag = Arc::new(Flag {
                    woken: AtomicBool::new(false),
                    task: cx.waker().clone(),
                });
                let waker = Waker::from(flag.clone());
                let (flag, waker) = self.flag.insert((flag, waker));
                (&*flag, &*waker)
            }
        };
        let woken = flag.woken.swap(false, Ordering::AcqRel);
        if !self.ready && !woken {
            return Poll::Pending;
        }
        let result = poll(&mut Context::from_waker(waker));
        self.ready = result.is_ready();
        result
    }

    /// Await `wait` through this gate (see [`Woken::poll`]): for a select branch whose future is
    /// made afresh each turn over the same source (a channel's `recv`, say).
    pub async fn wait<F: std::future::Future>(&mut self, wait: F) -> F::Output {
        let mut wait = std::pin::pin!(wait);
        std::future::poll_fn(|cx| self.poll(cx, |cx| wait.as_mut().poll(cx))).await
    }

    /// The loop itself changed what the wait waits on (reset its timer, say): poll it next time.
    pub fn touch(&mut self) {
        self.ready = true;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::AtomicUsize;
    use std::sync::Mutex;

    /// Counts its polls; pending until `open`, waking the waker it was given once opened.
    #[derive(Default)]
    struct Door {
        polls: AtomicUsize,
        open: AtomicBool,
        waiting: Mutex<Option<Waker>>,
    }

    impl Door {
        fn poll(&self, cx: &mut Context<'_>) -> Poll<()> {
            self.polls.fetch_add(1, Ordering::Relaxed);
            if self.open.load(Ordering::Acquire) {
                return Poll::Ready(());
            }
            *self.waiting.lock().unwrap() = Some(cx.waker().clone());
            Poll::Pending
        }

        fn open(&self) {
            self.open.store(true, Ordering::Release);
            if let Some(w) = self.waiting.lock().unwrap().take() {
                w.wake();
            }
        }

        fn polls(&self) -> usize {
            self.polls.load(Ordering::Relaxed)
        }
    }

    #[derive(Default)]
    struct Count(AtomicUsize);

    impl Wake for Count {
        fn wake(self: Arc<Self>) {
            self.0.fetch_add(1, Ordering::Relaxed);
        }
    }

    #[test]
    fn a_pending_wait_is_left_alone_until_its_waker_fires() {
        let door = Door::default();
        let task = Arc::new(Count::default());
        let waker = Waker::from(task.clone());
        let mut cx = Context::from_waker(&waker);
        let mut gate = Woken::new();
        assert!(gate.poll(&mut cx, |cx| door.poll(cx)).is_pending());
        assert!(gate.poll(&mut cx, |cx| door.poll(cx)).is_pending());
        assert_eq!(door.polls(), 1, "polled again without a wake");
        door.open();
        assert_eq!(task.0.load(Ordering::Relaxed), 1, "the task was not woken");
        assert!(gate.poll(&mut cx, |cx| door.poll(cx)).is_ready());
        // After a Ready it is polled again, whether or not anything woke it.
        assert!(gate.poll(&mut cx, |cx| door.poll(cx)).is_ready());
        assert_eq!(door.polls(), 3);
    }

    #[test]
    fn a_touched_wait_is_polled_again() {
        let door = Door::default();
        let waker = Waker::noop().clone();
        let mut cx = Context::from_waker(&waker);
        let mut gate = Woken::new();
        assert!(gate.poll(&mut cx, |cx| door.poll(cx)).is_pending());
        gate.touch();
        assert!(gate.poll(&mut cx, |cx| door.poll(cx)).is_pending());
        assert_eq!(door.polls(), 2);
    }

    #[test]
    fn a_wait_polled_from_another_task_is_polled_at_once_and_wakes_that_task() {
        let door = Door::default();
        let (first, second) = (Arc::new(Count::default()), Arc::new(Count::default()));
        let (a, b) = (Waker::from(first.clone()), Waker::from(second.clone()));
        let mut gate = Woken::new();
        assert!(gate
            .poll(&mut Context::from_waker(&a), |cx| door.poll(cx))
            .is_pending());
        assert!(gate
            .poll(&mut Context::from_waker(&b), |cx| door.poll(cx))
            .is_pending());
        assert_eq!(door.polls(), 2, "not polled for the new task");
        door.open();
        assert_eq!(
            (
                first.0.load(Ordering::Relaxed),
                second.0.load(Ordering::Relaxed)
            ),
            (0, 1)
        );
    }
}
