//! The one count of the six fates: how many sends ended in each population, and the final ACK
//! codes among them. `send`'s summary and soak's report both count with it.

use super::fate::{Fate, Population};
use crate::ack::AckCode;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// Sends counted by population, plus the final ACK codes (accepted, negative, committed-only).
/// Serialized field names are interface: `accepted`, `negative`, `committed_only`,
/// `unknown_fate`, `never_delivered`, `refused`, `by_code`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct FateTally {
    /// Sends the peer finally and positively acknowledged.
    pub accepted: u64,
    /// Sends the peer answered no.
    pub negative: u64,
    /// Sends committed (`CA`) whose application ACK never came.
    pub committed_only: u64,
    /// Sends written and never answered.
    pub unknown_fate: u64,
    /// Sends of which no byte was written.
    pub never_delivered: u64,
    /// Sends refused by backpressure.
    pub refused: u64,
    /// Final ACK codes of the accepted, negative and committed-only sends.
    pub by_code: BTreeMap<String, u64>,
}

impl FateTally {
    /// Count one fate: its population and, when it has one, its final ACK code.
    pub fn record(&mut self, fate: &Fate) {
        self.add(fate.population(), fate.ack_code());
    }

    /// Count one fate known only by its population and final ACK code (see [`Fate::ack_code`]).
    pub fn add(&mut self, population: Population, code: Option<AckCode>) {
        *self.count_mut(population) += 1;
        if let Some(code) = code {
            // Found without making a key: a String only for a code not counted yet. Six codes
            // at most, of two bytes each: a scan comparing two bytes a key costs less than the
            // ordered search's string comparisons.
            let key = code.as_str().as_bytes();
            match self.by_code.iter_mut().find(|(k, _)| k.as_bytes() == key) {
                Some((_, n)) => *n += 1,
                None => {
                    self.by_code.insert(code.as_str().to_string(), 1);
                }
            }
        }
    }

    /// The sends counted in `population`.
    pub fn count(&self, population: Population) -> u64 {
        match population {
            Population::Accepted => self.accepted,
            Population::Negative => self.negative,
            Population::CommittedOnly => self.committed_only,
            Population::UnknownFate => self.unknown_fate,
            Population::NeverDelivered => self.never_delivered,
            Population::Refused => self.refused,
        }
    }

    fn count_mut(&mut self, population: Population) -> &mut u64 {
        match population {
            Population::Accepted => &mut self.accepted,
            Population::Negative => &mut self.negative,
            Population::CommittedOnly => &mut self.committed_only,
            Population::UnknownFate => &mut self.unknown_fate,
            Population::NeverDelivered => &mut self.never_delivered,
            Population::Refused => &mut self.refused,
        }
    }

    /// Sum of the six populations: the sends that have a fate.
    pub fn settled(&self) -> u64 {
        Population::ALL.iter().map(|p| self.count(*p)).sum()
    }

    /// Add another tally's counts to this one.
    pub fn merge(&mut self, other: &FateTally) {
        for p in Population::ALL {
            *self.count_mut(p) += other.count(p);
        }
        for (code, n) in &other.by_code {
            *self.by_code.entry(code.clone()).or_default() += n;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cause::Cause;
    use crate::client::{AckPayload, FateCause, Refusal};
    use std::time::Duration;

    #[test]
    fn each_fate_counts_once_and_codes_follow_answers() {
        let latency = Duration::from_millis(1);
        let ack = AckPayload::new(Default::default());
        let fates = [
            Fate::Accepted {
                code: AckCode::AA,
                ack: ack.clone(),
                latency,
            },
            Fate::Negative {
                code: AckCode::AE,
                ack: ack.clone(),
                latency,
            },
            Fate::CommittedOnly {
                cause: FateCause::AppAckTimeout,
                ack,
                latency,
            },
            Fate::NeverDelivered {
                cause: FateCause::Link(Cause::ConnectionRefused),
            },
            Fate::Refused {
                reason: Refusal::WindowFull,
            },
        ];
        let mut tally = FateTally::default();
        for f in &fates {
            tally.record(f);
        }
        assert_eq!(tally.settled(), 5);
        assert_eq!(tally.count(Population::UnknownFate), 0);
        assert_eq!(tally.by_code.get("CA"), Some(&1));
        let mut twice = tally.clone();
        twice.merge(&tally);
        assert_eq!(twice.settled(), 10);
        assert_eq!(twice.by_code.get("AA"), Some(&2));
        let json = serde_json::to_value(&tally).unwrap();
        for field in [
            "accepted",
            "negative",
            "committed_only",
            "unknown_fate",
            "never_delivered",
            "refused",
            "by_code",
        ] {
            assert!(json.get(field).is_some(), "{field}");
        }
    }
}
