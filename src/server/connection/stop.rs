//! The server's stops as one connection watches them: each through a wait made once for the
//! whole connection, so a step that waits does not register with the token, and unregister,
//! every time.

use crate::server::Shutdown;
use std::future::Future;
use std::pin::Pin;
use tokio_util::sync::{CancellationToken, WaitForCancellationFuture};

/// One stop: its token, and the connection's wait for it.
pub(super) struct StopWait<'s> {
    token: &'s CancellationToken,
    /// On the heap so the connection can move. Polled again after it is done, it is done again.
    wait: Pin<Box<WaitForCancellationFuture<'s>>>,
}

impl<'s> StopWait<'s> {
    fn new(token: &'s CancellationToken) -> StopWait<'s> {
        StopWait {
            token,
            wait: Box::pin(token.cancelled()),
        }
    }

    /// The stop is set.
    pub(super) fn is_set(&self) -> bool {
        self.token.is_cancelled()
    }

    /// Returns once the stop is set.
    pub(super) fn set(&mut self) -> &mut Pin<Box<WaitForCancellationFuture<'s>>> {
        &mut self.wait
    }

    /// Run `work` until it ends (`Some`) or the stop is set (`None`).
    pub(super) async fn guard<F: Future>(&mut self, work: F) -> Option<F::Output> {
        tokio::select! {
            // The stop first: work that is ready does not outrun a stop already set.
            biased;
            () = &mut self.wait => None,
            out = work => Some(out),
        }
    }
}

/// Both stops of a server, as one connection watches them.
pub(super) struct Stops<'s> {
    pub(super) shutdown: &'s Shutdown,
    /// Drop everything at once.
    pub(super) immediate: StopWait<'s>,
    /// Stop reading; what is under way is finished and answered.
    pub(super) graceful: StopWait<'s>,
}

impl<'s> Stops<'s> {
    pub(super) fn new(shutdown: &'s Shutdown) -> Stops<'s> {
        Stops {
            shutdown,
            immediate: StopWait::new(&shutdown.immediate),
            graceful: StopWait::new(&shutdown.graceful),
        }
    }

    /// Returns once either stop is set.
    pub(super) async fn either_set(&mut self) {
        tokio::select! {
            () = self.immediate.set() => {}
            () = self.graceful.set() => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[tokio::test(start_paused = true)]
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
        assert!(stops.graceful.is_set());
    }

    #[tokio::test(start_paused = true)]
    async fn the_one_wait_serves_many_steps() {
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
        tokio::time::timeout(Duration::from_secs(5), stops.either_set())
            .await
            .expect("the graceful stop wakes the wait");
        assert!(!stops.immediate.is_set());
        // Set, it stays set for every later step.
        stops.either_set().await;
    }
}
