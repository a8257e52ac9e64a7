//! Fault injection: the `--chaos` syntax (`kind=probability[:duration]`, comma-separated) and the
//! policy an embedded listener applies per message: reset the connection, NAK, delay the ACK,
//! stall, or drop the whole link (the listener refuses connections for a while).

use crate::server::policy::{Action, Decision, Policy};
use crate::server::sink::Inbound;
use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};
use std::fmt;
use std::str::FromStr;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;
use std::time::Duration;
use tokio::sync::mpsc;

/// The faults, in the order they are judged.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum FaultKind {
    /// The link goes down for the duration: connections cut, new ones refused.
    Drop,
    /// The connection is reset right after the message is committed; no ACK for it.
    Reset,
    /// The message is not committed and answered `AE`.
    Nack,
    /// The connection stops reading (and answering) for the duration.
    Stall,
    /// The ACK is held back for the duration.
    Delay,
}

impl FaultKind {
    /// Every kind, in judging order.
    pub(crate) const ALL: [FaultKind; 5] = [
        FaultKind::Drop,
        FaultKind::Reset,
        FaultKind::Nack,
        FaultKind::Stall,
        FaultKind::Delay,
    ];

    /// The stable name, as written in a chaos spec and in JSON.
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            FaultKind::Drop => "drop",
            FaultKind::Reset => "reset",
            FaultKind::Nack => "nack",
            FaultKind::Stall => "stall",
            FaultKind::Delay => "delay",
        }
    }

    fn needs_duration(self) -> bool {
        matches!(self, FaultKind::Drop | FaultKind::Stall | FaultKind::Delay)
    }
}

impl fmt::Display for FaultKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One fault: its kind, its probability per message, and how long it lasts.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize)]
pub struct Fault {
    /// What happens.
    pub kind: FaultKind,
    /// Chance per message, from 0 to 1.
    pub probability: f64,
    /// How long it lasts, for `drop`, `stall` and `delay`; `None` for `reset` and `nack`.
    #[serde(serialize_with = "ser_duration")]
    pub duration: Option<Duration>,
}

fn ser_duration<S: serde::Serializer>(d: &Option<Duration>, s: S) -> Result<S::Ok, S::Error> {
    match d {
        Some(d) => s.serialize_str(&humantime::format_duration(*d).to_string()),
        None => s.serialize_none(),
    }
}

/// A parsed `--chaos` value.
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize)]
#[serde(transparent)]
pub struct ChaosSpec {
    /// Each kind at most once, in judging order.
    pub faults: Vec<Fault>,
}

/// What is wrong with a `--chaos` value. Quotes the offending item of the spec only.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ChaosError {
    /// An item that is not `kind=probability[:duration]`.
    #[error("`{0}`: expected kind=probability[:duration]")]
    Syntax(String),
    /// An item naming no known fault kind.
    #[error("`{0}`: unknown fault (use reset, nack, delay, stall, drop)")]
    UnknownKind(String),
    /// A probability that is not a number from 0 to 1.
    #[error("`{0}`: the probability must be a number from 0 to 1")]
    Probability(String),
    /// A fault that lasts given no duration.
    #[error("`{0}`: {1} needs a duration, as in {1}=0.01:2s")]
    MissingDuration(String, FaultKind),
    /// A duration given to a fault that takes none.
    #[error("`{0}`: {1} takes no duration")]
    UnexpectedDuration(String, FaultKind),
    /// A duration that does not parse or is zero.
    #[error("`{0}`: not a duration greater than zero")]
    Duration(String),
    /// The same kind given twice.
    #[error("{0} is given twice")]
    Repeated(FaultKind),
    /// A spec holding no item.
    #[error("no fault given")]
    Empty,
}

