//! Reconnect pacing: a plain iterator of exponential, jittered, capped delays, and the pluggable
//! retry strategy that decides, from a [`RetryContext`], the next delay or to stop.

use super::options_error::OptionsError;
use crate::cause::{Cause, Class};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use std::fmt;
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// Backoff parameters. Defaults: 100 ms, x2, cap 30 s, +/-20 % jitter.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct BackoffConfig {
    /// The first delay of a reconnect episode.
    pub initial: Duration,
    /// Each delay is the previous one times this (at least 1).
    pub multiplier: f64,
    /// No delay is longer than this, before jitter.
    pub max: Duration,
    /// Fraction in 0..=1: each delay is drawn uniformly from `d * (1 - jitter) ..= d * (1 + jitter)`.
    pub jitter: f64,
}

impl Default for BackoffConfig {
    fn default() -> Self {
        BackoffConfig {
            initial: Duration::from_millis(100),
            multiplier: 2.0,
            max: Duration::from_secs(30),
            jitter: 0.2,
        }
    }
}

impl BackoffConfig {
    /// The un-jittered delay before attempt `attempt` (1-based), capped.
    pub(crate) fn base_delay(&self, attempt: u32) -> Duration {
        let exp = attempt.saturating_sub(1).min(64) as i32;
        let secs = self.initial.as_secs_f64() * self.multiplier.powi(exp);
        let cap = self.max.as_secs_f64();
        Duration::from_secs_f64(if secs.is_finite() { secs.min(cap) } else { cap })
    }

    /// The delay before attempt `attempt`, jittered with `rng`. The jitter never pushes the delay
    /// above the cap, which is a promise to the operator.
    pub fn delay(&self, attempt: u32, rng: &mut impl Rng) -> Duration {
        let base = self.base_delay(attempt).as_secs_f64();
        let jitter = self.jitter.clamp(0.0, 1.0);
        let factor = if jitter > 0.0 {
            rng.gen_range(1.0 - jitter..=1.0 + jitter)
        } else {
            1.0
        };
        Duration::from_secs_f64((base * factor).min(self.max.as_secs_f64()))
    }

    /// An endless iterator of delays with a seeded RNG (tests pass a fixed seed).
    pub fn iter(self, seed: u64) -> Backoff {
        Backoff {
            config: self,
            attempt: 0,
            rng: StdRng::seed_from_u64(seed),
        }
    }
}

/// The delays, one per attempt. Never ends; a strategy decides when to stop.
#[derive(Debug, Clone)]
pub struct Backoff {
    config: BackoffConfig,
    attempt: u32,
    rng: StdRng,
}

impl Iterator for Backoff {
    type Item = Duration;
    fn next(&mut self) -> Option<Duration> {
        self.attempt = self.attempt.saturating_add(1);
        Some(self.config.delay(self.attempt, &mut self.rng))
    }
}

/// The failure a retry decision is about.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LastError {
    /// What failed.
    pub cause: Cause,
    /// Whether trying again may help.
    pub class: Class,
}

/// Everything a strategy sees when deciding the next attempt.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RetryContext {
    /// 1-based number of the attempt about to be scheduled.
    pub attempt: u32,
    /// The failure that led to this attempt.
    pub last_error: LastError,
    /// The previous delay in this reconnect episode, if any.
    pub last_delay: Option<Duration>,
    /// Time since this reconnect episode began (the link first failed).
    pub elapsed: Duration,
    /// Time since the last successful connect; `None` when there never was one.
    pub since_last_success: Option<Duration>,
    /// Class of the last error (same as `last_error.class`, for convenience).
    pub class: Class,
}

/// Decides the delay before the next attempt, or `None` to stop retrying.
pub trait RetryStrategy: Send + Sync + fmt::Debug + 'static {
    /// The delay before the next attempt, or `None` to stop retrying.
    fn next_delay(&self, ctx: &RetryContext) -> Option<Duration>;

    /// Checked when the client is created; a problem names the option.
    fn validate(&self) -> Result<(), OptionsError> {
        Ok(())
    }
}

/// The default: exponential backoff with jitter, transient causes only.
#[derive(Debug)]
pub struct ExponentialBackoff {
    /// The delays and jitter it draws from.
    pub config: BackoffConfig,
    rng: Mutex<StdRng>,
}

impl ExponentialBackoff {
    /// A strategy with these parameters.
    pub fn new(config: BackoffConfig) -> Self {
        ExponentialBackoff {
            config,
            rng: Mutex::new(StdRng::from_entropy()),
        }
    }

    /// A reproducible sequence, for tests.
    pub fn seeded(config: BackoffConfig, seed: u64) -> Self {
        ExponentialBackoff {
            config,
            rng: Mutex::new(StdRng::seed_from_u64(seed)),
        }
    }
}

impl Default for ExponentialBackoff {
    fn default() -> Self {
        ExponentialBackoff::new(BackoffConfig::default())
    }
}

impl RetryStrategy for ExponentialBackoff {
    fn next_delay(&self, ctx: &RetryContext) -> Option<Duration> {
        if ctx.class == Class::Permanent {
            return None;
        }
        let mut rng = self
            .rng
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        Some(self.config.delay(ctx.attempt, &mut *rng))
    }

