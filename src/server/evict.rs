//! Idle hoarders yield: connections waiting between frames with nothing held are listed with
//! the moment they fell idle, so that at the connection cap a new peer can close the one idle
//! the longest (if idle long enough) and take its place.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::Duration;
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

#[derive(Debug, Default)]
pub(crate) struct IdleList {
    idle: Mutex<HashMap<u64, (Instant, CancellationToken)>>,
}

impl IdleList {
    /// Connection `id` is idle from now on; the token is cancelled if it is evicted.
    pub(crate) fn enter(&self, id: u64) -> CancellationToken {
        let token = CancellationToken::new();
        lock(&self.idle).insert(id, (Instant::now(), token.clone()));
        token
    }

    /// Connection `id` is no longer idle (or has ended).
    pub(crate) fn leave(&self, id: u64) {
        lock(&self.idle).remove(&id);
    }

    /// Evict the connection idle the longest, if it has been idle at least `min`; whether one
    /// was.
    pub(crate) fn evict_oldest(&self, min: Duration) -> bool {
        let mut idle = lock(&self.idle);
        let now = Instant::now();
        let oldest = idle
            .iter()
            .filter(|(_, (since, _))| now.duration_since(*since) >= min)
            .min_by_key(|(_, (since, _))| *since)
            .map(|(id, _)| *id);
        match oldest.and_then(|id| idle.remove(&id)) {
            Some((_, token)) => {
                token.cancel();
                true
            }
            None => false,
        }
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test(start_paused = true)]
    async fn the_longest_idle_past_the_minimum_is_evicted() {
        let list = IdleList::default();
        let first = list.enter(1);
        tokio::time::sleep(Duration::from_secs(5)).await;
        let second = list.enter(2);
        tokio::time::sleep(Duration::from_secs(5)).await;
        assert!(
            !list.evict_oldest(Duration::from_secs(11)),
            "none idle that long"
        );
        assert!(list.evict_oldest(Duration::from_secs(5)));
        assert!(first.is_cancelled() && !second.is_cancelled());
        list.leave(2);
        assert!(
            !list.evict_oldest(Duration::ZERO),
            "a busy connection is never evicted"
        );
    }
}