impl FromStr for ChaosSpec {
    type Err = ChaosError;
    fn from_str(text: &str) -> Result<ChaosSpec, ChaosError> {
        let mut faults: Vec<Fault> = Vec::new();
        for item in text.split(',').map(str::trim).filter(|s| !s.is_empty()) {
            let owned = || item.to_string();
            let (kind, value) = item
                .split_once('=')
                .ok_or_else(|| ChaosError::Syntax(owned()))?;
            let kind = FaultKind::ALL
                .into_iter()
                .find(|k| k.as_str() == kind.trim())
                .ok_or_else(|| ChaosError::UnknownKind(owned()))?;
            let (probability, duration) = match value.split_once(':') {
                Some((p, d)) => (p, Some(d)),
                None => (value, None),
            };
            let probability: f64 = probability
                .trim()
                .parse()
                .ok()
                .filter(|p: &f64| (0.0..=1.0).contains(p))
                .ok_or_else(|| ChaosError::Probability(owned()))?;
            let duration = match (duration, kind.needs_duration()) {
                (None, true) => return Err(ChaosError::MissingDuration(owned(), kind)),
                (Some(_), false) => return Err(ChaosError::UnexpectedDuration(owned(), kind)),
                (None, false) => None,
                (Some(d), true) => Some(
                    humantime::parse_duration(d.trim())
                        .ok()
                        .filter(|d| !d.is_zero())
                        .ok_or_else(|| ChaosError::Duration(owned()))?,
                ),
            };
            if faults.iter().any(|f| f.kind == kind) {
                return Err(ChaosError::Repeated(kind));
            }
            faults.push(Fault {
                kind,
                probability,
                duration,
            });
        }
        if faults.is_empty() {
            return Err(ChaosError::Empty);
        }
        faults.sort_by_key(|f| f.kind);
        Ok(ChaosSpec { faults })
    }
}

impl ChaosSpec {
    /// The fault of `kind`, when the spec has one.
    pub fn get(&self, kind: FaultKind) -> Option<&Fault> {
        self.faults.iter().find(|f| f.kind == kind)
    }

    /// Roll the dice for one message: the faults that strike, in judging order.
    pub fn roll(&self, rng: &mut impl Rng) -> Vec<Fault> {
        self.faults
            .iter()
            .filter(|f| f.probability > 0.0 && rng.gen_bool(f.probability))
            .copied()
            .collect()
    }
}

/// The decision for the faults that struck one message.
pub(crate) fn decision_for(faults: &[Fault]) -> Decision {
    let mut decision = Decision::default();
    for fault in faults {
        match fault.kind {
            FaultKind::Drop => {}
            FaultKind::Reset => decision.reset = true,
            FaultKind::Nack => decision.action = Action::Fail,
            // The listener answers in order and reads nothing while it holds an ACK back, so a
            // stall and a delay both hold the connection; they differ in how long.
            FaultKind::Stall | FaultKind::Delay => {
                decision.ack_delay = decision.ack_delay.max(fault.duration);
            }
        }
    }
    decision
}

/// The embedded listener's chaos policy. A drop is handed to whoever owns the listening socket
/// through `drops` (bounded: a drop already pending absorbs the next).
pub struct ChaosPolicy {
    spec: ChaosSpec,
    rng: Mutex<SmallRng>,
    drops: Option<mpsc::Sender<Duration>>,
    injected: [AtomicU64; 5],
}

impl ChaosPolicy {
    /// A policy striking the faults of `spec` with dice seeded by `seed`. Each drop's duration
    /// goes to `drops`; without it, a drop is counted but does nothing.
    pub fn new(spec: ChaosSpec, seed: u64, drops: Option<mpsc::Sender<Duration>>) -> ChaosPolicy {
        ChaosPolicy {
            spec,
            rng: Mutex::new(SmallRng::seed_from_u64(seed)),
            drops,
            injected: Default::default(),
        }
    }

    /// How many times each fault struck.
    pub fn injected(&self) -> Vec<(FaultKind, u64)> {
        FaultKind::ALL
            .iter()
            .zip(&self.injected)
            .map(|(k, n)| (*k, n.load(Ordering::Relaxed)))
            .filter(|(k, _)| self.spec.get(*k).is_some())
            .collect()
    }
}

