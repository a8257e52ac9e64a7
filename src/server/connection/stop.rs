//! The server's stops as one connection watches them. Each step looks at a stop first (a cheap
//! check, as a biased `select!` would) and registers to be woken only when it is about to
//! wait; the registration is made once per connection and kept, not made and dropped per step.

use crate::server::Shutdown;
use std::future::{poll_fn, Future};
use std::pin::{pin, Pin};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::task::{Context, Poll, Wake, Waker};
use tokio_util::sync::{CancellationToken, WaitForCancellationFuture};

/// The waker a standing wait is registered with: the token's firing marks the stop set before
/// it wakes the task, so once registered a look is a load, not the token's lock.
struct Fired {
    set: AtomicBool,
    task: Waker,
}

impl Wake for Fired {
    fn wake(self: Arc<Self>) {
        self.wake_by_ref();
    }

    fn wake_by_ref(self: &Arc<Self>) {
        self.set.store(true, Ordering::Release);
        self.task.wake_by_ref();
    }
}

/// One stop: its token, and the connection's standing wait for it.
pub(super) struct Stop<'s> {
    token: &'s CancellationToken,
    /// On the heap so the connection can move; polled only when the connection is about to wait.
    wait: Pin<Box<WaitForCancellationFuture<'s>>>,
    /// What `wait` was last polled with: while the task's waker is the same, the registration
    /// stands and polling again would only confirm it.
    armed: Option<Arc<Fired>>,
}

impl<'s> Stop<'s> {
    fn new(token: &'s CancellationToken) -> Stop<'s> {
        Stop {
            token,
            wait: Box::pin(token.cancelled()),
            armed: None,
        }
    }

    /// The stop is set: a look, no wake-up registered.
    pub(super) fn is_set(&self) -> bool {
        match &self.armed {
            // Marked within the token's cancel, before it returns or wakes anyone.
            Some(fired) => fired.set.load(Ordering::Acquire),
            None => self.token.is_cancelled(),
        }
    }

    /// About to wait: be woken when the stop is set. Whether it is set already; when the
    /// standing registration already wakes this task, `false` without a look: every step looks
    /// with [`Stop::is_set`] before it waits, and a stop set since wakes the task.
    pub(super) fn arm(&mut self, cx: &mut Context<'_>) -> bool {
        if self
            .armed
            .as_ref()
            .is_some_and(|fired| fired.task.will_wake(cx.waker()))
        {
            return false;
        }
        let fired = Arc::new(Fired {
            set: AtomicBool::new(false),
            task: cx.waker().clone(),
        });
        let waker = Waker::from(fired.clone());
        if self
            .wait
            .as_mut()
            .poll(&mut Context::from_waker(&waker))
            .is_ready()
        {
            self.armed = None;
            return true;
        }
        self.armed = Some(fired);
        false
    }

    /// Run `work` until it ends (`Some`) or the stop is set (`None`), the stop looked at first
    /// on every poll.
    pub(super) async fn guard<F: Future>(&mut self, work: F) -> Option<F::Output> {
        let mut work = pin!(work);
        poll_fn(|cx| {
            if self.is_set() {
                return Poll::Ready(None);
            }
            if let Poll::Ready(out) = work.as_mut().poll(cx) {
                return Poll::Ready(Some(out));
            }
            match self.arm(cx) {
                true => Poll::Ready(None),
                false => Poll::Pending,
            }
        })
        .await
    }
}

/// Both stops of a server, as one connection watches them.
pub(super) struct Stops<'s> {
    pub(super) shutdown: &'s Shutdown,
    /// Drop everything at once.
    pub(super) immediate: Stop<'s>,
    /// Stop reading; what is under way is finished and answered.
    pub(super) graceful: Stop<'s>,
}

impl<'s> Stops<'s> {
    pub(super) fn new(shutdown: &'s Shutdown) -> Stops<'s> {
        Stops {
            shutdown,
            immediate: Stop::new(&shutdown.immediate),
            graceful: Stop::new(&shutdown.graceful),
        }
    }

    /// Either stop is set: a look, no wake-up registered.
    pub(super) fn either_set(&self) -> bool {
        self.immediate.is_set() || self.graceful.is_set()
    }

    /// About to wait: be woken when either stop is set. Whether one is set already.
    pub(super) fn arm_either(&mut self, cx: &mut Context<'_>) -> bool {
        self.immediate.arm(cx) || self.graceful.arm(cx)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[tokio::test]
    async fn a_guarded_step_ends_with_its_work_or_with_the_stop() {
        let shutdown = Shutdown::new();
        let mut stops = Stops::new(&shutdown);
        assert_eq!(stops.immediate.guard(async { 7 }).await, Some(7));
        // A wait is woken by the stop, set while it waits.
        let stopper = shutdown.immediate.clone();
        tokio::spawn(async move {
            tokio::time::sleep(Duration::from_millis(20)).await;
            stopper.cancel();
        });
        let forever = std::future::pending::<()>();
        assert_eq!(stops.immediate.guard(forever).await, None);
        // Once set, the stop wins even over work that is ready.
        assert_eq!(stops.immediate.guard(async { 7 }).await, None);
        assert!(stops.either_set() && stops.graceful.is_set());
    }

    #[test]
    fn an_armed_stop_is_seen_set_as_soon_as_its_token_is_cancelled() {
        let shutdown = Shutdown::new();
        let mut stops = Stops::new(&shutdown);
        let mut cx = Context::from_waker(Waker::noop());
        assert!(!stops.arm_either(&mut cx));
        assert!(!stops.either_set());
        shutdown.immediate.cancel();
        // Both marked within the cancel, the child through its parent.
        assert!(stops.immediate.is_set() && stops.graceful.is_set());
        assert!(!stops.arm_either(&mut cx) || stops.either_set());
    }

    #[tokio::test]
    async fn the_standing_wait_serves_many_steps() {
        let shutdown = Shutdown::new();
        let mut stops = Stops::new(&shutdown);
        for i in 0..3 {
            let step = tokio::time::sleep(Duration::from_millis(5));
            assert_eq!(stops.immediate.guard(step).await, Some(()), "step {i}");
        }
        let stopper = shutdown.graceful.clone();
        tokio::spawn(async move {
            tokio::time::sleep(Duration::from_millis(20)).await;
            stopper.cancel();
        });
        // As every step does: look, then arm.
        let set = poll_fn(|cx| match stops.either_set() || stops.arm_either(cx) {
            true => Poll::Ready(()),
            false => Poll::Pending,
        });
        tokio::time::timeout(Duration::from_secs(5), set)
            .await
            .expect("the graceful stop wakes the wait");
        assert!(!stops.immediate.is_set());
    }
}
