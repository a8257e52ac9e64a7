//! The test-double policy behind `listen`'s `--ack-delay`, `--nack-rate`, `--reject-rate`,
//! `--silent-rate` and `--drop-after`: seeded, so a run can be repeated exactly.

use super::policy::{Action, Decision, Policy};
use super::sink::Inbound;
use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};
use std::collections::HashMap;
use std::sync::Mutex;
use std::time::Duration;

/// What the double does; rates are probabilities per message in `0..=1`.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct DoubleOptions {
    /// Hold every ACK back this long after the commit.
    pub ack_delay: Option<Duration>,
    /// Do not commit; answer AE/CE.
    pub nack_rate: f64,
    /// Do not commit; answer AR/CR.
    pub reject_rate: f64,
    /// Commit, then write no ACK.
    pub silent_rate: f64,
    /// Close each connection after its N-th message.
    pub drop_after: Option<u64>,
    /// Seed of the random draws: the same seed gives the same sequence of outcomes.
    pub seed: u64,
}

/// A rate out of range or a zero count; names the option.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum DoubleError {
    #[error("{option} must be between 0 and 1, not {value}")]
    /// A rate outside 0..=1.
    Rate {
        /// The option's name.
        option: &'static str,
        /// The value given.
        value: f64,
    },
    #[error("{option} must be greater than zero")]
    /// A count that must be positive is zero.
    Zero {
        /// The option's name.
        option: &'static str,
    },
}

impl DoubleOptions {
    /// Nothing to do: the plain commit-everything policy fits.
    pub fn is_inert(&self) -> bool {
        self.ack_delay.is_none()
            && self.nack_rate == 0.0
            && self.reject_rate == 0.0
            && self.silent_rate == 0.0
            && self.drop_after.is_none()
    }

    /// Every rate in 0..=1 and every count positive, or the first that is not.
    pub fn validate(&self) -> Result<(), DoubleError> {
        for (option, value) in [
            ("nack-rate", self.nack_rate),
            ("reject-rate", self.reject_rate),
            ("silent-rate", self.silent_rate),
        ] {
            if !(0.0..=1.0).contains(&value) {
                return Err(DoubleError::Rate { option, value });
            }
        }
        if self.drop_after == Some(0) {
            return Err(DoubleError::Zero {
                option: "drop-after",
            });
        }
        Ok(())
    }
}

/// Decides each message's fate from the options and a seeded generator. Every message draws
/// the same three numbers in the same order, so a seed fixes the whole run's sequence. An
/// inbound ACK draws nothing and is never delayed, refused or failed: it is never answered, so a
/// forced outcome would only miscount it.
pub struct TestDouble {
    options: DoubleOptions,
    rng: Mutex<SmallRng>,
    /// Messages seen per open connection (for `drop_after`).
    seen: Mutex<HashMap<u64, u64>>,
}

impl TestDouble {
    /// A test double acting on `options`, once they are valid.
    pub fn new(options: DoubleOptions) -> Result<TestDouble, DoubleError> {
        options.validate()?;
        Ok(TestDouble {
            rng: Mutex::new(SmallRng::seed_from_u64(options.seed)),
            options,
            seen: Mutex::new(HashMap::new()),
        })
    }
}

impl TestDouble {
    /// Count one more message on `connection`; true once `drop_after` is reached.
    fn count(&self, connection: u64) -> bool {
        let Some(limit) = self.options.drop_after else {
            return false;
        };
        let mut seen = self.seen.lock().unwrap_or_else(|p| p.into_inner());
        let count = seen.entry(connection).or_default();
        *count += 1;
        *count >= limit
    }
}

impl Policy for TestDouble {
    fn decide(&self, message: &Inbound) -> Decision {
        let o = &self.options;
        if message.is_ack {
            return Decision {
                close_after: self.count(message.connection),
                ..Decision::default()
            };
        }
        let (reject, nack, silent) = {
            let mut rng = self.rng.lock().unwrap_or_else(|p| p.into_inner());
            let (r, n, s): (f64, f64, f64) = (rng.gen(), rng.gen(), rng.gen());
            (r < o.reject_rate, n < o.nack_rate, s < o.silent_rate)
        };
        let mut decision = Decision {
            ack_delay: o.ack_delay,
            silent,
            ..Decision::default()
        };
        if reject {
            decision.action = Action::Reject;
        } else if nack {
            decision.action = Action::Fail;
        }
        decision.close_after = self.count(message.connection);
        decision
    }

    fn closed(&self, connection: u64) {
        self.seen
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .remove(&connection);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use bytes::Bytes;
    use std::sync::Arc;

    fn msg(connection: u64) -> Inbound {
        Inbound::new(
            connection,
            1,
            Arc::from("p"),
            Bytes::from_static(b"MSH|^~\\&\r"),
            false,
        )
    }

    #[test]
    fn drop_after_counts_per_connection_and_rates_repeat_with_the_seed() {
        let options = DoubleOptions {
            drop_after: Some(2),
            nack_rate: 0.5,
            seed: 7,
            ..DoubleOptions::default()
        };
        let double = TestDouble::new(options.clone()).unwrap();
        assert!(!double.decide(&msg(1)).close_after);
        assert!(!double.decide(&msg(2)).close_after);
        assert!(double.decide(&msg(1)).close_after);
        double.closed(1);
        assert!(!double.decide(&msg(1)).close_after);

        let run = |o: DoubleOptions| {
            let d = TestDouble::new(o).unwrap();
            (0..200)
                .map(|_| d.decide(&msg(9)).action)
                .collect::<Vec<_>>()
        };
        let a = run(DoubleOptions {
            drop_after: None,
            ..options.clone()
        });
        assert_eq!(
            a,
            run(DoubleOptions {
                drop_after: None,
                ..options.clone()
            })
        );
        let fails = a.iter().filter(|x| **x == Action::Fail).count();
        assert!((50..150).contains(&fails), "{fails}");
    }

    #[test]
    fn inbound_acks_draw_nothing() {
        let options = DoubleOptions {
            reject_rate: 1.0,
            nack_rate: 1.0,
            silent_rate: 1.0,
            ack_delay: Some(Duration::from_secs(1)),
            ..DoubleOptions::default()
        };
        let double = TestDouble::new(options).unwrap();
        let ack = Inbound::new(
            1,
            1,
            Arc::from("p"),
            Bytes::from_static(b"MSH|^~\\&|A|B|C|D|20240101||ACK^A01|1|P|2.5\rMSA|AA|9\r"),
            false,
        );
        assert!(ack.is_ack);
        assert_eq!(double.decide(&ack), Decision::default());
        assert_eq!(double.decide(&msg(1)).action, Action::Reject);
    }

    #[test]
    fn out_of_range_options_are_named() {
        let bad = DoubleOptions {
            silent_rate: 1.5,
            ..DoubleOptions::default()
        };
        assert!(matches!(
            bad.validate(),
            Err(DoubleError::Rate {
                option: "silent-rate",
                ..
            })
        ));
        let zero = DoubleOptions {
            drop_after: Some(0),
            ..DoubleOptions::default()
        };
        assert!(zero.validate().is_err());
    }
}
