//! What a person sees: the live view on a terminal (one line per connection, redrawn a few
//! times a second), plain progress lines otherwise, and the final summary and verdicts. Codes,
//! counts and timings only.

use indicatif::{MultiProgress, ProgressBar, ProgressDrawTarget, ProgressStyle};
use mllp::client::{State, Transition};
use mllp::soak::{Report, Tally};
use std::collections::BTreeMap;
use std::time::Duration;
use tokio::time::Instant;

/// How progress is shown.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// Redrawn in place on a terminal.
    Live,
    /// One plain line per interval.
    Plain(Duration),
    /// Nothing (`--json`, `--quiet`).
    Off,
}

const LIVE_EVERY: Duration = Duration::from_millis(250);

pub struct ConnLine {
    pub state: State,
    pub reconnects: u64,
    pub in_flight: usize,
    pub generated: u64,
}

/// One redraw's figures: rates and latency over the last interval, totals so far.
pub struct Snapshot<'a> {
    pub elapsed: Duration,
    pub sent_per_s: f64,
    pub done_per_s: f64,
    /// p50, p99, max in ms over the interval.
    pub recent: [f64; 3],
    pub in_flight: usize,
    pub totals: &'a Tally,
    pub conns: &'a [ConnLine],
}

pub struct View {
    mode: Mode,
    bars: Vec<ProgressBar>,
    multi: Option<MultiProgress>,
    last: Option<Instant>,
}

impl View {
    pub fn new(mode: Mode, connections: usize) -> View {
        let mut bars = Vec::new();
        let multi = (mode == Mode::Live).then(|| {
            let multi = MultiProgress::with_draw_target(ProgressDrawTarget::stderr_with_hz(8));
            let style = ProgressStyle::with_template("{msg}").expect("constant template");
            // Header, totals, then one line per connection (at most 16 shown).
            for _ in 0..2 + connections.min(16) {
                let bar = multi.add(ProgressBar::new_spinner());
                bar.set_style(style.clone());
                bars.push(bar);
            }
            multi
        });
        View {
            mode,
            bars,
            multi,
            last: None,
        }
    }

    /// Whether a redraw is due at `now`.
    pub fn due(&self, now: Instant) -> bool {
        let every = match self.mode {
            Mode::Live => LIVE_EVERY,
            Mode::Plain(every) => every,
            Mode::Off => return false,
        };
        self.last
            .map_or(true, |last| now.duration_since(last) >= every)
    }

    pub fn draw(&mut self, s: &Snapshot) {
        self.last = Some(Instant::now());
        let head = format!(
            "soak {:>7.1}s  sent {:>8.0}/s  done {:>8.0}/s  p50 {:.2}ms  p99 {:.2}ms  max {:.2}ms  in flight {}",
            s.elapsed.as_secs_f64(),
            s.sent_per_s,
            s.done_per_s,
            s.recent[0],
            s.recent[1],
            s.recent[2],
            s.in_flight
        );
        let t = s.totals;
        let totals = format!(
            "  generated {}  accepted {}  negative {}  committed-only {}  unknown {}  never-delivered {}  refused {}  reconnects {}{}{}",
            t.generated,
            t.accepted,
            t.negative,
            t.committed_only,
            t.unknown_fate,
            t.never_delivered,
            t.refused,
            t.reconnects,
            counts("  codes", &t.by_code),
            counts("  errors", &t.errors_by_cause),
        );
        match self.mode {
            Mode::Live => {
                if let [header, total, lines @ ..] = self.bars.as_slice() {
                    header.set_message(head);
                    total.set_message(totals);
                    for (i, (bar, c)) in lines.iter().zip(s.conns).enumerate() {
                        bar.set_message(format!(
                            "  #{:<3} {:<12} reconnects {:<4} in flight {:<5} sent {}",
                            i + 1,
                            c.state.as_str(),
                            c.reconnects,
                            c.in_flight,
                            c.generated
                        ));
                    }
                }
            }
            Mode::Plain(_) => {
                let states = states(s.conns);
                eprintln!("{head}  {states}\n{totals}");
            }
            Mode::Off => {}
        }
    }

