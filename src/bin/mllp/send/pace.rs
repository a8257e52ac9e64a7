//! `--rate N/s`: a pacer that spaces sends evenly, never bursting to catch up more than a
//! second's worth after a stall.

use std::time::Duration;
use tokio::time::Instant;

pub struct Pacer {
    period: Duration,
    next: Option<Instant>,
}

impl Pacer {
    pub fn new(per_second: f64) -> Pacer {
        Pacer {
            period: Duration::from_secs_f64(1.0 / per_second),
            next: None,
        }
    }

    /// Wait for the next slot.
    pub async fn tick(&mut self) {
        let now = Instant::now();
        let slot = match self.next {
            // After a long stall, start afresh rather than burst.
            Some(next) if now.saturating_duration_since(next) <= Duration::from_secs(1) => next,
            _ => now,
        };
        self.next = Some(slot + self.period);
        tokio::time::sleep_until(slot).await;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test(start_paused = true)]
    async fn spaces_sends_evenly() {
        let mut pacer = Pacer::new(10.0);
        let start = Instant::now();
        for _ in 0..11 {
            pacer.tick().await;
        }
        assert_eq!(start.elapsed(), Duration::from_secs(1));
    }

    #[tokio::test(start_paused = true)]
    async fn does_not_burst_after_a_stall() {
        let mut pacer = Pacer::new(10.0);
        pacer.tick().await;
        tokio::time::sleep(Duration::from_secs(5)).await;
        let after_stall = Instant::now();
        pacer.tick().await;
        pacer.tick().await;
        assert_eq!(after_stall.elapsed(), Duration::from_millis(100));
    }
}
