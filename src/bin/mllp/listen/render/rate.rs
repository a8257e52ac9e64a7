//! `--log-rate` and `--log-rate-total`: at most N per-message lines a second from each
//! connection, and from the `--exec` command's stderr, and at most M a second from all of them
//! together. What a source holds back is counted and said in one `suppressed` line when it next
//! writes after that second, or when its connection closes; what the overall limit holds back
//! (those lines included) is said in one `suppressed` line for all sources once a second. Lines
//! said once per connection (opened, closed) are never held back.

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
    /// Every source together, under the overall limit.
    All,
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

impl Window {
    fn new(start: Instant) -> Window {
        Window {
            start,
            lines: 0,
            suppressed: 0,
        }
    }

    /// Start a new second at `now` if the current one is past; what it held back, then.
    fn roll(&mut self, now: Instant) -> u64 {
        if now.duration_since(self.start) < SECOND {
            return 0;
        }
        self.start = now;
        self.lines = 0;
        std::mem::take(&mut self.suppressed)
    }
}

/// The per-source windows (a connection's is dropped when it closes) and the overall one.
#[derive(Debug)]
pub struct LogRate {
    /// Lines a second per source; 0: no limit.
    limit: u32,
    /// Lines a second from every source together; 0: no limit.
    total_limit: u32,
    /// FxHash: the sources are the server's own connection numbers, never chosen by a peer, and
    /// SipHash cost more than the rest of a line's admission.
    windows: HashMap<Source, Window, rustc_hash::FxBuildHasher>,
    /// Every source's lines together, from the first.
    total: Option<Window>,
    /// What the overall limit held back in seconds now past: said at the next tick.
    due: u64,
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
    /// At most `limit` lines a second per source and `total_limit` from all (0: no limit).
    pub fn new(limit: u32, total_limit: u32) -> LogRate {
        LogRate {
            limit,
            total_limit,
            windows: HashMap::default(),
            total: None,
            due: 0,
        }
    }

    /// Whether a line from `source` at `now` is written.
    pub fn admit(&mut self, source: Source, now: Instant) -> Admit {
        let mut said = 0;
        if self.limit > 0 {
            let window = self
                .windows
                .entry(source)
                .or_insert_with(|| Window::new(now));
            said = window.roll(now);
            if window.lines >= self.limit {
                window.suppressed += 1;
                return Admit::Drop;
            }
            window.lines += 1;
        }
        // The line, and the source's count when one is said with it.
        let lines = 1 + u32::from(said > 0);
        if !self.take_total(now, lines) {
            // Held back overall, with what the source's count stood for.
            self.held_total(now, 1 + said);
            return Admit::Drop;
        }
        Admit::Write { suppressed: said }
    }

    /// Room for `lines` more lines in the overall second at `now`, taken if there is.
    fn take_total(&mut self, now: Instant, lines: u32) -> bool {
        if self.total_limit == 0 {
            return true;
        }
        let total = self.total.get_or_insert_with(|| Window::new(now));
        self.due += total.roll(now);
        if total.lines + lines > self.total_limit {
            return false;
        }
        total.lines += lines;
        true
    }

    /// `count` lines held back by the overall limit at `now`.
    fn held_total(&mut self, now: Instant, count: u64) {
        let total = self.total.get_or_insert_with(|| Window::new(now));
        total.suppressed += count;
    }

    /// What the overall limit held back in a second now past, once: said as one line. The
    /// first tick starts the overall second.
    pub fn tick(&mut self, now: Instant) -> u64 {
        if self.total_limit > 0 {
            let total = self.total.get_or_insert_with(|| Window::new(now));
            self.due += total.roll(now);
        }
        std::mem::take(&mut self.due)
    }

    /// When the overall limit's count is to be said, if it holds anything back: the end of its
    /// second (now, for a count already due).
    pub fn next_tick(&self) -> Option<Instant> {
        if self.due > 0 {
            return Some(Instant::now());
        }
        let total = self.total.as_ref().filter(|t| t.suppressed > 0)?;
        Some(total.start + SECOND)
    }

    /// Forget `source` (its connection closed); the lines it had held back, to be said now
    /// (0 when none, or when the overall limit takes them into its own count).
    pub fn close(&mut self, source: Source, now: Instant) -> u64 {
        let held = self.windows.remove(&source).map_or(0, |w| w.suppressed);
        self.say(held, now)
    }

    /// `held` lines of one source to be said at `now`: `held` when the overall limit has room
    /// for the line, else 0 and they join its count.
    fn say(&mut self, held: u64, now: Instant) -> u64 {
        if held == 0 || self.take_total(now, 1) {
            return held;
        }
        self.held_total(now, held);
        0
    }

