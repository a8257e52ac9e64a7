//! What `send` shows on stderr while it runs: the progress bar (a terminal only, off under
//! `--json`/`--quiet`; `--progress always` draws it anyway, terminal or not; never under
//! `--log-format json`), the first failure of each outage at once, `-v` steps (connects,
//! writes, ACKs), `--events` lines, and security warnings on every connect. Codes, causes, control
//! IDs and counts only, never payload.

use super::args::{ProgressArg, SendArgs};
use crate::diag::Diag;
use crate::output::diag::Diagnostic;
use crate::output::send::SendEvent;
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressState, ProgressStyle};
use mllp::cause::Class;
use mllp::client::{ClientEvent, Fate, State};
use mllp::transport::{HostTurn, Move};
use std::io::IsTerminal;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// How often the bar's counts are refreshed, at most.
const REFRESH: Duration = Duration::from_millis(100);

/// Messages per second, rounded: `1015/s`, `9.8/s`.
fn rate(state: &ProgressState, w: &mut dyn std::fmt::Write) {
    let per_sec = state.per_sec();
    let _ = if per_sec < 10.0 {
        write!(w, "{per_sec:.1}/s")
    } else {
        write!(w, "{per_sec:.0}/s")
    };
}

pub struct Live {
    bar: Option<ProgressBar>,
    started: Instant,
    /// When the counts were last refreshed (ms since `started`), `u64::MAX` before the first.
    refreshed_ms: AtomicU64,
    events: bool,
    diag: Diag,
    /// `host:port`, as the lines name it.
    endpoint: String,
    /// `--accept`: a connect is waiting for the engine to connect.
    accepting: bool,
    /// What follows a failure (`retrying; giving up after 2m`).
    gives_up: String,
    /// Each link's own view: one, or one per `--connections`.
    links: Vec<LinkView>,
}

/// What the lines remember of one link.
#[derive(Default)]
struct LinkView {
    /// The link is up (since the last `connected`).
    up: AtomicBool,
    /// This outage's first failure was said: the next is said only after a reconnect.
    said_failure: AtomicBool,
    /// `host:port` of its latest connect, once one started (over `--host A --host B` it
    /// changes).
    host: std::sync::Mutex<Option<String>>,
}

impl Live {
    pub fn new(args: &SendArgs, diag: &Diag, total: Option<u64>, plan: &super::plan::Plan) -> Live {
        let target = match args.progress {
            // A bar is not a JSON line: under `--log-format json` it is never drawn.
            _ if diag.json() => None,
            // indicatif's stderr target hides itself off a terminal; asked for, it draws anyway.
            ProgressArg::Always => Some(ProgressDrawTarget::term_like(Box::new(
                console::Term::buffered_stderr(),
            ))),
            ProgressArg::Never => None,
            ProgressArg::Auto => (std::io::stderr().is_terminal() && !args.json && !diag.quiet)
                .then(ProgressDrawTarget::stderr),
        };
        let bar = target.map(|target| {
            let bar = ProgressBar::with_draw_target(total, target);
            // The bar takes what the text leaves of the terminal's width, so the line never wraps.
            let template = if total.is_some() {
                "{wide_bar} {pos}/{len} {rate} eta {eta} {msg}"
            } else {
                "{spinner} {pos} {rate} {msg}"
            };
            if let Ok(style) = ProgressStyle::with_template(template) {
                bar.set_style(style.with_key("rate", rate));
            }
            bar
        });
        Live {
            bar,
            started: Instant::now(),
            refreshed_ms: AtomicU64::new(u64::MAX),
            events: args.events,
            diag: diag.clone(),
            endpoint: plan.endpoint.clone(),
            accepting: args.accept.is_some(),
            gives_up: plan.gives_up.clone(),
            links: (0..args.connections.max(1))
                .map(|_| LinkView::default())
                .collect(),
        }
    }

    fn view(&self, link: usize) -> &LinkView {
        &self.links[link.min(self.links.len() - 1)]
    }

    /// `host:port` of the link's latest connect.
    fn host(&self, link: usize) -> String {
        let host = self
            .view(link)
            .host
            .lock()
            .unwrap_or_else(|e| e.into_inner());
        host.clone().unwrap_or_else(|| self.endpoint.clone())
    }

    /// `host:port`, and which link when there are several.
    fn endpoint(&self, link: usize) -> String {
        match self.links.len() {
            1 => self.host(link),
            _ => format!("{} (link {link})", self.host(link)),
        }
    }

