//! Bytes held in the receiver's budget by something other than a connection (the copies a
//! relay keeps for its shadow engine): at most half the budget, taken only when there is room
//! and never waited for, so the peers always keep the other half to read into.

use super::budget::{Buffered, Part};
use std::sync::{Arc, Mutex};

/// A holder's share of the budget. Cheap to clone; clones draw on the same share.
#[derive(Debug, Clone)]
pub struct BudgetShare {
    account: Arc<Mutex<Buffered>>,
}

impl BudgetShare {
    pub(crate) fn new(account: Buffered) -> BudgetShare {
        BudgetShare {
            account: Arc::new(Mutex::new(account)),
        }
    }

    /// Hold `bytes` more until the returned guard is dropped; `None`, holding nothing more,
    /// when they would pass the budget or this share.
    #[cfg(any(test, feature = "sqlite"))]
    pub(crate) fn try_hold(&self, bytes: usize) -> Option<Held> {
        let mut account = super::lock(&self.account);
        // Held as bytes that do not free themselves: a stalled holder may keep them for good,
        // so no connection waits for them to come back.
        let granted = account.grant(Part::Partial, bytes);
        if granted < bytes {
            let held = account.part(Part::Partial);
            account.set(Part::Partial, held - granted);
            return None;
        }
        Some(Held {
            share: self.clone(),
            bytes,
        })
    }

    /// Bytes this share holds now.
    pub fn held(&self) -> usize {
        super::lock(&self.account).part(Part::Partial)
    }
}

/// Bytes held in a [`BudgetShare`]; given back on drop.
#[derive(Debug)]
pub struct Held {
    share: BudgetShare,
    bytes: usize,
}

impl Drop for Held {
    fn drop(&mut self) {
        let mut account = super::lock(&self.share.account);
        let held = account.part(Part::Partial);
        account.set(Part::Partial, held.saturating_sub(self.bytes));
    }
}

#[cfg(test)]
mod tests {
    use crate::server::limits::Limits;
    use crate::server::ServerConfig;

    #[test]
    fn a_share_takes_at_most_half_the_budget_and_gives_it_back() {
        let limits = Limits::new(&ServerConfig {
            max_buffered: 1000,
            ..ServerConfig::default()
        });
        let share = limits.share();
        let first = share.try_hold(400).expect("room");
        assert!(share.try_hold(101).is_none(), "past half the budget");
        assert_eq!(share.held(), 400, "a refused hold keeps nothing");
        let second = share.try_hold(100).expect("up to half");
        assert_eq!(limits.buffered(), 500);
        drop(first);
        assert_eq!((share.held(), limits.buffered()), (100, 100));
        drop(second);
        assert_eq!(limits.buffered(), 0);
    }

    #[test]
    fn a_share_never_takes_room_the_connections_hold() {
        let limits = Limits::new(&ServerConfig {
            max_buffered: 1000,
            ..ServerConfig::default()
        });
        let slot = limits.admit("127.0.0.1".parse().unwrap()).unwrap();
        let mut account = limits.account(&slot);
        account.set(super::Part::Waiting, 900);
        let share = limits.share();
        assert!(share.try_hold(101).is_none());
        assert!(share.try_hold(100).is_some());
    }
}
