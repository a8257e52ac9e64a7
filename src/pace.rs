//! The rate pacer: when each message of one connection is due, for a total rate spread evenly
//! over the connections, with an optional linear ramp-up. Latency is measured from these due
//! times, so a stalled peer cannot hide its stall (no coordinated omission). And the recorded
//! pace of a replay: the gaps between stored arrival times, scaled and capped, each waited for
//! only as long as the run allows.

use std::time::{Duration, SystemTime};
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

/// The wait before each message of a replay: the gap since the one before it was recorded
/// (none before the first, and none where a time is missing or goes backwards), divided by a
/// speed and at most a longest gap.
#[derive(Debug, Clone)]
pub struct RecordedGaps {
    last: Option<SystemTime>,
    speed: f64,
    longest: Option<Duration>,
}

impl RecordedGaps {
    /// Gaps `speed` times shorter than recorded (a speed above zero), none longer than
    /// `longest`.
    pub fn new(speed: f64, longest: Option<Duration>) -> RecordedGaps {
        RecordedGaps {
            last: None,
            speed,
            longest,
        }
    }

    /// The wait before the message that arrived `at`.
    pub fn next(&mut self, at: Option<SystemTime>) -> Duration {
        let gap = match (self.last, at) {
            (Some(before), Some(at)) => at.duration_since(before).unwrap_or_default(),
            _ => Duration::ZERO,
        };
        if at.is_some() {
            self.last = at;
        }
        // A tiny speed over a gap of centuries passes what a duration holds: the longest then.
        let scaled =
            Duration::try_from_secs_f64(gap.as_secs_f64() / self.speed).unwrap_or(Duration::MAX);
        self.longest.map_or(scaled, |longest| scaled.min(longest))
    }
}

/// Wait `gap`, unless the `deadline` comes first or `hurry` is cancelled: true when the whole
/// gap was waited. A replay's pace is no reason to hold a run past its end.
pub async fn wait_gap(gap: Duration, deadline: Option<Instant>, hurry: &CancellationToken) -> bool {
    let sleep = tokio::time::sleep(gap);
    let expired = async {
        match deadline {
            Some(at) => tokio::time::sleep_until(at).await,
            None => std::future::pending().await,
        }
    };
    tokio::select! {
        () = sleep => true,
        () = expired => false,
        () = hurry.cancelled() => false,
    }
}

/// Due times of one connection's messages, relative to the start of the run.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Schedule {
    /// This connection's share of the rate, messages per second.
    rate: f64,
    /// Where this connection sits in the even spread.
    offset: Duration,
    ramp_up: Duration,
}

impl Schedule {
    /// Connection `index` of `connections` sharing `total_rate` per second; the rate climbs
    /// linearly from zero over `ramp_up`. `None` when the rate is not positive and finite.
    pub(crate) fn new(
        total_rate: f64,
        connections: usize,
        index: usize,
        ramp_up: Duration,
    ) -> Option<Schedule> {
        if !(total_rate.is_finite() && total_rate > 0.0) || connections == 0 {
            return None;
        }
        let connections = connections as f64;
        Some(Schedule {
            rate: total_rate / connections,
            offset: secs(index as f64 / total_rate),
            ramp_up,
        })
    }

    /// When message `n` (from 0) is due.
    pub(crate) fn due(&self, n: u64) -> Duration {
        let n = n as f64;
        let ramp = self.ramp_up.as_secs_f64();
        // During a linear ramp the count by time t is rate * t^2 / (2 * ramp).
        let in_ramp = self.rate * ramp / 2.0;
        let secs = if ramp > 0.0 && n < in_ramp {
            (2.0 * ramp * n / self.rate).sqrt()
        } else if ramp > 0.0 {
            ramp + (n - in_ramp) / self.rate
        } else {
            n / self.rate
        };
        self.offset + self::secs(secs)
    }
}

/// Seconds to a duration, rounded to the nanosecond (so exact rates give exact times).
fn secs(s: f64) -> Duration {
    Duration::from_nanos((s * 1e9).round() as u64)
}

/// Waits for each due time in turn. Behind schedule it does not wait, so the messages a stall
/// held back go out at once, and their latency still counts from when they were due.
#[derive(Debug)]
pub(crate) struct Pacer {
    schedule: Schedule,
    start: Instant,
    next: u64,
    /// Behind by more than this, the schedule starts afresh from now instead of catching up.
    restart_after: Option<Duration>,
}

impl Pacer {
    /// A pacer whose first message is due at `start` plus the schedule's first due time; behind
    /// schedule it catches up however far behind.
    pub(crate) fn new(schedule: Schedule, start: Instant) -> Pacer {
        Pacer {
            schedule,
            start,
            next: 0,
            restart_after: None,
        }
    }

    /// Catch up at most `stall` worth of messages: further behind, start the schedule afresh
    /// from now, so a sender back from an outage never bursts. For sending at a rate, not for
    /// measuring latency from due times.
    pub(crate) fn restarting_after(mut self, stall: Duration) -> Pacer {
        self.restart_after = Some(stall);
        self
    }

