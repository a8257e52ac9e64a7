//! The relay's live status on a terminal: two lines at the foot of stderr (three with a mirror), redrawn every second and as connections come and go
//! (downstream connections and messages/s in, the upstream link and messages/s out, the queue,
//! upstream ACK latency, reconnects, the last failure), with every event line written above it.
//! Not drawn off a terminal, under `--quiet` or under `--log-format json`.

use super::render::Link;
use crate::diag::Diag;
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use mllp::relay::{Gauges, Reading};
use mllp::server::ServerEvent;
use std::io::IsTerminal;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tokio::sync::mpsc;

/// Downstream connections open now, counted from the server's events on their way to the lines.
#[derive(Debug, Default)]
pub struct Downstream(AtomicU64);

impl Downstream {
    fn seen(&self, event: &ServerEvent) {
        match event {
            ServerEvent::ConnectionOpened { .. } => {
                self.0.fetch_add(1, Ordering::Relaxed);
            }
            ServerEvent::ConnectionClosed { .. } => {
                let _ = self
                    .0
                    .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |n| n.checked_sub(1));
            }
            _ => {}
        }
    }

    fn open(&self) -> u64 {
        self.0.load(Ordering::Relaxed)
    }
}

/// What the status reads from.
pub struct Sources {
    pub gauges: Arc<Gauges>,
    pub link: Arc<Mutex<Link>>,
    pub downstream: Arc<Downstream>,
    /// `--queue`: the depth is shown.
    pub queue: bool,
    /// `--mirror`: its counts and link are shown on a third line.
    pub mirror: Option<super::render::Shadow>,
}

pub struct Status {
    bar: ProgressBar,
    sources: Sources,
    last: Mutex<Sample>,
    /// The figures are final: the link's closing is not shown as its state.
    stopped: std::sync::atomic::AtomicBool,
}

/// The reading the rates were last taken from, and those rates (in, out per second).
struct Sample {
    reading: Reading,
    at: Instant,
    rates: (f64, f64),
}

impl Status {
    /// The status, when stderr is a terminal a person reads.
    pub fn start(diag: &Diag, sources: Sources) -> Option<Arc<Status>> {
        if diag.quiet || diag.json() || !std::io::stderr().is_terminal() {
            return None;
        }
        let bar = ProgressBar::with_draw_target(None, ProgressDrawTarget::stderr_with_hz(4));
        bar.set_style(ProgressStyle::with_template("{msg}").expect("constant template"));
        let status = Arc::new(Status {
            bar: bar.clone(),
            last: Mutex::new(Sample {
                reading: sources.gauges.read(),
                at: Instant::now(),
                rates: (0.0, 0.0),
            }),
            sources,
            stopped: Default::default(),
        });
        status.refresh();
        bar.enable_steady_tick(Duration::from_millis(250));
        crate::diag::draw_around(Some(bar));
        Some(status)
    }

    /// Redraw the figures every second until aborted.
    pub fn tick(self: &Arc<Self>) -> tokio::task::JoinHandle<()> {
        let status = Arc::clone(self);
        tokio::spawn(async move {
            let mut tick = tokio::time::interval(Duration::from_secs(1));
            loop {
                tick.tick().await;
                status.refresh();
            }
        })
    }

    /// The server's events, counted on their way to the line writer.
    pub fn count(
        self: &Arc<Self>,
        mut from: mpsc::Receiver<ServerEvent>,
        to: mpsc::Sender<ServerEvent>,
    ) -> tokio::task::JoinHandle<()> {
        let downstream = Arc::clone(&self.sources.downstream);
        let status = Arc::clone(self);
        tokio::spawn(async move {
            while let Some(event) = from.recv().await {
                downstream.seen(&event);
                if let ServerEvent::ConnectionOpened { .. } | ServerEvent::ConnectionClosed { .. } =
                    event
                {
                    status.refresh();
                }
                if to.send(event).await.is_err() {
                    return;
                }
            }
        })
    }

