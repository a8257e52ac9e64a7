//! `--log-rate`: at most N per-message lines a second from each connection, and from the
//! `--exec` command's stderr; the rest are counted and said in one `suppressed` line when the
//! source next writes after that second, or when its connection closes. Lines said once per
//! connection (opened, closed) are never held back.

use super::Stamp;
use crate::diag::Diag;
use mllp::server::{ConnectionId, ServerEvent};
use serde_json::json;
use std::collections::HashMap;
use std::time::{Duration, Instant};

/// The window the rate counts in.
const SECOND: Duration = Duration::from_secs(1);

/// Who a rate-limited line comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Source {
    Connection(ConnectionId),
    /// The `--exec` command's stderr, all its runs together.
    Exec,
}

impl Source {
    /// The source of a per-message or per-frame event; `None` for lines never held back.
    pub fn of(event: &ServerEvent) -> Option<Source> {
        Some(match event {
            ServerEvent::Message { connection, .. }
            | ServerEvent::Nack { connection, .. }
            | ServerEvent::Warning { connection, .. }
            | ServerEvent::SinkFailed { connection, .. } => Source::Connection(*connection),
            ServerEvent::ExecStderr { .. } => Source::Exec,
            _ => return None,
        })
    }
}

/// One source's current second.
#[derive(Debug)]
struct Window {
    start: Instant,
    lines: u32,
    suppressed: u64,
}

/// The per-source windows; a connection's is dropped when it closes.
#[derive(Debug)]
pub struct LogRate {
    /// Lines a second per source; 0: no limit.
    limit: u32,
    windows: HashMap<Source, Window>,
}

/// What to do with one line.
#[derive(Debug, PartialEq, Eq)]
pub enum Admit {
    /// Write it, after saying `suppressed` lines were held back (when not 0).
    Write {
        suppressed: u64,
    },
    Drop,
}

impl LogRate {
    pub fn new(limit: u32) -> LogRate {
        LogRate {
            limit,
            windows: HashMap::new(),
        }
    }

    /// Whether a line from `source` at `now` is written.
    pub fn admit(&mut self, source: Source, now: Instant) -> Admit {
        if self.limit == 0 {
            return Admit::Write { suppressed: 0 };
        }
        let window = self.windows.entry(source).or_insert(Window {
            start: now,
            lines: 0,
            suppressed: 0,
        });
        let mut said = 0;
        if now.duration_since(window.start) >= SECOND {
            said = std::mem::take(&mut window.suppressed);
            window.start = now;
            window.lines = 0;
        }
        if window.lines < self.limit {
            window.lines += 1;
            Admit::Write { suppressed: said }
        } else {
            window.suppressed += 1;
            Admit::Drop
        }
    }

    /// Forget `source` (its connection closed); the lines it had held back.
    pub fn close(&mut self, source: Source) -> u64 {
        self.windows.remove(&source).map_or(0, |w| w.suppressed)
    }

    /// Every source still holding lines back, emptied: said when the run ends.
    pub fn drain(&mut self) -> Vec<(Source, u64)> {
        let mut held: Vec<(Source, u64)> = self
            .windows
            .drain()
            .filter(|(_, w)| w.suppressed > 0)
            .map(|(source, w)| (source, w.suppressed))
            .collect();
        held.sort_by_key(|(source, _)| match source {
            Source::Connection(id) => *id,
            Source::Exec => u64::MAX,
        });
        held
    }

    /// The `suppressed` line: how many lines `source` held back.
    pub fn push_suppressed(
        &self,
        diag: &Diag,
        stamp: &Stamp,
        source: Source,
        count: u64,
        text: &mut String,
    ) {
        let limit = self.limit;
        let (human, fields) = match source {
            Source::Connection(connection) => (
                format!(
                    "connection {connection}: {} suppressed (more than {limit} a second; see --log-rate)",
                    crate::diag::count(count, "line")
                ),
                json!({ "source": "connection", "connection": connection, "count": count, "limit": limit }),
            ),
            Source::Exec => (
                format!(
                    "exec: {} suppressed (more than {limit} a second; see --log-rate)",
                    crate::diag::count(count, "stderr line")
                ),
                json!({ "source": "exec", "count": count, "limit": limit }),
            ),
        };
        text.push_str(&stamp.line(diag, "suppressed", || human, fields));
        text.push('\n');
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn lines_past_the_rate_are_counted_and_said_in_the_next_second() {
        let mut rate = LogRate::new(2);
        let t0 = Instant::now();
        let a = Source::Connection(1);
        assert_eq!(rate.admit(a, t0), Admit::Write { suppressed: 0 });
        assert_eq!(rate.admit(a, t0), Admit::Write { suppressed: 0 });
        assert_eq!(rate.admit(a, t0), Admit::Drop);
        assert_eq!(rate.admit(a, t0), Admit::Drop);
        // Another source has its own window.
        assert_eq!(rate.admit(Source::Exec, t0), Admit::Write { suppressed: 0 });
        let t1 = t0 + SECOND;
        assert_eq!(rate.admit(a, t1), Admit::Write { suppressed: 2 });
        assert_eq!(rate.admit(a, t1), Admit::Write { suppressed: 0 });
        assert_eq!(rate.admit(a, t1), Admit::Drop);
        assert_eq!(rate.close(a), 1);
        assert_eq!(rate.close(a), 0, "forgotten once closed");
    }

    #[test]
    fn zero_is_no_limit() {
        let mut rate = LogRate::new(0);
        let now = Instant::now();
        for _ in 0..10_000 {
            assert_eq!(
                rate.admit(Source::Exec, now),
                Admit::Write { suppressed: 0 }
            );
        }
        assert!(rate.drain().is_empty());
    }

    proptest! {
        /// Against a model: every line is either written or counted, and said exactly once;
        /// no window of one second writes more than the limit.
        #[test]
        fn every_line_is_written_or_counted_once(
            limit in 1u32..5,
            gaps in proptest::collection::vec(0u64..700, 1..200),
        ) {
            let mut rate = LogRate::new(limit);
            let t0 = Instant::now();
            let source = Source::Connection(7);
            let (mut written, mut said) = (0u64, 0u64);
            let mut at = Duration::ZERO;
            // The model's window: when it started (at the first line) and the lines written.
            let mut window = (Duration::from_millis(gaps[0]), 0u32);
            for gap in &gaps {
                at += Duration::from_millis(*gap);
                if at - window.0 >= SECOND {
                    window = (at, 0);
                }
                match rate.admit(source, t0 + at) {
                    Admit::Write { suppressed } => {
                        written += 1;
                        said += suppressed;
                        window.1 += 1;
                        prop_assert!(window.1 <= limit);
                    }
                    Admit::Drop => prop_assert_eq!(window.1, limit),
                }
            }
            said += rate.close(source);
            prop_assert_eq!(written + said, gaps.len() as u64);
        }
    }
}
