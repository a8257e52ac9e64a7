//! Server events to stderr lines (human or JSON), written from one thread in
//! batches so a busy server pays one write per batch, not one per event.

mod describe;
mod dial;
mod rate;
mod stamp;
mod stats;

use crate::diag::Diag;
use describe::describe;
use mllp::server::{is_wildcard, ServerEvent};
pub use rate::LogRate;
use rate::{Admit, Source};
use serde_json::json;
pub use stamp::Stamp;
pub use stats::stats;
#[cfg(test)]
use stats::stats_lines;
use tokio::sync::mpsc;

/// Events rendered per write.
const BATCH: usize = 512;

/// After a write of fewer than `BATCH` events, the renderer lets events gather this long before
/// taking more: a busy server then wakes it about once a millisecond, not once per batch of
/// messages (each wake is two context switches and a write).
const GATHER: std::time::Duration = std::time::Duration::from_millis(1);

/// What a positive answer stands for in the lines: a commit to the listener's store, or (a
/// relay passing messages through) the upstream's own answer, passed on: then nothing is said
/// to be committed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Answers {
    Committed,
    PassedOn,
}

/// Render events until every sender is gone; `skipped` (what the start-up read-back left
/// alone) is said right after the address; per-message lines beyond `rate` are counted instead.
pub fn spawn(
    diag: Diag,
    rx: mpsc::Receiver<ServerEvent>,
    metrics: Option<std::net::SocketAddr>,
    skipped: Vec<String>,
    rate: LogRate,
) -> std::io::Result<std::thread::JoinHandle<()>> {
    render_on_thread(diag, rx, metrics, skipped, None, rate, Answers::Committed)
}

/// [`spawn`], firing `listening` once the bound address is on stderr: whatever else writes
/// there (the relay's upstream link) waits for it, so that line stays the first.
pub fn spawn_announcing(
    diag: Diag,
    rx: mpsc::Receiver<ServerEvent>,
    metrics: Option<std::net::SocketAddr>,
    rate: LogRate,
    answers: Answers,
    listening: tokio::sync::oneshot::Sender<()>,
) -> std::io::Result<std::thread::JoinHandle<()>> {
    render_on_thread(
        diag,
        rx,
        metrics,
        Vec::new(),
        Some(listening),
        rate,
        answers,
    )
}

/// What the renderer waits for next: events, or the moment to say what the overall log rate
/// held back (a count is said within a second even when no event follows).
fn next_batch(
    rx: &mut mpsc::Receiver<ServerEvent>,
    batch: &mut Vec<ServerEvent>,
    rate: &LogRate,
    runtime: &tokio::runtime::Handle,
) -> Option<usize> {
    let taken = match rate.next_tick() {
        None => rx.blocking_recv_many(batch, BATCH),
        Some(at) => {
            let at = tokio::time::Instant::from_std(at);
            // The timer is made inside the runtime's context, which `block_on` enters.
            let waiting = async { tokio::time::timeout_at(at, rx.recv_many(batch, BATCH)).await };
            let waited = runtime.block_on(waiting);
            // Nothing came by then: an empty batch, for the count.
            let Ok(taken) = waited else { return Some(0) };
            taken
        }
    };
    // 0: every sender is gone.
    (taken > 0).then_some(taken)
}