    /// Whether the link waits for the engine to connect (`--accept`).
    pub fn accepting(&self) -> bool {
        self.accepting
    }

    /// Links up now, of all (for the bar of a run over several).
    pub fn links_up(&self) -> (usize, usize) {
        let up = self.links.iter().filter(|l| l.up.load(Ordering::Relaxed));
        (up.count(), self.links.len())
    }

    /// `-v`: a step as it happens, `* connecting to ...` style.
    fn step(&self, human: impl FnOnce() -> String, event: &SendEvent) {
        if self.diag.verbose > 0 {
            self.note(human, event);
        }
    }

    /// A connect starts, to `turn`'s host: said under `-v`, and a move between hosts said
    /// unless `--quiet` (`--events` has its own line for it).
    fn connecting(&self, link: usize, turn: &HostTurn) {
        *self
            .view(link)
            .host
            .lock()
            .unwrap_or_else(|e| e.into_inner()) = Some(turn.endpoint.clone());
        let endpoint = &self.endpoint(link);
        let to = turn.endpoint.as_str();
        let said = self.diag.verbose > 0 || (!self.diag.quiet && !self.events);
        match &turn.moved {
            Some(Move::Failover { from }) if said => self.note(
                || format!("mllp: failover from {from} to {to}"),
                &SendEvent::Failover { from, to },
            ),
            Some(Move::Failback { from }) if said => self.note(
                || format!("mllp: failback from {from} to {to}"),
                &SendEvent::Failback { from, to },
            ),
            _ => {}
        }
        self.step(
            || format!("* connecting to {endpoint}"),
            &SendEvent::Connecting { endpoint },
        );
    }

    /// `-v`: an answer, as it settles a message: `< AA  MSH-10 CTRL0001  1.2ms`. The control
    /// ID is looked up only when the line is shown.
    pub fn answered(&self, control_id: impl FnOnce() -> Option<String>, fate: &Fate) {
        let (Some(code), true) = (fate.ack_code(), self.diag.verbose > 0) else {
            return;
        };
        let control_id = control_id();
        let control_id = control_id.as_deref();
        // Rounded as the records are: a tenth of a millisecond.
        let latency_ms = fate.latency().map(crate::output::tenth_ms);
        self.note(
            || {
                let id = control_id.unwrap_or("-");
                let latency = latency_ms.map_or_else(String::new, |ms| format!("  {ms:.1}ms"));
                format!("< {code}  MSH-10 {id}{latency}")
            },
            &SendEvent::Ack {
                control_id,
                ack_code: code,
                latency_ms,
            },
        );
    }

    /// Link steps: `-v` shows each; without it, the first failure of an outage is said at once
    /// (unless `--quiet`), so a wrong port is never minutes of silence.
    fn link_step(&self, link: usize, event: &ClientEvent) {
        let endpoint = &self.endpoint(link);
        let view = self.view(link);
        match event {
            ClientEvent::Host(turn) => self.connecting(link, turn),
            ClientEvent::StateChange(t) if t.to == State::Connected => {
                view.up.store(true, Ordering::Relaxed);
                let recovered = view.said_failure.swap(false, Ordering::Relaxed);
                if self.diag.verbose > 0 || (recovered && !self.diag.quiet) {
                    self.note(
                        || format!("* connected to {endpoint}"),
                        &SendEvent::Connected { endpoint },
                    );
                }
            }
            ClientEvent::Error { cause, class } => {
                let was_up = view.up.swap(false, Ordering::Relaxed);
                let first = !view.said_failure.swap(true, Ordering::Relaxed);
                let next = match class {
                    Class::Permanent => "not retrying: it is permanent",
                    Class::Transient => self.gives_up.as_str(),
                };
                let what = if was_up {
                    format!("link to {endpoint} lost")
                } else if self.accepting {
                    format!("no engine connected to {endpoint}")
                } else {
                    format!("cannot connect to {endpoint}")
                };
                let event = SendEvent::LinkFailure {
                    endpoint,
                    cause: *cause,
                    class: *class,
                    connected_before: was_up,
                };
                if self.diag.verbose > 0 {
                    self.note(|| format!("* {what}: {cause} ({class})"), &event);
                } else if first && !self.diag.quiet && !self.events {
                    self.note(|| format!("mllp: {what}: {cause}; {next}"), &event);
                }
            }
            ClientEvent::Reconnecting { attempt, delay } => {
                self.step(
                    || format!("* retrying in {delay:.0?} (attempt {attempt})"),
                    &SendEvent::client(event, endpoint),
                );
            }
            ClientEvent::Written { control_id, bytes } => {
                let id = control_id.as_deref();
                self.step(
                    || format!("> MSH-10 {}  {bytes} bytes", id.unwrap_or("-")),
                    &SendEvent::Written {
                        control_id: id,
                        bytes: *bytes,
                    },
                );
            }
            _ => {}
        }
    }

