//! What `send` shows on stderr while it runs: the progress bar (a terminal only, off under
//! `--json`/`--quiet` unless `--progress always`), `--events` lines, and security warnings on
//! every connect. Codes, causes and counts only.

use super::{ProgressArg, SendArgs};
use crate::diag::Diag;
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use mllp::client::ClientEvent;
use serde_json::json;
use std::io::IsTerminal;

pub struct Live {
    bar: Option<ProgressBar>,
    events: bool,
    diag: Diag,
}

impl Live {
    pub fn new(args: &SendArgs, diag: &Diag, total: Option<u64>) -> Live {
        let show = match args.progress {
            ProgressArg::Always => true,
            ProgressArg::Never => false,
            ProgressArg::Auto => std::io::stderr().is_terminal() && !args.json && !diag.quiet,
        };
        let bar = show.then(|| {
            let bar = match total {
                Some(n) => ProgressBar::with_draw_target(Some(n), ProgressDrawTarget::stderr()),
                None => ProgressBar::with_draw_target(None, ProgressDrawTarget::stderr()),
            };
            let template = if total.is_some() {
                "{bar:30} {pos}/{len} {per_sec} eta {eta} {msg}"
            } else {
                "{spinner} {pos} {per_sec} {msg}"
            };
            if let Ok(style) = ProgressStyle::with_template(template) {
                bar.set_style(style);
            }
            bar
        });
        Live {
            bar,
            events: args.events,
            diag: diag.clone(),
        }
    }

    /// One message settled; `in_flight` and `reconnects` refresh the bar's message.
    pub fn settled(&self, in_flight: u64, reconnects: u64) {
        if let Some(bar) = &self.bar {
            bar.inc(1);
            bar.set_message(format!("in flight {in_flight}, reconnects {reconnects}"));
        }
    }

    /// A line on stderr that does not tear the bar.
    pub fn line(&self, text: &str) {
        match &self.bar {
            Some(bar) => bar.suspend(|| eprintln!("{text}")),
            None => eprintln!("{text}"),
        }
    }

    /// A client event: security warnings always, protocol warnings unless `--quiet` (a
    /// tolerated deviation is said out loud), the rest with `--events`.
    pub fn event(&self, event: &ClientEvent) {
        let diag = &self.diag;
        let line = match event {
            ClientEvent::SecurityWarning(code) => {
                let text = "TLS certificate verification is disabled (--insecure): the peer is \
                            not authenticated and the link may be intercepted";
                let line = diag.line(
                    "security_warning",
                    || format!("{} {code}: {text}", diag.paint("warning:", "1;33")),
                    json!({ "code": code.as_str(), "message": text }),
                );
                return self.line(&line);
            }
            _ if !(self.events || !diag.quiet && matches!(event, ClientEvent::Warning(_))) => {
                return
            }
            ClientEvent::StateChange(t) => diag.line(
                "state_change",
                || format!("state {} -> {} ({})", t.from, t.to, t.reason),
                json!({ "from": t.from, "to": t.to, "reason": t.reason.to_string() }),
            ),
            ClientEvent::Reconnecting { attempt, delay } => diag.line(
                "reconnecting",
                || format!("reconnecting: attempt {attempt} in {delay:?}"),
                json!({ "attempt": attempt, "delay_ms": delay.as_millis() as u64 }),
            ),
            ClientEvent::Error { cause, class } => diag.line(
                "link_error",
                || format!("link error: {cause} ({class}): {}", cause.hint()),
                json!({ "cause": cause.as_str(), "class": class.as_str() }),
            ),
            ClientEvent::Warning(w) => diag.line(
                "warning",
                || format!("warning {w}"),
                json!({ "code": w.code.as_str(), "byte_offset": w.byte_offset }),
            ),
            other => diag.line("client_event", || other.to_string(), json!({})),
        };
        self.line(&line);
    }

    pub fn finish(&self) {
        if let Some(bar) = &self.bar {
            bar.finish_and_clear();
        }
    }
}