fn render_on_thread(
    diag: Diag,
    mut rx: mpsc::Receiver<ServerEvent>,
    metrics: Option<std::net::SocketAddr>,
    skipped: Vec<String>,
    mut listening: Option<tokio::sync::oneshot::Sender<()>>,
    mut rate: LogRate,
    answers: Answers,
) -> std::io::Result<std::thread::JoinHandle<()>> {
    let runtime = tokio::runtime::Handle::current();
    std::thread::Builder::new()
        .name("mllp-events".into())
        .spawn(move || {
            let mut text = String::new();
            // Taken many at a time: the channel's bookkeeping is then paid once per batch.
            let mut batch = Vec::with_capacity(BATCH);
            while let Some(taken) = next_batch(&mut rx, &mut batch, &rate, &runtime) {
                text.clear();
                let stamp = Stamp::now();
                let now = std::time::Instant::now();
                let held = rate.tick(now);
                if held > 0 {
                    rate.push_suppressed(&diag, &stamp, Source::All, held, &mut text);
                }
                for event in batch.drain(..) {
                    if metrics.is_some() {
                        crate::prometheus::server::record(&event);
                    }
                    if !admit(&diag, &stamp, now, &mut rate, &event, &mut text) {
                        continue;
                    }
                    push(&diag, &stamp, &event, answers, &mut text);
                    let first = matches!(
                        event,
                        ServerEvent::Listening { .. } | ServerEvent::Dialling { .. }
                    );
                    if first {
                        for what in &skipped {
                            push_skipped(&diag, &stamp, what, &mut text);
                        }
                    }
                    if let (true, Some(addr)) = (first, metrics) {
                        let (human, fields) = crate::prometheus::announcement_parts(addr);
                        text.push_str(&stamp.line(&diag, "metrics_listening", || human, fields));
                        text.push('\n');
                        if is_wildcard(addr.ip()) {
                            let message = "serving metrics on every interface: any host that can reach this machine can read them";
                            push_wildcard_warning(&diag, &stamp, message, &mut text);
                        }
                    }
                }
                write_stderr(&text);
                if let Some(listening) = listening.take() {
                    let _ = listening.send(());
                }
                if taken < BATCH {
                    std::thread::sleep(GATHER);
                }
            }
            // What was held back at the end is still said.
            text.clear();
            let stamp = Stamp::now();
            for (source, count) in rate.drain(std::time::Instant::now()) {
                rate.push_suppressed(&diag, &stamp, source, count, &mut text);
            }
            write_stderr(&text);
        })
}

fn write_stderr(text: &str) {
    if text.is_empty() {
        return;
    }
    // Around a status drawn at the foot of stderr (the relay's), if there is one.
    crate::diag::write_text(text);
}

/// Whether `event`'s line is written under the rate; first says what its source held back
/// (before the next line it writes, or before its connection's close).
fn admit(
    diag: &Diag,
    stamp: &Stamp,
    now: std::time::Instant,
    rate: &mut LogRate,
    event: &ServerEvent,
    text: &mut String,
) -> bool {
    if let ServerEvent::ConnectionClosed { connection, .. } = event {
        let source = Source::Connection(*connection);
        let held = rate.close(source, now);
        if held > 0 {
            rate.push_suppressed(diag, stamp, source, held, text);
        }
        return true;
    }
    let Some(source) = Source::of(event) else {
        return true;
    };
    // A line --quiet hides is not one to count.
    if diag.quiet && matches!(source, Source::Connection(_)) {
        return true;
    }
    match rate.admit(source, now) {
        Admit::Write { suppressed } => {
            if suppressed > 0 {
                rate.push_suppressed(diag, stamp, source, suppressed, text);
            }
            true
        }
        Admit::Drop => false,
    }
}

/// A header field for a log line: lossy text, control and bidi characters replaced, at most 64
/// characters; `None` when the message has no such field.
fn header_text(field: &Option<bytes::Bytes>) -> Option<String> {
    let field = field.as_ref().filter(|f| !f.is_empty())?;
    let mut text = String::new();
    push_header_text(&mut text, field);
    Some(text)
}

/// [`header_text`] of a non-empty field, written in place: the usual printable ASCII field is
/// copied as it is, anything else goes through the lossy path.
pub(crate) fn push_header_text(text: &mut String, field: &[u8]) {
    if field.len() <= 64 && field.iter().all(|b| (0x20..0x7f).contains(b)) {
        // Printable ASCII is valid UTF-8 with no control characters.
        text.push_str(std::str::from_utf8(field).unwrap_or_default());
        return;
    }
    let lossy = String::from_utf8_lossy(field);
    text.extend(
        lossy
            .chars()
            .take(64)
            .map(|c| if unsafe_on_terminal(c) { '?' } else { c }),
    );
}

/// A character a log line must not carry raw: a control (ESC, NUL, ...) or a bidirectional
/// control, which would reorder what a terminal shows (U+202E turns the rest of a line around).
pub fn unsafe_on_terminal(c: char) -> bool {
    c.is_control()
        || matches!(c, '\u{200E}' | '\u{200F}' | '\u{202A}'..='\u{202E}' | '\u{2066}'..='\u{2069}')
}

