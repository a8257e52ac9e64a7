//! Idle hoarders yield: connections waiting between frames with nothing held are marked with
//! the moment they fell idle, so that at the connection cap a new peer can close the one idle
//! the longest (if idle long enough) and take its place.
//!
//! Each connection is listed once for its whole life; falling idle and leaving it are a store
//! into its place, so the read of every message does not touch the shared list.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context, Waker};
use std::time::Duration;
use tokio::time::Instant;

/// A place's state when its connection is not idle.
const BUSY: u64 = 0;
/// A place's state once its connection has been evicted from this idle spell.
const EVICTED: u64 = u64::MAX;

#[derive(Debug)]
pub(crate) struct IdleList {
    places: Mutex<HashMap<u64, Arc<Place>>>,
    /// Idle spells are stamped as the time since this.
    epoch: Instant,
}

impl Default for IdleList {
    fn default() -> Self {
        IdleList {
            places: Mutex::default(),
            epoch: Instant::now(),
        }
    }
}

/// One connection's place in the list.
#[derive(Debug, Default)]
struct Place {
    /// `BUSY`, `EVICTED`, or when the idle spell began: nanoseconds since the epoch, plus one.
    state: AtomicU64,
    /// The connection's task, woken when it is evicted.
    waker: Mutex<Option<Waker>>,
}

/// A connection's place, for as long as the connection is open: off the list on drop.
#[derive(Debug)]
pub(crate) struct IdleEntry<'a> {
    list: &'a IdleList,
    id: u64,
    place: Arc<Place>,
    /// The waker left in the place: while the task's is the same, there is nothing to update.
    armed: Option<Waker>,
}

impl IdleList {
    /// List connection `id`, busy for now.
    pub(crate) fn join(&self, id: u64) -> IdleEntry<'_> {
        let place = Arc::new(Place::default());
        lock(&self.places).insert(id, Arc::clone(&place));
        IdleEntry {
            list: self,
            id,
            place,
            armed: None,
        }
    }

    /// Evict the connection idle the longest, if it has been idle at least `min`; whether one
    /// was.
    pub(crate) fn evict_oldest(&self, min: Duration) -> bool {
        let places = lock(&self.places);
        loop {
            let now = Instant::now();
            let oldest = places
                .values()
                .filter_map(|place| {
                    let state = place.state.load(Ordering::Acquire);
                    let since = self.since(state)?;
                    (now.saturating_duration_since(since) >= min).then_some((since, state, place))
                })
                .min_by_key(|(since, ..)| *since);
            let Some((_, state, place)) = oldest else {
                return false;
            };
            // The connection may have left its idle spell meanwhile: then look again.
            let evicted =
                place
                    .state
                    .compare_exchange(state, EVICTED, Ordering::AcqRel, Ordering::Acquire);
            if evicted.is_ok() {
                // The waker stays in place for the connection's next idle spell.
                if let Some(waker) = &*lock(&place.waker) {
                    waker.wake_by_ref();
                }
                return true;
            }
        }
    }

    /// When an idle spell stamped `state` began; `None` for a place not idle.
    fn since(&self, state: u64) -> Option<Instant> {
        match state {
            BUSY | EVICTED => None,
            stamp => Some(self.epoch + Duration::from_nanos(stamp - 1)),
        }
    }

    fn stamp(&self, at: Instant) -> u64 {
        let nanos = at.saturating_duration_since(self.epoch).as_nanos();
        u64::try_from(nanos).map_or(EVICTED - 1, |n| n.saturating_add(1).min(EVICTED - 1))
    }
}

impl IdleEntry<'_> {
    /// The connection is idle from now on, until [`IdleEntry::leave`].
    pub(crate) fn enter(&self) {
        let stamp = self.list.stamp(Instant::now());
        self.place.state.store(stamp, Ordering::Release);
    }

    /// The connection is no longer idle.
    pub(crate) fn leave(&self) {
        self.place.state.store(BUSY, Ordering::Release);
    }

    /// The connection has been evicted in this idle spell: a look, no wake-up registered.
    pub(crate) fn is_evicted(&self) -> bool {
        self.place.state.load(Ordering::Acquire) == EVICTED
    }

    /// About to wait: the task in `cx` is woken on eviction. Whether it was evicted already.
    pub(crate) fn arm(&mut self, cx: &mut Context<'_>) -> bool {
        if !self.armed.as_ref().is_some_and(|w| w.will_wake(cx.waker())) {
            let waker = cx.waker().clone();
            *lock(&self.place.waker) = Some(waker.clone());
            self.armed = Some(waker);
        }
        // Evicted before the waker was in place: the eviction's store is seen here.
        self.is_evicted()
    }
}

impl Drop for IdleEntry<'_> {
    fn drop(&mut self) {
        lock(&self.list.places).remove(&self.id);
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::AtomicBool;
    use std::task::Wake;

    #[tokio::test(start_paused = true)]
    async fn the_longest_idle_past_the_minimum_is_evicted() {
        let list = IdleList::default();
        let (first, second) = (list.join(1), list.join(2));
        first.enter();
        tokio::time::sleep(Duration::from_secs(5)).await;
        second.enter();
        tokio::time::sleep(Duration::from_secs(5)).await;
        assert!(
            !list.evict_oldest(Duration::from_secs(11)),
            "none idle that long"
        );
        assert!(list.evict_oldest(Duration::from_secs(5)));
        assert!(first.is_evicted() && !second.is_evicted());
        second.leave();
        assert!(
            !list.evict_oldest(Duration::ZERO),
            "a busy connection is never evicted, nor one evicted already"
        );
        // A new idle spell starts afresh.
        first.enter();
        assert!(!first.is_evicted());
        drop(first);
        assert!(
            !list.evict_oldest(Duration::ZERO),
            "a closed one is off the list"
        );
    }

    struct Flag(AtomicBool);

    impl Wake for Flag {
        fn wake(self: Arc<Self>) {
            self.0.store(true, Ordering::SeqCst);
        }
    }

    #[test]
    fn an_armed_connection_is_woken_by_its_eviction() {
        let list = IdleList::default();
        let mut entry = list.join(7);
        entry.enter();
        let flag = Arc::new(Flag(AtomicBool::new(false)));
        let waker = Waker::from(Arc::clone(&flag));
        let mut cx = Context::from_waker(&waker);
        assert!(!entry.arm(&mut cx));
        assert!(list.evict_oldest(Duration::ZERO));
        assert!(flag.0.load(Ordering::SeqCst), "woken");
        assert!(entry.arm(&mut cx) && entry.is_evicted());
        // Evicted again in a later spell, the same waker is woken again.
        flag.0.store(false, Ordering::SeqCst);
        entry.enter();
        assert!(!entry.arm(&mut cx));
        assert!(list.evict_oldest(Duration::ZERO));
        assert!(flag.0.load(Ordering::SeqCst), "woken again");
    }
}
