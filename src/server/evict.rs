//! Idle hoarders yield: connections waiting between frames with nothing held are marked with
//! the moment they fell idle, so that at the connection cap a new peer can close the one idle
//! the longest (if idle long enough) and take its place.
//!
//! Each connection is listed once for its whole life; falling idle and leaving it are a store
//! into its place, so the read of every message does not touch the shared list.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::sync::Notify;
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
    /// Told when the connection is evicted; a notice given while nobody waits is kept for the
    /// next wait, so an eviction between a look and a wait is not missed.
    evicted: Notify,
}

/// A connection's place, for as long as the connection is open: off the list on drop.
#[derive(Debug)]
pub(crate) struct IdleEntry<'a> {
    list: &'a IdleList,
    id: u64,
    place: Arc<Place>,
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
                place.evicted.notify_one();
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

    /// Returns once the connection has been evicted in this idle spell.
    pub(crate) async fn evicted(&self) {
        // A notice kept from an earlier spell ends a wait too: look again.
        while !self.is_evicted() {
            self.place.evicted.notified().await;
        }
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

    #[tokio::test(start_paused = true)]
    async fn a_waiting_connection_hears_its_eviction() {
        let list = IdleList::default();
        let entry = list.join(7);
        entry.enter();
        assert!(list.evict_oldest(Duration::ZERO));
        // Evicted before anything waited: the wait ends at once.
        let quick = tokio::time::timeout(Duration::from_secs(1), entry.evicted());
        assert!(quick.await.is_ok(), "an eviction before the wait is kept");
        // A later spell: a wait under way is ended by the eviction, not by the notice kept from
        // the first.
        entry.enter();
        entry.place.evicted.notify_one();
        let waiting = tokio::time::timeout(Duration::from_secs(1), entry.evicted());
        let evict = async {
            tokio::time::sleep(Duration::from_millis(10)).await;
            assert!(list.evict_oldest(Duration::ZERO));
        };
        let (waited, ()) = tokio::join!(waiting, evict);
        assert!(
            waited.is_ok() && entry.is_evicted(),
            "woken by the eviction"
        );
        entry.enter();
        let idle = tokio::time::timeout(Duration::from_secs(1), entry.evicted());
        assert!(idle.await.is_err(), "not evicted in this spell");
    }
}