    /// Every source still holding lines back, emptied, the overall count last: said when the
    /// run ends.
    pub fn drain(&mut self, now: Instant) -> Vec<(Source, u64)> {
        let mut held: Vec<(Source, u64)> = std::mem::take(&mut self.windows)
            .into_iter()
            .filter(|(_, w)| w.suppressed > 0)
            .map(|(source, w)| (source, w.suppressed))
            .collect();
        held.sort_by_key(|(source, _)| match source {
            Source::Connection(id) => *id,
            _ => u64::MAX,
        });
        let mut said = Vec::new();
        for (source, count) in held {
            let count = self.say(count, now);
            if count > 0 {
                said.push((source, count));
            }
        }
        let overall = self.due + self.total.take().map_or(0, |t| t.suppressed);
        self.due = 0;
        if overall > 0 {
            said.push((Source::All, overall));
        }
        said
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
        let (limit, flag) = match source {
            Source::All => (self.total_limit, "--log-rate-total"),
            _ => (self.limit, "--log-rate"),
        };
        let (human, fields) = match source {
            Source::Connection(connection) => (
                format!(
                    "connection {connection}: {} suppressed (more than {limit} a second; see {flag})",
                    crate::diag::count(count, "line")
                ),
                json!({ "source": "connection", "connection": connection, "count": count, "limit": limit }),
            ),
            Source::Exec => (
                format!(
                    "exec: {} suppressed (more than {limit} a second; see {flag})",
                    crate::diag::count(count, "stderr line")
                ),
                json!({ "source": "exec", "count": count, "limit": limit }),
            ),
            Source::All => (
                format!(
                    "{} suppressed overall (more than {limit} a second from all connections; see {flag})",
                    crate::diag::count(count, "line")
                ),
                json!({ "source": "all", "count": count, "limit": limit }),
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
        let mut rate = LogRate::new(2, 0);
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
        assert_eq!(rate.close(a, t1), 1);
        assert_eq!(rate.close(a, t1), 0, "forgotten once closed");
    }

    #[test]
    fn zero_is_no_limit() {
        let mut rate = LogRate::new(0, 0);
        let now = Instant::now();
        for _ in 0..10_000 {
            assert_eq!(
                rate.admit(Source::Exec, now),
                Admit::Write { suppressed: 0 }
            );
        }
        assert!(rate.drain(now).is_empty());
        assert_eq!(rate.next_tick(), None);
    }

    #[test]
    fn many_sources_together_are_held_to_the_overall_rate_and_said_once_a_second() {
        let mut rate = LogRate::new(100, 10);
        let t0 = Instant::now();
        let mut written = 0;
        for id in 0..50 {
            for _ in 0..3 {
                if rate.admit(Source::Connection(id), t0) != Admit::Drop {
                    written += 1;
                }
            }
        }
        assert_eq!(
            written, 10,
            "ten lines a second from all connections together"
        );
        assert_eq!(rate.tick(t0), 0, "said once its second is over");
        assert_eq!(rate.next_tick(), Some(t0 + SECOND));
        let t1 = t0 + SECOND;
        assert_eq!(rate.tick(t1), 140);
        assert_eq!(rate.tick(t1), 0, "said once");
        assert_eq!(rate.next_tick(), None);
    }

    #[test]
    fn a_sources_count_the_overall_rate_cannot_say_joins_its_count() {
        let mut rate = LogRate::new(1, 3);
        let t0 = Instant::now();
        let (a, b) = (Source::Connection(1), Source::Connection(2));
        assert_eq!(rate.admit(a, t0), Admit::Write { suppressed: 0 });
        assert_eq!(rate.admit(a, t0), Admit::Drop);
        assert_eq!(rate.admit(a, t0), Admit::Drop);
        assert_eq!(rate.admit(b, t0), Admit::Write { suppressed: 0 });
        assert_eq!(rate.admit(Source::Exec, t0), Admit::Write { suppressed: 0 });
        // The overall second is full: a's count goes into the overall one.
        assert_eq!(rate.close(a, t0), 0);
        assert_eq!(rate.drain(t0), vec![(Source::All, 2)]);
    }

    proptest! {
        /// Against a model: every line is either written or counted, and said exactly once;
        /// no window of one second writes more than the limit.
        #[test]
        fn every_line_is_written_or_counted_once(
            limit in 1u32..5,
            gaps in proptest::collection::vec(0u64..700, 1..200),
        ) {
            let mut rate = LogRate::new(limit, 0);
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
            said += rate.close(source, t0 + at);
            prop_assert_eq!(written + said, gaps.len() as u64);
        }

        /// Many sources under both limits: every line is written or counted once, by its source
        /// or overall; no overall second writes more than the overall limit, counts included.
        #[test]
        fn every_line_is_written_or_counted_once_overall(
            limit in 1u32..4,
            total_limit in 1u32..8,
            lines in proptest::collection::vec((0u64..4, 0u64..400, any::<bool>()), 1..300),
        ) {
            let mut rate = LogRate::new(limit, total_limit);
            let t0 = Instant::now();
            let (mut written, mut counted) = (0u64, 0u64);
            let mut at = Duration::ZERO;
            // The model's overall second: when it started and the lines written in it.
            let mut second: Option<(Duration, u32)> = None;
            let write = |n: u32, second: &mut Option<(Duration, u32)>| {
                let s = second.as_mut().expect("started by the first tick");
                s.1 += n;
                s.1 <= total_limit
            };
            for (id, gap, closes) in &lines {
                at += Duration::from_millis(*gap);
                // Each step starts with a tick, as each batch of the renderer does.
                counted += rate.tick(t0 + at);
                let s = second.get_or_insert((at, 0));
                if at - s.0 >= SECOND {
                    *s = (at, 0);
                }
                let source = Source::Connection(*id);
                if *closes {
                    let held = rate.close(source, t0 + at);
                    if held > 0 {
                        prop_assert!(write(1, &mut second));
                    }
                    counted += held;
                    continue;
                }
                match rate.admit(source, t0 + at) {
                    Admit::Write { suppressed } => {
                        written += 1;
                        counted += suppressed;
                        prop_assert!(write(1 + u32::from(suppressed > 0), &mut second));
                    }
                    Admit::Drop => {}
                }
            }
            let closes = lines.iter().filter(|l| l.2).count() as u64;
            counted += rate.drain(t0 + at).iter().map(|(_, n)| n).sum::<u64>();
            prop_assert_eq!(written + counted, lines.len() as u64 - closes);
        }
    }
}