/// The human line of one message: which message (MSH-10, MSH-9), its size, and its answer.
/// One per message, so written without float formatting or temporary strings.
fn message_line(text: &mut String, event: &ServerEvent, answers: Answers) {
    use std::fmt::Write as _;
    let ServerEvent::Message {
        connection,
        bytes,
        ack_code,
        duplicate,
        commit_ms,
        control_id,
        message_type,
    } = event
    else {
        return;
    };
    let _ = write!(text, "connection {connection}: message ");
    match control_id.as_deref().filter(|f| !f.is_empty()) {
        Some(id) => push_header_text(text, id),
        None => text.push_str("(no MSH-10)"),
    }
    if let Some(kind) = message_type.as_deref().filter(|f| !f.is_empty()) {
        text.push(' ');
        push_header_text(text, kind);
    }
    let _ = write!(text, ", {bytes} bytes, ");
    match ack_code {
        Some(code) => {
            text.push_str("answered ");
            text.push_str(code.as_str());
        }
        None => text.push_str("no ACK"),
    }
    if *duplicate {
        text.push_str(", duplicate");
    }
    match commit_ms {
        Some(ms) => {
            text.push_str(match answers {
                Answers::Committed => ", commit ",
                Answers::PassedOn => ", upstream ",
            });
            push_millis(text, *ms);
            text.push_str(" ms");
        }
        None => text.push_str(", refused (nothing kept)"),
    }
}

/// Milliseconds to two decimals, as `{:.2}` writes them for the values a commit takes.
fn push_millis(text: &mut String, ms: f64) {
    use std::fmt::Write as _;
    if !(0.0..1e12).contains(&ms) {
        let _ = write!(text, "{ms:.2}");
        return;
    }
    let hundredths = (ms * 100.0).round() as u64;
    let _ = write!(text, "{}.{:02}", hundredths / 100, hundredths % 100);
}

/// Whether anyone can read stderr: not when it is `/dev/null`, where a line per message would
/// be formatted only to be thrown away.
pub fn stderr_is_read() -> bool {
    !is_dev_null(&std::io::stderr())
}

fn is_dev_null(file: &impl std::os::fd::AsFd) -> bool {
    use std::os::unix::fs::{FileTypeExt, MetadataExt};
    let Ok(fd) = file.as_fd().try_clone_to_owned() else {
        return false;
    };
    let (Ok(meta), Ok(null)) = (
        std::fs::File::from(fd).metadata(),
        std::fs::metadata("/dev/null"),
    ) else {
        return false;
    };
    meta.file_type().is_char_device() && meta.rdev() == null.rdev()
}

fn push(diag: &Diag, stamp: &Stamp, event: &ServerEvent, answers: Answers, text: &mut String) {
    if matches!(event, ServerEvent::Message { .. }) && !diag.json() && !diag.quiet {
        // The commonest line, written in place: the same text `describe` gives.
        stamp.push_prefix(text);
        message_line(text, event, answers);
        text.push('\n');
        return;
    }
    if let Some((name, human, fields)) = describe(diag, event, answers) {
        text.push_str(&stamp.line(diag, name, || human, fields));
        text.push('\n');
    }
    // Binding every interface is said right after the address, whatever the verbosity.
    if let ServerEvent::Listening { addr } = event {
        if is_wildcard(addr.ip()) {
            let message = "listening on every interface: any host that can reach this machine can send messages";
            push_wildcard_warning(diag, stamp, message, text);
        }
    }
}

/// A file the start-up read-back or the journal left alone (a link, a FIFO, too large).
fn push_skipped(diag: &Diag, stamp: &Stamp, what: &str, text: &mut String) {
    let human = format!("{} --dedupe: {what}", diag.paint("warning:", "33"));
    text.push_str(&stamp.line(
        diag,
        "read_back_skipped",
        || human,
        json!({ "detail": what }),
    ));
    text.push('\n');
}

/// The security warning for an address bound on every interface.
fn push_wildcard_warning(diag: &Diag, stamp: &Stamp, message: &str, text: &mut String) {
    let code = "MLLP_BIND_ALL_INTERFACES";
    let human = format!("{} {code}: {message}", diag.paint("warning:", "1;33"));
    text.push_str(&stamp.line(
        diag,
        "security_warning",
        || human,
        json!({ "code": code, "message": message }),
    ));
    text.push('\n');
}

#[cfg(test)]
mod tests;
