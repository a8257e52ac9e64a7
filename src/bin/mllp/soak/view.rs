//! What a run shows on stderr while it goes: the live view on a terminal (one line per
//! connection, redrawn a few times a second), plain progress lines otherwise, or under
//! `--log-format json` `progress` and `state_change` events; security warnings always. Codes,
//! counts and timings only.

use super::args::{Live, SoakArgs};
use crate::diag::Diag;
use crate::output::soak::SoakEvent;
use indicatif::{MultiProgress, ProgressBar, ProgressDrawTarget, ProgressStyle};
use mllp::client::{State, Transition};
use mllp::soak::Sample;
use std::collections::BTreeMap;
use std::io::IsTerminal;
use std::time::Duration;

/// How progress is shown.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// Redrawn in place on a terminal (never under `--log-format json`).
    Live,
    /// One plain line (or `progress` event) per interval.
    Plain(Duration),
    /// Nothing (`--json`, `--quiet`).
    Off,
}

impl Mode {
    pub fn choose(args: &SoakArgs, diag: &Diag) -> Mode {
        // A redrawn view is not JSON lines: under `--log-format json` progress events stand in.
        let drawable = !diag.json();
        let interactive = std::io::stderr().is_terminal();
        match (args.live, args.json, diag.quiet) {
            (Live::Always, _, _) if drawable => Mode::Live,
            (Live::Always, _, _) => Mode::Plain(args.report_interval),
            (Live::Auto, false, false) if interactive && drawable => Mode::Live,
            (_, false, false) => Mode::Plain(args.report_interval),
            _ => Mode::Off,
        }
    }
}

const LIVE_EVERY: Duration = Duration::from_millis(250);

impl Mode {
    /// How often the run should send a sample; `None`: only the last.
    pub fn every(self) -> Option<Duration> {
        match self {
            Mode::Live => Some(LIVE_EVERY),
            Mode::Plain(every) => Some(every),
            Mode::Off => None,
        }
    }
}

pub struct View {
    mode: Mode,
    bars: Vec<ProgressBar>,
    multi: Option<MultiProgress>,
    diag: Diag,
}

impl View {
    pub fn new(mode: Mode, connections: usize, diag: Diag) -> View {
        let mut bars = Vec::new();
        let multi = (mode == Mode::Live).then(|| {
            let multi = MultiProgress::with_draw_target(ProgressDrawTarget::stderr_with_hz(8));
            let style = ProgressStyle::with_template("{msg}").expect("constant template");
            // The figures (as many lines as the width needs), then one line per connection (at
            // most 16 shown).
            for _ in 0..1 + connections.min(16) {
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
            diag,
        }
    }

    /// One sample: redrawn in place, or one progress line or event.
    pub fn draw(&mut self, s: &Sample) {
        let t = &s.totals;
        let head = [
            format!("soak {:.1}s", s.elapsed.as_secs_f64()),
            format!("sent {:.0}/s", s.sent_per_s),
            format!("done {:.0}/s", s.done_per_s),
            format!("in flight {}", s.in_flight),
            format!("p50 {:.2}ms", s.latency.p50_ms),
            format!("p99 {:.2}ms", s.latency.p99_ms),
            format!("max {:.2}ms", s.latency.max_ms),
        ];
        let mut totals = vec![
            format!("generated {}", t.generated),
            format!("accepted {}", t.fates.accepted),
            format!("negative {}", t.fates.negative),
            format!("committed-only {}", t.fates.committed_only),
            format!("unknown {}", t.fates.unknown_fate),
            format!("never-delivered {}", t.fates.never_delivered),
            format!("refused {}", t.fates.refused),
            format!("reconnects {}", t.reconnects),
        ];
        totals.extend(counts("codes", &t.fates.by_code));
        totals.extend(counts("errors", &t.errors_by_cause));
        // Lines break between figures, never inside one, at the terminal's width.
        let width = match self.mode {
            Mode::Live => console::Term::stderr().size().1 as usize,
            _ => crate::diag::TEXT_WIDTH,
        }
        .clamp(40, 200);
        match self.mode {
            Mode::Live => {
                let mut block = crate::diag::pack(&head, width, "", "  ");
                block.extend(crate::diag::pack(&totals, width, "  ", "  "));
                if let [header, lines @ ..] = self.bars.as_slice() {
                    header.set_message(block.join("\n"));
                    for (i, (bar, c)) in lines.iter().zip(&s.connections).enumerate() {
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
                // One line per interval, for logs and `grep`: the figures that are not zero.
                let states = join(&s.states());
                self.diag.say(
                    || plain_line(&head, &totals, &states),
                    &SoakEvent::progress(s),
                );
            }
            Mode::Off => {}
        }
    }

    /// A state change: the live view shows it in its connection line; plain lines name the
    /// notable ones; JSON events carry every one.
    pub fn transition(&mut self, conn: usize, t: &Transition) {
        if self.mode == Mode::Off {
            return;
        }
        if self.diag.json() {
            let event = SoakEvent::state_change(conn, t);
            return self.diag.say(String::new, &event);
        }
        if let Mode::Plain(_) = self.mode {
            // The ordinary connect and reconnect cycle is counted in the periodic lines; a
            // line each would drown them under chaos. A close, a give-up or a drop without
            // reconnect is what an operator needs to see.
            let ordinary_cycle = matches!(
                (t.from, t.to),
                (State::Connected, State::Reconnecting)
                    | (State::Reconnecting, State::Connecting)
                    | (State::Connecting, State::Reconnecting)
                    | (State::Connecting, State::Connected)
            );
            if ordinary_cycle {
                return;
            }
            crate::diag::write_line(&format!("connection {}: {t}", conn + 1));
        }
    }

    /// A security warning (`MLLP_TLS_VERIFY_DISABLED` on each connect), whatever the mode.
    pub fn security_warning(&self, code: &str) {
        let text = crate::diag::VERIFY_DISABLED;
        match &self.multi {
            Some(multi) => multi.suspend(|| self.diag.security_warning(code, text)),
            None => self.diag.security_warning(code, text),
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

/// The plain progress line: the head figures, the totals that are not zero (generated and
/// accepted always), the states.
fn plain_line(head: &[String], totals: &[String], states: &[String]) -> String {
    let shown = totals
        .iter()
        .enumerate()
        .filter(|(i, figure)| *i < 2 || !figure.ends_with(" 0"));
    let mut figures: Vec<&str> = head.iter().map(String::as_str).collect();
    figures.extend(shown.map(|(_, figure)| figure.as_str()));
    figures.extend(states.iter().map(String::as_str));
    figures.join("  ")
}

/// `label k=v`, then `k=v` for the rest: items a line may break between.
fn counts(label: &str, map: &BTreeMap<String, u64>) -> Vec<String> {
    map.iter()
        .enumerate()
        .map(|(i, (k, v))| match i {
            0 => format!("{label} {k}={v}"),
            _ => format!("{k}={v}"),
        })
        .collect()
}

fn join(states: &BTreeMap<&str, usize>) -> Vec<String> {
    states.iter().map(|(k, v)| format!("{k}={v}")).collect()
}