    /// A state change: the live view shows it in its connection line; plain mode says it.
    pub fn transition(&mut self, conn: usize, t: &Transition) {
        if let Mode::Plain(_) = self.mode {
            if matches!(
                t.to,
                State::Reconnecting | State::Closed | State::Disconnected
            ) || t.from == State::Reconnecting
            {
                return;
            }
            if t.from == State::Connecting && t.to == State::Connected {
                return;
            }
            eprintln!("connection {}: {t}", conn + 1);
        }
    }

    pub fn finish(&mut self) {
        for bar in &self.bars {
            bar.finish();
        }
        if let Some(multi) = &self.multi {
            let _ = multi.clear();
        }
    }
}

fn counts(label: &str, map: &BTreeMap<String, u64>) -> String {
    if map.is_empty() {
        return String::new();
    }
    let items: Vec<String> = map.iter().map(|(k, v)| format!("{k}={v}")).collect();
    format!("{label} {}", items.join(" "))
}

fn states(conns: &[ConnLine]) -> String {
    let mut by_state: BTreeMap<&str, usize> = BTreeMap::new();
    for c in conns {
        *by_state.entry(c.state.as_str()).or_default() += 1;
    }
    let items: Vec<String> = by_state.iter().map(|(k, v)| format!("{k}={v}")).collect();
    items.join(" ")
}

/// The human report for stdout (without `--json`).
pub fn summary(r: &Report) -> String {
    let mut text = String::new();
    let mut line = |l: String| {
        text.push_str(&l);
        text.push('\n');
    };
    let l = &r.latency_ms;
    line(format!(
        "soak: {} generated in {:.1}s, {:.1} accepted/s",
        r.generated, r.elapsed_s, r.throughput
    ));
    line(format!(
        "  accepted {}  negative {}  committed-only {}  unknown-fate {}  never-delivered {}  refused {}",
        r.accepted, r.negative, r.committed_only, r.unknown_fate, r.never_delivered, r.refused
    ));
    line(format!("  ack codes:{}", or_none(&r.by_code)));
    line(format!(
        "  latency ms: p50 {:.3}  p90 {:.3}  p99 {:.3}  p99.9 {:.3}  max {:.3}",
        l.p50, l.p90, l.p99, l.p999, l.max
    ));
    line(format!(
        "  reconnects {}  link errors:{}",
        r.reconnects,
        or_none(&r.errors_by_cause)
    ));
    if !r.outcomes_by_cause.is_empty() {
        line(format!(
            "  not accepted, by cause:{}",
            or_none(&r.outcomes_by_cause)
        ));
    }
    if !r.warnings_by_code.is_empty() {
        line(format!("  warnings:{}", or_none(&r.warnings_by_code)));
    }
    line(format!(
        "  bytes sent {}  received {}",
        r.bytes.sent, r.bytes.received
    ));
    let listener = r
        .accounting
        .listener
        .map(|l| {
            format!(
                " (listener committed {}, duplicates {})",
                l.committed, l.duplicates
            )
        })
        .unwrap_or_default();
    let verdict = if r.accounting_ok {
        "closes"
    } else {
        "DOES NOT CLOSE"
    };
    line(format!("  accounting {verdict}{listener}"));
    text
}

fn or_none(map: &BTreeMap<String, u64>) -> String {
    if map.is_empty() {
        return " none".into();
    }
    map.iter().map(|(k, v)| format!(" {k}={v}")).collect()
}

/// Missed thresholds and accounting problems, on stderr.
pub fn print_verdicts(r: &Report) {
    for v in r.thresholds.iter().filter(|v| !v.ok) {
        eprintln!(
            "mllp: threshold missed: --{} {} (observed {:.3})",
            v.name, v.limit, v.observed
        );
    }
    if !r.accounting_ok {
        eprintln!("mllp: the accounting does not close:");
        for problem in r.accounting.problems.iter().take(20) {
            eprintln!("  {problem}");
        }
        if r.accounting.problems.len() > 20 {
            eprintln!("  ... and {} more", r.accounting.problems.len() - 20);
        }
    }
}