    /// One message settled. `counts` gives (in flight, reconnects) for the bar's message; it is
    /// asked only when there is a bar, at most every [`REFRESH`].
    pub fn settled(&self, counts: impl FnOnce() -> (u64, u64)) {
        if let Some(bar) = &self.bar {
            bar.inc(1);
            let now = self.started.elapsed().as_millis() as u64;
            let last = self.refreshed_ms.load(Ordering::Relaxed);
            if last == u64::MAX || now.saturating_sub(last) >= REFRESH.as_millis() as u64 {
                self.refreshed_ms.store(now, Ordering::Relaxed);
                let (in_flight, reconnects) = counts();
                let links = match self.links_up() {
                    (_, 1) => String::new(),
                    (up, all) => format!("links up {up}/{all}, "),
                };
                bar.set_message(format!(
                    "{links}in flight {in_flight}, reconnects {reconnects}"
                ));
            }
        }
    }

    /// A line on stderr that does not tear the bar.
    pub fn line(&self, text: &str) {
        match &self.bar {
            Some(bar) => bar.suspend(|| crate::diag::write_line(text)),
            None => crate::diag::write_line(text),
        }
    }

    /// A run event: `human` for people, the event's JSON with `--log-format json`.
    pub fn note(&self, human: impl FnOnce() -> String, event: &SendEvent) {
        self.line(&self.said(human, event));
    }

    /// `human`, or under `--log-format json` the event with the `time` it is said at (RFC 3339
    /// UTC to the millisecond, as listen's events carry it).
    fn said(&self, human: impl FnOnce() -> String, event: &impl serde::Serialize) -> String {
        if !self.diag.json() {
            return human();
        }
        let mut fields = serde_json::to_value(event).unwrap_or_default();
        if let serde_json::Value::Object(map) = &mut fields {
            let now = humantime::format_rfc3339_millis(std::time::SystemTime::now());
            map.insert("time".into(), now.to_string().into());
        }
        crate::output::line(&fields)
    }

    /// A client event of link `link` (from 0; 0 for a run over one): security warnings always,
    /// protocol warnings unless `--quiet` (a tolerated deviation is said out loud), the rest
    /// with `--events`.
    pub fn event_on(&self, link: usize, event: &ClientEvent) {
        self.link_step(link, event);
        let host = &self.host(link);
        let diag = &self.diag;
        // `-vv` shows everything `--events` does.
        let events = self.events || diag.verbose > 1;
        let line = match event {
            ClientEvent::SecurityWarning(code) => {
                let (code, message) = (code.as_str(), crate::diag::VERIFY_DISABLED);
                let warning = Diagnostic::SecurityWarning { code, message };
                let human = || diag.security_warning_line(code, message);
                return self.line(&self.said(human, &warning));
            }
            ClientEvent::Written { .. } => return,
            // `-v` said these already as `*` lines; `--events` still gets its own.
            ClientEvent::Reconnecting { .. } | ClientEvent::Error { .. }
                if diag.verbose > 0 && !self.events =>
            {
                return
            }
            _ if !(events || !diag.quiet && matches!(event, ClientEvent::Warning(_))) => return,
            ClientEvent::StateChange(t) => {
                format!("state {} -> {} ({}) on {host}", t.from, t.to, t.reason)
            }
            ClientEvent::Reconnecting { attempt, delay } => {
                let delay = mllp::duration::Rounded(*delay);
                format!("reconnecting: attempt {attempt} in {delay} after {host}")
            }
            ClientEvent::Error { cause, class } => {
                format!(
                    "link error on {host}: {cause} ({class}): {}",
                    crate::hint::for_cause(*cause)
                )
            }
            ClientEvent::Warning(w) => format!("warning {}", crate::diag::warnings::human(w)),
            other => other.to_string(),
        };
        let line = match self.links.len() {
            1 => line,
            _ => format!("link {link}: {line}"),
        };
        self.note(|| line, &SendEvent::client(event, host));
    }

    /// The bar, for writers that must not tear it (stdout on the same terminal).
    pub fn bar(&self) -> Option<ProgressBar> {
        self.bar.clone()
    }

    pub fn finish(&self) {
        if let Some(bar) = &self.bar {
            bar.finish_and_clear();
        }
    }
}