    fn validate(&self) -> Result<(), OptionsError> {
        let c = &self.config;
        if c.initial.is_zero() {
            return Err(OptionsError::new(
                "backoff-initial",
                "must be greater than zero",
            ));
        }
        if c.max < c.initial {
            return Err(OptionsError::new(
                "backoff-max",
                "must be at least the initial delay",
            ));
        }
        if !(c.multiplier.is_finite() && c.multiplier >= 1.0) {
            return Err(OptionsError::new(
                "backoff-multiplier",
                "must be a number >= 1",
            ));
        }
        if !(0.0..=1.0).contains(&c.jitter) {
            return Err(OptionsError::new("backoff-jitter", "must be within 0..1"));
        }
        Ok(())
    }
}

/// Stops after `max` attempts; otherwise defers to `inner`.
#[derive(Debug, Clone)]
pub struct MaxRetries {
    /// The strategy asked while attempts remain.
    pub inner: Arc<dyn RetryStrategy>,
    /// Attempts allowed per reconnect episode.
    pub max: u32,
}

impl RetryStrategy for MaxRetries {
    fn next_delay(&self, ctx: &RetryContext) -> Option<Duration> {
        if ctx.attempt > self.max {
            return None;
        }
        self.inner.next_delay(ctx)
    }
    fn validate(&self) -> Result<(), OptionsError> {
        self.inner.validate()
    }
}

/// Stops once the episode has lasted `limit` (counting the delay it would add); otherwise defers.
#[derive(Debug, Clone)]
pub struct GiveUpAfter {
    /// The strategy asked while time remains.
    pub inner: Arc<dyn RetryStrategy>,
    /// How long a reconnect episode may last.
    pub limit: Duration,
}

impl RetryStrategy for GiveUpAfter {
    fn next_delay(&self, ctx: &RetryContext) -> Option<Duration> {
        let delay = self.inner.next_delay(ctx)?;
        (ctx.elapsed + delay <= self.limit).then_some(delay)
    }
    fn validate(&self) -> Result<(), OptionsError> {
        if self.limit.is_zero() {
            return Err(OptionsError::new(
                "give-up-after",
                "must be greater than zero",
            ));
        }
        self.inner.validate()
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// A retry after `cause`, `elapsed` since the first failure.
    pub(crate) fn ctx(attempt: u32, cause: Cause, elapsed: Duration) -> RetryContext {
        RetryContext {
            attempt,
            last_error: LastError {
                cause,
                class: cause.class(),
            },
            last_delay: None,
            elapsed,
            since_last_success: None,
            class: cause.class(),
        }
    }

    #[test]
    fn delays_stay_in_the_jitter_band_and_under_the_cap() {
        let config = BackoffConfig::default();
        for seed in 0..50 {
            for (i, delay) in config.iter(seed).take(20).enumerate() {
                let base = config.base_delay(i as u32 + 1).as_secs_f64();
                let d = delay.as_secs_f64();
                assert!(
                    d >= base * 0.8 - 1e-9 && d <= base * 1.2 + 1e-9,
                    "{i}: {d} vs {base}"
                );
                assert!(delay <= Duration::from_secs(30));
            }
        }
        assert_eq!(config.base_delay(1), Duration::from_millis(100));
        assert_eq!(config.base_delay(2), Duration::from_millis(200));
        assert_eq!(config.base_delay(30), Duration::from_secs(30));
        assert_eq!(config.base_delay(u32::MAX), Duration::from_secs(30));
    }

    #[test]
    fn jitter_actually_spreads_delays() {
        let delays: Vec<_> = (0..20)
            .map(|s| BackoffConfig::default().iter(s).next())
            .collect();
        assert!(delays.windows(2).any(|w| w[0] != w[1]));
    }

    #[test]
    fn default_strategy_never_retries_permanent_causes() {
        let s = ExponentialBackoff::seeded(BackoffConfig::default(), 7);
        for cause in Cause::ALL {
            let d = s.next_delay(&ctx(1, cause, Duration::ZERO));
            assert_eq!(d.is_some(), cause.class() == Class::Transient, "{cause}");
        }
    }

    #[test]
    fn max_retries_and_give_up_after_stop() {
        let inner: Arc<dyn RetryStrategy> =
            Arc::new(ExponentialBackoff::seeded(BackoffConfig::default(), 1));
        let max = MaxRetries {
            inner: inner.clone(),
            max: 3,
        };
        assert!(max
            .next_delay(&ctx(3, Cause::ConnectionRefused, Duration::ZERO))
            .is_some());
        assert!(max
            .next_delay(&ctx(4, Cause::ConnectionRefused, Duration::ZERO))
            .is_none());
        let give_up = GiveUpAfter {
            inner,
            limit: Duration::from_secs(120),
        };
        let early = ctx(1, Cause::ConnectionRefused, Duration::from_secs(1));
        let late = ctx(1, Cause::ConnectionRefused, Duration::from_secs(120));
        assert!(give_up.next_delay(&early).is_some());
        assert!(give_up.next_delay(&late).is_none());
    }

    #[test]
    fn validation_names_the_option() {
        let bad = ExponentialBackoff::new(BackoffConfig {
            jitter: 1.5,
            ..BackoffConfig::default()
        });
        assert_eq!(bad.validate().unwrap_err().option, "backoff-jitter");
        let zero = ExponentialBackoff::new(BackoffConfig {
            initial: Duration::ZERO,
            ..BackoffConfig::default()
        });
        assert_eq!(zero.validate().unwrap_err().option, "backoff-initial");
    }
}