    /// The next message's due time, after waiting for it.
    pub(crate) async fn tick(&mut self) -> Instant {
        let mut due = self.start + self.schedule.due(self.next);
        if let Some(stall) = self.restart_after {
            let now = Instant::now();
            if now.saturating_duration_since(due) > stall {
                self.start = now;
                self.next = 0;
                due = now + self.schedule.due(0);
            }
        }
        self.next += 1;
        tokio::time::sleep_until(due).await;
        due
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn recorded_gaps_are_scaled_capped_and_never_backwards() {
        let t = |s| Some(SystemTime::UNIX_EPOCH + Duration::from_secs(s));
        let mut gaps = RecordedGaps::new(2.0, Some(Duration::from_secs(3)));
        let got: Vec<_> = [t(10), t(14), None, t(12), t(20), t(21)]
            .into_iter()
            .map(|at| gaps.next(at))
            .collect();
        let secs = |s: f64| Duration::from_secs_f64(s);
        let expected = [0.0, 2.0, 0.0, 0.0, 3.0, 0.5].map(secs);
        assert_eq!(got, expected);
    }

    #[test]
    fn a_gap_of_centuries_at_a_tiny_speed_is_the_longest_wait_not_a_panic() {
        let mut gaps = RecordedGaps::new(1e-300, None);
        gaps.next(Some(SystemTime::UNIX_EPOCH));
        let far = SystemTime::UNIX_EPOCH + Duration::from_secs(250_000_000_000);
        assert_eq!(gaps.next(Some(far)), Duration::MAX);
    }

    #[tokio::test(start_paused = true)]
    async fn a_gap_ends_at_the_deadline_or_when_hurried() {
        let never = CancellationToken::new();
        let start = Instant::now();
        assert!(wait_gap(Duration::from_secs(2), None, &never).await);
        assert_eq!(start.elapsed(), Duration::from_secs(2));

        let deadline = Instant::now() + Duration::from_secs(5);
        assert!(!wait_gap(Duration::MAX, Some(deadline), &never).await);
        assert_eq!(Instant::now(), deadline);

        let hurry = CancellationToken::new();
        let later = hurry.clone();
        tokio::spawn(async move {
            tokio::time::sleep(Duration::from_secs(1)).await;
            later.cancel();
        });
        let before = Instant::now();
        assert!(!wait_gap(Duration::from_secs(86_400), None, &hurry).await);
        assert_eq!(before.elapsed(), Duration::from_secs(1));
    }

    fn ms(d: Duration) -> f64 {
        d.as_secs_f64() * 1000.0
    }

    #[test]
    fn even_spread_over_connections() {
        // 1000/s over 4 connections: each sends every 4 ms, offset by 1 ms from the previous.
        let s: Vec<Schedule> = (0..4)
            .map(|i| Schedule::new(1000.0, 4, i, Duration::ZERO).unwrap())
            .collect();
        let mut all: Vec<f64> = s
            .iter()
            .flat_map(|s| (0..10).map(move |n| ms(s.due(n))))
            .collect();
        all.sort_by(f64::total_cmp);
        for (i, t) in all.iter().enumerate() {
            assert!((t - i as f64).abs() < 1e-6, "{i}: {t}");
        }
    }

    #[test]
    fn ramp_up_climbs_linearly_then_holds_the_rate() {
        let s = Schedule::new(100.0, 1, 0, Duration::from_secs(2)).unwrap();
        // 100 messages fit in the 2 s ramp (half of 200); then one every 10 ms.
        assert_eq!(s.due(0), Duration::ZERO);
        assert!((s.due(25).as_secs_f64() - 1.0).abs() < 1e-9);
        assert!((s.due(100).as_secs_f64() - 2.0).abs() < 1e-9);
        assert!((s.due(110).as_secs_f64() - 2.1).abs() < 1e-9);
        let gaps: Vec<f64> = (1..100).map(|n| ms(s.due(n) - s.due(n - 1))).collect();
        assert!(gaps.windows(2).all(|w| w[1] <= w[0] + 1e-9), "gaps shrink");
    }

    #[test]
    fn rejects_a_rate_that_is_not_positive() {
        assert!(Schedule::new(0.0, 1, 0, Duration::ZERO).is_none());
        assert!(Schedule::new(f64::NAN, 1, 0, Duration::ZERO).is_none());
        assert!(Schedule::new(10.0, 0, 0, Duration::ZERO).is_none());
    }

    #[tokio::test(start_paused = true)]
    async fn pacer_waits_for_each_due_time_and_catches_up_without_waiting() {
        let start = Instant::now();
        let s = Schedule::new(200.0, 2, 1, Duration::ZERO).unwrap();
        let mut pacer = Pacer::new(s, start);
        for n in 0..5u64 {
            let due = pacer.tick().await;
            assert_eq!(Instant::now(), due);
            assert_eq!(due - start, Duration::from_millis(5 + 10 * n));
        }
        // A stall of 100 ms: the ten messages it held back are due already.
        tokio::time::advance(Duration::from_millis(100)).await;
        let late = Instant::now();
        for _ in 0..10 {
            let due = pacer.tick().await;
            assert!(due <= late);
            assert_eq!(Instant::now(), late, "no wait while behind");
        }
        let due = pacer.tick().await;
        assert!(due > late);
        assert_eq!(Instant::now(), due);
    }

    #[tokio::test(start_paused = true)]
    async fn restarting_spaces_evenly_and_does_not_burst_after_a_stall() {
        let rate = Schedule::new(10.0, 1, 0, Duration::ZERO).unwrap();
        let start = Instant::now();
        let mut pacer = Pacer::new(rate, start).restarting_after(Duration::from_secs(1));
        for _ in 0..11 {
            pacer.tick().await;
        }
        assert_eq!(start.elapsed(), Duration::from_secs(1));
        // Half a second behind: caught up at once, as without the restart.
        tokio::time::sleep(Duration::from_millis(600)).await;
        let behind = Instant::now();
        for _ in 0..5 {
            pacer.tick().await;
        }
        assert_eq!(Instant::now(), behind);
        // Five seconds behind: afresh from now, one slot after another.
        tokio::time::sleep(Duration::from_secs(5)).await;
        let after_stall = Instant::now();
        pacer.tick().await;
        pacer.tick().await;
        assert_eq!(after_stall.elapsed(), Duration::from_millis(100));
    }
}
