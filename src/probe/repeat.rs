//! Probing again and again, ping-style: `count` probes `interval` apart, each report handed
//! over as it comes, the statistics and the exit-code facts gathered, until done or stopped.

use super::run::{run, ProbeConfig, Timeouts};
use super::stats::ProbeStats;
use super::ProbeReport;
use crate::outcome::Observed;
use std::future::Future;
use std::time::Duration;

/// What a series of probes found.
#[derive(Debug)]
pub struct Series {
    /// Per-phase statistics of the probes made.
    pub stats: ProbeStats,
    /// What they contribute to the exit code, together.
    pub observed: Observed,
    /// The caller stopped taking reports: nothing more should be said.
    pub abandoned: bool,
}

/// Probe up to `count` times, `interval` apart, ending early when `stop` completes (Ctrl-C,
/// say). Each report goes to `each` with its number from 1; `each` returning false abandons
/// the series (its reader is gone).
pub async fn repeat(
    config: &ProbeConfig,
    count: u32,
    interval: Duration,
    stop: impl Future<Output = ()>,
    mut each: impl FnMut(u32, &ProbeReport) -> bool,
) -> Series {
    let mut series = Series {
        stats: ProbeStats::new(),
        observed: Observed::default(),
        abandoned: false,
    };
    tokio::pin!(stop);
    for seq in 1..=count {
        let report = tokio::select! {
            // A stop wins over a probe that finished at the same moment.
            biased;
            _ = &mut stop => break,
            report = run(config) => report,
        };
        series.stats.record(report.ok(), report.timings());
        series.observed = series.observed.merge(report.observed());
        if !each(seq, &report) {
            series.abandoned = true;
            break;
        }
        if seq < count {
            tokio::select! {
                biased;
                _ = &mut stop => break,
                _ = tokio::time::sleep(interval) => {}
            }
        }
    }
    series
}

impl Timeouts {
    /// The defaults, overridden: connect, TLS and ACK each by its own bound, else by `all`;
    /// the banner wait only by its own.
    pub fn chosen(
        all: Option<Duration>,
        connect: Option<Duration>,
        tls: Option<Duration>,
        ack: Option<Duration>,
        banner_wait: Option<Duration>,
    ) -> Timeouts {
        let defaults = Timeouts::default();
        let pick = |specific: Option<Duration>, default| specific.or(all).unwrap_or(default);
        Timeouts {
            connect: pick(connect, defaults.connect),
            tls: pick(tls, defaults.tls),
            ack: pick(ack, defaults.ack),
            banner_wait: banner_wait.unwrap_or(defaults.banner_wait),
            ..defaults
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::probe::SendPhase;
    use crate::resolve::StaticResolver;
    use std::sync::Arc;

    #[test]
    fn specific_bounds_beat_the_overall_one() {
        let s = Duration::from_secs;
        let t = Timeouts::chosen(Some(s(2)), Some(s(1)), None, None, None);
        assert_eq!((t.connect, t.tls, t.ack), (s(1), s(2), s(2)));
        assert_eq!(t.banner_wait, Timeouts::default().banner_wait);
        assert_eq!(
            Timeouts::chosen(None, None, None, None, None),
            Timeouts::default()
        );
    }

    #[tokio::test]
    async fn a_series_stops_when_its_reader_is_gone() {
        let free = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let port = free.local_addr().unwrap().port();
        drop(free);
        let config = ProbeConfig {
            host: "127.0.0.1".into(),
            port,
            resolver: Arc::new(StaticResolver::new()),
            tls: None,
            timeouts: Timeouts::chosen(Some(Duration::from_secs(2)), None, None, None, None),
            send: SendPhase::Nothing,
            release: Default::default(),
        };
        let never = std::future::pending::<()>();
        let mut seen = Vec::new();
        let series = repeat(&config, 5, Duration::ZERO, never, |seq, _| {
            seen.push(seq);
            seq < 2
        })
        .await;
        assert_eq!(seen, [1, 2]);
        assert!(series.abandoned);
        assert_eq!(series.stats.probes(), 2);
        assert!(
            series.observed.transient,
            "a refused connection is transient"
        );
        let stopped = repeat(&config, 5, Duration::ZERO, async {}, |_, _| true).await;
        assert_eq!(stopped.stats.probes(), 0);
        assert!(!stopped.abandoned);
    }
}
