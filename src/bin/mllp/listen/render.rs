//! Server events to stderr lines (human or JSON), written from one thread in
//! batches so a busy server pays one write per batch, not one per event.

mod stamp;

use crate::diag::Diag;
use mllp::server::{is_wildcard, ServerEvent, StatsSnapshot};
use serde_json::{json, Value};
pub use stamp::Stamp;
use std::io::Write;
use tokio::sync::mpsc;

/// Events rendered per write.
const BATCH: usize = 512;

/// After a write of fewer than `BATCH` events, the renderer lets events gather this long before
/// taking more: a busy server then wakes it about once a millisecond, not once per batch of
/// messages (each wake is two context switches and a write).
const GATHER: std::time::Duration = std::time::Duration::from_millis(1);

/// Render events until every sender is gone; `skipped` (what the start-up read-back left
/// alone) is said right after the address.
pub fn spawn(
    diag: Diag,
    rx: mpsc::Receiver<ServerEvent>,
    metrics: Option<std::net::SocketAddr>,
    skipped: Vec<String>,
) -> std::io::Result<std::thread::JoinHandle<()>> {
    spawn_announcing(diag, rx, metrics, skipped, None)
}

/// [`spawn`], firing `listening` once the bound address is on stderr: whatever else writes
/// there (the relay's upstream link) waits for it, so that line stays the first.
pub fn spawn_announcing(
    diag: Diag,
    mut rx: mpsc::Receiver<ServerEvent>,
    metrics: Option<std::net::SocketAddr>,
    skipped: Vec<String>,
    mut listening: Option<tokio::sync::oneshot::Sender<()>>,
) -> std::io::Result<std::thread::JoinHandle<()>> {
    std::thread::Builder::new()
        .name("mllp-events".into())
        .spawn(move || {
            let mut text = String::new();
            // Taken many at a time: the channel's bookkeeping is then paid once per batch.
            let mut batch = Vec::with_capacity(BATCH);
            while let taken @ 1.. = rx.blocking_recv_many(&mut batch, BATCH) {
                text.clear();
                let stamp = Stamp::now();
                for event in batch.drain(..) {
                    if metrics.is_some() {
                        crate::prometheus::server::record(&event);
                    }
                    push(&diag, &stamp, &event, &mut text);
                    if let ServerEvent::Listening { .. } = event {
                        for what in &skipped {
                            push_skipped(&diag, &stamp, what, &mut text);
                        }
                    }
                    if let (ServerEvent::Listening { .. }, Some(addr)) = (&event, metrics) {
                        let (human, fields) = crate::prometheus::announcement_parts(addr);
                        text.push_str(&stamp.line(&diag, "metrics_listening", || human, fields));
                        text.push('\n');
                        if is_wildcard(addr.ip()) {
                            let message = "serving metrics on every interface: any host that can reach this machine can read them";
                            push_wildcard_warning(&diag, &stamp, message, &mut text);
                        }
                    }
                }
                let mut err = std::io::stderr().lock();
                let _ = err.write_all(text.as_bytes());
                let _ = err.flush();
                drop(err);
                if let Some(listening) = listening.take() {
                    let _ = listening.send(());
                }
                if taken < BATCH {
                    std::thread::sleep(GATHER);
                }
            }
        })
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
fn push_header_text(text: &mut String, field: &[u8]) {
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
fn message_line(text: &mut String, event: &ServerEvent) {
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
            text.push_str(", commit ");
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

fn push(diag: &Diag, stamp: &Stamp, event: &ServerEvent, text: &mut String) {
    if matches!(event, ServerEvent::Message { .. }) && !diag.json() && !diag.quiet {
        // The commonest line, written in place: the same text `describe` gives.
        stamp.push_prefix(text);
        message_line(text, event);
        text.push('\n');
        return;
    }
    if let Some((name, human, fields)) = describe(diag, event) {
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

/// An event's name, human line and JSON fields; `None` when this verbosity hides it.
fn describe(diag: &Diag, event: &ServerEvent) -> Option<(&'static str, String, Value)> {
    // Under --quiet only the address, security warnings, accept errors and the final stats are
    // shown.
    let quiet = diag.quiet;
    Some(match event {
        ServerEvent::Listening { addr } => (
            "listening",
            format!("listening on {addr}"),
            json!({ "addr": addr.to_string() }),
        ),
        _ if quiet
            && !matches!(
                event,
                ServerEvent::SecurityWarning { .. }
                    | ServerEvent::AcceptError { .. }
                    | ServerEvent::StoreLost { .. }
                    | ServerEvent::StoreRestored { .. }
            ) =>
        {
            return None
        }
        ServerEvent::ConnectionOpened {
            connection,
            peer,
            tls,
        } => {
            let subject = tls.as_ref().and_then(|t| t.client_subject.clone());
            let authorized = tls.as_ref().map(|t| t.client_cert_verified);
            let human = match (tls, &subject) {
                (None, _) => format!("connection {connection} opened from {peer}"),
                (Some(t), None) => {
                    format!(
                        "connection {connection} opened from {peer} ({}, no client certificate)",
                        t.tls.version
                    )
                }
                (Some(t), Some(subject)) => format!(
                    "connection {connection} opened from {peer} ({}, client {subject}, {})",
                    t.tls.version,
                    if t.client_cert_verified {
                        "authorized"
                    } else {
                        "not authorized"
                    }
                ),
            };
            (
                "connection_opened",
                human,
                json!({
                    "connection": connection,
                    "peer": &**peer,
                    "tls": tls,
                    "subject": subject,
                    "authorized": authorized,
                }),
            )
        }
        ServerEvent::ConnectionClosed {
            connection,
            peer,
            cause,
            code,
        } => (
            "connection_closed",
            match code {
                Some(code) => {
                    format!("connection {connection} from {peer} closed: {cause} ({code})")
                }
                None => format!("connection {connection} from {peer} closed: {cause}"),
            },
            json!({ "connection": connection, "peer": &**peer, "cause": cause, "code": code }),
        ),
        ServerEvent::AcceptFailed {
            connection,
            peer,
            cause,
            detail,
        } => (
            "tls_client_error",
            format!(
                "connection {connection} from {peer}: TLS handshake failed ({cause}): {detail}"
            ),
            json!({ "connection": connection, "peer": &**peer, "cause": cause, "detail": detail }),
        ),
        ServerEvent::AcceptError { error, count } => (
            "accept_error",
            format!(
                "{} accepting a connection failed ({count} so far): {error}; backing off",
                diag.paint("warning:", "33")
            ),
            json!({ "error": error, "count": count }),
        ),
        ServerEvent::Warning {
            connection,
            warning,
        } => (
            "warning",
            format!(
                "{} connection {connection}: {}",
                diag.paint("warning:", "33"),
                crate::diag::warnings::human(warning)
            ),
            json!({ "connection": connection, "code": warning.code, "byte_offset": warning.byte_offset }),
        ),
        ServerEvent::Message {
            connection,
            bytes,
            ack_code,
            duplicate,
            commit_ms,
            control_id,
            message_type,
        } => {
            let mut human = String::new();
            if !diag.json() {
                message_line(&mut human, event);
            }
            // One per message: the JSON fields are built only when they are written.
            let fields = if diag.json() {
                json!({
                    "connection": connection,
                    "bytes": bytes,
                    "ack_code": ack_code,
                    "duplicate": duplicate,
                    "commit_ms": commit_ms.map(|ms| (ms * 1000.0).round() / 1000.0),
                    "control_id": header_text(control_id),
                    "message_type": header_text(message_type),
                })
            } else {
                Value::Null
            };
            ("message", human, fields)
        }
        ServerEvent::Nack {
            connection,
            ack_code,
            why,
        } => (
            "nack",
            format!(
                "connection {connection}: answered {ack_code} ({}{})",
                why.as_str(),
                why.detail().map_or(String::new(), |d| format!(", {d}"))
            ),
            json!({
                "connection": connection,
                "ack_code": ack_code,
                "reason": why.as_str(),
                "detail": why.detail(),
            }),
        ),
        ServerEvent::SinkFailed { connection, detail } => (
            "sink_error",
            format!("connection {connection}: commit failed: {detail}"),
            json!({ "connection": connection, "detail": detail }),
        ),
        ServerEvent::SecurityWarning { code } => (
            "security_warning",
            format!("{} {code}", diag.paint("warning:", "1;33")),
            json!({ "code": code }),
        ),
        ServerEvent::StoreLost { detail } => (
            "store_lost",
            format!(
                "{} the database link is lost ({detail}): messages are answered AE until it is back; reconnecting",
                diag.paint("warning:", "33")
            ),
            json!({ "detail": detail }),
        ),
        ServerEvent::StoreRestored { down_ms, refused } => (
            "store_restored",
            format!(
                "the database link is back after {}.{:01} s; {} answered AE meanwhile",
                down_ms / 1000,
                down_ms % 1000 / 100,
                crate::diag::count(*refused, "message")
            ),
            json!({ "down_ms": down_ms, "refused": refused }),
        ),
        _ => return None,
    })
}

/// The final counters, one event (with the test double's seed, when one ran).
pub fn stats(diag: &Diag, stats: &StatsSnapshot, seed: Option<u64>) {
    let mut fields = serde_json::to_value(stats).unwrap_or(Value::Null);
    if let (Some(seed), Value::Object(map)) = (seed, &mut fields) {
        // A string: JSON readers that hold numbers as doubles (jq) would round a u64.
        map.insert("seed".into(), json!(seed.to_string()));
    }
    let human = || stats_lines(stats, seed);
    crate::diag::write_line(&Stamp::now().line(diag, "stats", human, fields));
}

/// The final counters for people: a few labelled lines, zero counts left out.
fn stats_lines(s: &StatsSnapshot, seed: Option<u64>) -> String {
    let listed = |counts: &std::collections::BTreeMap<&'static str, u64>| {
        if counts.is_empty() {
            return "none".to_string();
        }
        let items: Vec<String> = counts.iter().map(|(k, n)| format!("{k} {n}")).collect();
        items.join(", ")
    };
    let nonzero = |items: &[(&str, u64)]| {
        let items: Vec<String> = items
            .iter()
            .filter(|(_, n)| *n > 0)
            .map(|(k, n)| format!("{k} {n}"))
            .collect();
        if items.is_empty() {
            "none".to_string()
        } else {
            items.join(", ")
        }
    };
    let mut lines = vec![
        format!(
            "stopped: {} received over {}",
            crate::diag::count(s.messages, "message"),
            crate::diag::count(s.connections_accepted, "connection")
        ),
        format!(
            "  messages: {}",
            nonzero(&[
                ("committed", s.committed),
                ("duplicates", s.duplicates),
                ("rejected", s.rejected),
                ("refused", s.refused),
                ("commit failed", s.commit_failed),
                ("inbound ACKs", s.inbound_acks),
                ("unanswered", s.unanswered),
            ])
        ),
        format!("  ACKs: {}", listed(&s.acks_by_code)),
    ];
    if !s.nacks_by_reason.is_empty() {
        lines.push(format!("  negative ACKs: {}", listed(&s.nacks_by_reason)));
    }
    lines.push(format!(
        "  connections: {}; closed: {}",
        nonzero(&[
            ("refused", s.connections_refused),
            ("failed handshakes", s.accept_failed),
            ("open", s.connections_open),
        ]),
        listed(&s.closed_by_cause)
    ));
    if !s.warnings_by_code.is_empty() {
        lines.push(format!("  warnings: {}", listed(&s.warnings_by_code)));
    }
    lines.push(format!("  bytes: {} in, {} out", s.bytes_in, s.bytes_out));
    if let Some(g) = s.commit_groups.as_ref().filter(|g| g.groups > 0) {
        let sizes: Vec<String> = g
            .histogram()
            .iter()
            .map(|(size, n)| format!("{size}: {n}"))
            .collect();
        lines.push(format!(
            "  commit groups: {} of {:.1} rows on average (rows per group {})",
            g.groups,
            g.mean(),
            sizes.join(", ")
        ));
    }
    if let Some(seed) = seed {
        lines.push(format!("  test-double seed: {seed}"));
    }
    lines.join("\n")
}

#[cfg(test)]
mod tests;
