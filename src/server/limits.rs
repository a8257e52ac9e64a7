//! The guards every connection shares: how many connections each peer address holds open, and
//! the budget of bytes held for peers (partial frames, frames awaiting their commit, unsent
//! ACKs), overall and per peer address.

mod budget;
mod share;

pub(crate) use budget::{Buffered, Part};
pub use share::{BudgetShare, Held};

use std::collections::HashMap;
use std::net::IpAddr;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

/// What one peer address holds.
#[derive(Debug, Default)]
struct PeerUse {
    /// Changed only under the map's lock, so an entry is removed exactly when it empties.
    connections: AtomicUsize,
    buffered: budget::Pool,
}

type PeerMap = Arc<Mutex<HashMap<IpAddr, Arc<PeerUse>>>>;

#[derive(Debug)]
pub(crate) struct Limits {
    per_peer_connections: usize,
    max_buffered: usize,
    per_peer_buffered: usize,
    buffered: Arc<budget::Pool>,
    /// Woken whenever held bytes are given back: connections waiting for room try again.
    released: Arc<budget::Released>,
    peers: PeerMap,
}

impl Limits {
    pub(crate) fn new(config: &super::ServerConfig) -> Limits {
        Limits {
            per_peer_connections: config.per_peer_connections(),
            max_buffered: config.max_buffered,
            per_peer_buffered: config.per_peer_buffered(),
            buffered: Arc::default(),
            released: Arc::default(),
            peers: PeerMap::default(),
        }
    }

    /// A place for one more connection from `ip`, or `None` when that address already holds
    /// its share.
    pub(crate) fn admit(&self, ip: IpAddr) -> Option<PeerSlot> {
        // 127.0.0.2 is one address however a dual-stack socket spells it.
        let ip = ip.to_canonical();
        let mut peers = lock(&self.peers);
        let usage = Arc::clone(peers.entry(ip).or_default());
        if usage.connections.load(Ordering::Relaxed) >= self.per_peer_connections {
            return None;
        }
        usage.connections.fetch_add(1, Ordering::Relaxed);
        Some(PeerSlot {
            usage,
            listed: Some((Arc::clone(&self.peers), ip)),
        })
    }

    /// A slot for a stream that did not come through the accept loop: counted in the overall
    /// budget only.
    pub(crate) fn unlisted(&self) -> PeerSlot {
        PeerSlot {
            usage: Arc::default(),
            listed: None,
        }
    }

    /// The budget account of a connection holding `slot`.
    pub(crate) fn account(&self, slot: &PeerSlot) -> Buffered {
        Buffered::new(
            Arc::clone(&self.buffered),
            Arc::clone(&slot.usage),
            self.max_buffered,
            self.per_peer_buffered,
            Arc::clone(&self.released),
        )
    }

    /// A share of the budget for a holder that is not a connection: at most half of it.
    pub(crate) fn share(&self) -> BudgetShare {
        BudgetShare::new(Buffered::new(
            Arc::clone(&self.buffered),
            Arc::default(),
            self.max_buffered,
            self.max_buffered / 2,
            Arc::clone(&self.released),
        ))
    }

    /// Bytes held for peers right now, by all connections.
    #[cfg(test)]
    pub(crate) fn buffered(&self) -> usize {
        self.buffered.held()
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// One connection's place in its peer address's count; given back on drop.
#[derive(Debug)]
pub(crate) struct PeerSlot {
    usage: Arc<PeerUse>,
    listed: Option<(PeerMap, IpAddr)>,
}

impl Drop for PeerSlot {
    fn drop(&mut self) {
        let Some((peers, ip)) = &self.listed else {
            return;
        };
        let mut peers = lock(peers);
        if self.usage.connections.fetch_sub(1, Ordering::Relaxed) == 1 {
            peers.remove(ip);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::server::ServerConfig;

    fn config(max_connections: usize, max_buffered: usize) -> ServerConfig {
        ServerConfig {
            max_connections,
            max_buffered,
            max_frame: 10,
            ..ServerConfig::default()
        }
    }

    #[test]
    fn each_address_gets_a_quarter_of_the_connections_by_default() {
        let limits = Limits::new(&config(8, 1000));
        let a: IpAddr = "127.0.0.2".parse().unwrap();
        let b: IpAddr = "127.0.0.1".parse().unwrap();
        let first = limits.admit(a).unwrap();
        let second = limits.admit(a).unwrap();
        assert!(limits.admit(a).is_none());
        assert!(
            limits.admit(b).is_some(),
            "another address has its own share"
        );
        drop(first);
        let third = limits
            .admit(a)
            .expect("a closed connection gives its place back");
        drop((second, third));
        assert!(lock(&limits.peers).is_empty(), "an empty entry is removed");
    }

    #[test]
    fn the_budget_refuses_growth_past_either_bound_and_gives_back_on_drop() {
        // 4 connections, 2 per address: an address's share is half of the 100 bytes.
        let limits = Limits::new(&ServerConfig {
            max_connections_per_peer: Some(2),
            ..config(4, 100)
        });
        let slots: Vec<_> = ["10.0.0.1", "10.0.0.2", "10.0.0.3"]
            .iter()
            .map(|ip| limits.admit(ip.parse().unwrap()).unwrap())
            .collect();
        let mut accounts: Vec<_> = slots.iter().map(|s| limits.account(s)).collect();
        assert!(accounts[0].hold(Part::Partial, 50));
        assert!(
            !accounts[0].hold(Part::Waiting, 1),
            "past the address's share"
        );
        assert!(accounts[1].hold(Part::Waiting, 40));
        assert!(
            !accounts[2].hold(Part::Partial, 11),
            "past the overall budget"
        );
        assert_eq!(
            accounts[2].grant(Part::Unsent, 11),
            10,
            "what room there is"
        );
        assert_eq!(limits.buffered(), 100);
        assert!(
            accounts[2].room_will_come(),
            "the waiting frames free themselves"
        );
        accounts[1].set(Part::Waiting, 0);
        assert!(
            !accounts[2].room_will_come(),
            "only partial frames and its own ACKs"
        );
        assert!(
            accounts[0].hold(Part::Partial, 0) && accounts[2].hold(Part::Partial, 40),
            "freed bytes are reusable"
        );
        drop(accounts);
        assert_eq!(limits.buffered(), 0);
    }
}