impl Policy for ChaosPolicy {
    fn decide(&self, _message: &Inbound) -> Decision {
        let faults = {
            let mut rng = self.rng.lock().unwrap_or_else(|p| p.into_inner());
            self.spec.roll(&mut *rng)
        };
        for fault in &faults {
            let index = FaultKind::ALL.iter().position(|k| *k == fault.kind);
            if let Some(i) = index {
                self.injected[i].fetch_add(1, Ordering::Relaxed);
            }
            if let (FaultKind::Drop, Some(tx), Some(d)) = (fault.kind, &self.drops, fault.duration)
            {
                let _ = tx.try_send(d);
            }
        }
        decision_for(&faults)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_the_documented_examples() {
        let spec: ChaosSpec = "reset=0.01, nack=0.02,delay=0.1:50ms,stall=0.001:2s,drop=0.0005:3s"
            .parse()
            .unwrap();
        assert_eq!(spec.faults.len(), 5);
        let delay = spec.get(FaultKind::Delay).unwrap();
        assert_eq!(delay.probability, 0.1);
        assert_eq!(delay.duration, Some(Duration::from_millis(50)));
        assert_eq!(spec.get(FaultKind::Reset).unwrap().duration, None);
        assert_eq!(
            spec.get(FaultKind::Drop).unwrap().duration,
            Some(Duration::from_secs(3))
        );
    }

    #[test]
    fn each_mistake_is_named() {
        let err = |s: &str| s.parse::<ChaosSpec>().unwrap_err();
        assert!(matches!(err("reset"), ChaosError::Syntax(_)));
        assert!(matches!(err("boom=0.1"), ChaosError::UnknownKind(_)));
        assert!(matches!(err("reset=1.5"), ChaosError::Probability(_)));
        assert!(matches!(err("reset=x"), ChaosError::Probability(_)));
        assert!(matches!(err("stall=0.1"), ChaosError::MissingDuration(..)));
        assert!(matches!(
            err("nack=0.1:1s"),
            ChaosError::UnexpectedDuration(..)
        ));
        assert!(matches!(err("delay=0.1:0s"), ChaosError::Duration(_)));
        assert!(matches!(err("delay=0.1:soon"), ChaosError::Duration(_)));
        assert!(matches!(
            err("reset=0.1,reset=0.2"),
            ChaosError::Repeated(_)
        ));
        assert!(matches!(err(" , "), ChaosError::Empty));
    }

    #[test]
    fn decisions_follow_the_faults() {
        let spec: ChaosSpec = "reset=1,nack=1,delay=1:50ms,stall=1:2s".parse().unwrap();
        let mut rng = SmallRng::seed_from_u64(1);
        let d = decision_for(&spec.roll(&mut rng));
        assert!(d.reset);
        assert_eq!(d.action, Action::Fail);
        assert_eq!(d.ack_delay, Some(Duration::from_secs(2)));
        let none: ChaosSpec = "reset=0".parse().unwrap();
        assert_eq!(decision_for(&none.roll(&mut rng)), Decision::default());
    }

    #[test]
    fn rolls_hit_about_their_probability_and_repeat_with_the_seed() {
        let spec: ChaosSpec = "nack=0.1".parse().unwrap();
        let count = |seed| {
            let mut rng = SmallRng::seed_from_u64(seed);
            (0..10_000)
                .filter(|_| !spec.roll(&mut rng).is_empty())
                .count()
        };
        let n = count(7);
        assert!((800..1200).contains(&n), "{n}");
        assert_eq!(n, count(7));
    }

    #[tokio::test]
    async fn a_drop_is_handed_to_the_listener_owner() {
        let (tx, mut rx) = mpsc::channel(1);
        let policy = ChaosPolicy::new("drop=1:3s".parse().unwrap(), 1, Some(tx));
        let msg = Inbound::new(
            1,
            1,
            "peer".into(),
            bytes::Bytes::from_static(b"MSH|^~\\&\r"),
            false,
        );
        assert_eq!(policy.decide(&msg), Decision::default());
        policy.decide(&msg);
        assert_eq!(rx.recv().await, Some(Duration::from_secs(3)));
        assert!(rx.try_recv().is_err(), "the second drop was absorbed");
        assert_eq!(policy.injected(), vec![(FaultKind::Drop, 2)]);
    }
}