    fn refresh(&self) {
        if self.stopped.load(Ordering::Relaxed) {
            return;
        }
        let now = self.sources.gauges.read();
        let mut last = self.last.lock().unwrap_or_else(|p| p.into_inner());
        let secs = last.at.elapsed().as_secs_f64();
        // Rates over at least half a second: a redraw soon after the last (the final one at a
        // stop) keeps the rates shown, as a few messages over a few milliseconds are no rate.
        if secs >= 0.5 {
            last.rates = (
                (now.received - last.reading.received) as f64 / secs,
                (now.settled - last.reading.settled) as f64 / secs,
            );
            last.reading = now;
            last.at = Instant::now();
        }
        let (in_per_s, out_per_s) = last.rates;
        drop(last);
        let figures = Figures {
            downstream: self.sources.downstream.open(),
            in_per_s,
            out_per_s,
            queue: self.sources.queue.then_some(now.queue_depth),
            reading: now,
        };
        let link = self.sources.link.lock().unwrap_or_else(|p| p.into_inner());
        let width = (console::Term::stderr().size().1 as usize).clamp(20, 200);
        let mut shown = lines(&figures, &link, width).to_vec();
        drop(link);
        if let Some(shadow) = &self.sources.mirror {
            let shadow_link = shadow.link.lock().unwrap_or_else(|p| p.into_inner());
            shown.push(mirror_line(&shadow.mirror.counts(), &shadow_link, width));
        }
        self.bar.set_message(shown.join("\n"));
    }

    /// The figures as the run stops (the downstream drained, the link not yet closed), kept.
    pub fn stop(&self) {
        self.refresh();
        self.stopped.store(true, Ordering::Relaxed);
    }

    /// The last figures stay on the screen, the lines after them below.
    pub fn finish(&self) {
        crate::diag::draw_around(None);
        self.bar.finish();
        // The finished status leaves the cursor at its end: what follows starts below it.
        crate::diag::write_text("\n");
    }
}

/// One redraw's figures.
struct Figures {
    downstream: u64,
    in_per_s: f64,
    out_per_s: f64,
    queue: Option<u64>,
    reading: Reading,
}

/// The two status lines, each cut to `width` columns (never wrapped).
fn lines(f: &Figures, link: &Link, width: usize) -> [String; 2] {
    let ms = |d: Option<Duration>| match d {
        Some(d) => format!("{:.1}ms", d.as_secs_f64() * 1e3),
        None => "-".into(),
    };
    let queue = match f.queue {
        Some(depth) => format!("  queue {depth}"),
        None => String::new(),
    };
    let first = format!(
        "in: {} conn {:.1}/s  out: {} {:.1}/s{queue}  reconnects {}",
        f.downstream,
        f.in_per_s,
        link.state_name().to_lowercase(),
        f.out_per_s,
        link.reconnects()
    );
    let latency = format!(
        "ack p50 {} p99 {}  ",
        ms(f.reading.ack_p50),
        ms(f.reading.ack_p99)
    );
    // A long cause is shortened, its class kept: the class says whether waiting helps.
    let second = match link.failure() {
        Some((cause, class)) => {
            let class = format!(" ({class})");
            let room = (width - 1).saturating_sub(
                latency.chars().count() + "last failure ".len() + class.chars().count(),
            );
            let cause = cut(cause, room);
            format!("{latency}last failure {cause}{class}")
        }
        None => format!("{latency}no failure"),
    };
    [first, second].map(|line| cut(&line, width - 1))
}

/// The mirror's line: the shadow link's state, its counts and the copies queued.
fn mirror_line(counts: &mllp::relay::Counts, link: &Link, width: usize) -> String {
    let line = format!(
        "mirror: {}  {}  queued {}  reconnects {}",
        link.state_name().to_lowercase(),
        super::mirror::counts_words(counts),
        counts.queued,
        link.reconnects()
    );
    cut(&line, width - 1)
}

/// `text` in at most `width` columns, `...` marking a cut (the figures are plain text, a
/// character a column).
fn cut(text: &str, width: usize) -> String {
    if text.chars().count() <= width {
        return text.to_string();
    }
    let kept: String = text.chars().take(width.saturating_sub(3)).collect();
    format!("{kept}...")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_status_is_cut_to_the_width_never_wrapped() {
        let mut link = Link::default();
        link.failed(
            "upstream refused the connection: a very long cause ".repeat(4),
            "transient",
        );
        let f = Figures {
            downstream: 12345,
            in_per_s: 123456.7,
            out_per_s: 123456.7,
            queue: Some(9_999_999),
            reading: Reading::default(),
        };
        for line in lines(&f, &link, 80) {
            assert!(line.chars().count() < 80, "{line}");
        }
        let cut = &lines(&f, &link, 80)[1];
        assert!(cut.ends_with("... (transient)"), "{cut}");
        let [first, second] = lines(&f, &link, 200);
        assert!(first.contains("queue 9999999"), "{first}");
        assert!(second.ends_with("(transient)"), "{second}");
        assert!(second.starts_with("ack p50 - p99 -"), "{second}");
    }
}
