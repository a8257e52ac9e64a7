//! Server events to stderr lines (human or JSON), written from one thread in
//! batches so a busy server pays one write per batch, not one per event.

use crate::diag::Diag;
use mllp::server::{is_wildcard, ServerEvent, StatsSnapshot};
use serde_json::{json, Value};
use std::io::Write;
use tokio::sync::mpsc;

/// Events rendered per write.
const BATCH: usize = 512;

/// Render events until every sender is gone.
pub fn spawn(
    diag: Diag,
    mut rx: mpsc::Receiver<ServerEvent>,
    metrics: Option<std::net::SocketAddr>,
) -> std::io::Result<std::thread::JoinHandle<()>> {
    std::thread::Builder::new()
        .name("mllp-events".into())
        .spawn(move || {
            let mut text = String::new();
            // Taken many at a time: the channel's bookkeeping is then paid once per batch.
            let mut batch = Vec::with_capacity(BATCH);
            while rx.blocking_recv_many(&mut batch, BATCH) > 0 {
                text.clear();
                for event in batch.drain(..) {
                    if metrics.is_some() {
                        super::prom::record(&event);
                    }
                    push(&diag, &event, &mut text);
                    if let (ServerEvent::Listening { .. }, Some(addr)) = (&event, metrics) {
                        text.push_str(&crate::prometheus::announce_line(&diag, addr));
                        text.push('\n');
                        if is_wildcard(addr.ip()) {
                            let message = "serving metrics on every interface: any host that can reach this machine can read them";
                            push_wildcard_warning(&diag, message, &mut text);
                        }
                    }
                }
                let mut err = std::io::stderr().lock();
                let _ = err.write_all(text.as_bytes());
                let _ = err.flush();
            }
        })
}

fn push(diag: &Diag, event: &ServerEvent, text: &mut String) {
    if let ServerEvent::Message {
        connection,
        bytes,
        ack_code,
        duplicate,
        commit_ms,
    } = event
    {
        if !diag.json() && !diag.quiet {
            // The commonest line, written in place: the same text `describe` gives.
            use std::fmt::Write as _;
            let duplicate_text = if *duplicate { ", duplicate" } else { "" };
            let _ = match ack_code {
                Some(code) => writeln!(
                    text,
                    "connection {connection}: message {bytes} bytes, answered {code}{duplicate_text}, commit {commit_ms:.2} ms"
                ),
                None => writeln!(
                    text,
                    "connection {connection}: message {bytes} bytes, no ACK{duplicate_text}, commit {commit_ms:.2} ms"
                ),
            };
            return;
        }
    }
    if let Some((name, human, fields)) = describe(diag, event) {
        text.push_str(&diag.line(name, || human, fields));
        text.push('\n');
    }
    // Binding every interface is said right after the address, whatever the verbosity.
    if let ServerEvent::Listening { addr } = event {
        if is_wildcard(addr.ip()) {
            let message = "listening on every interface: any host that can reach this machine can send messages";
            push_wildcard_warning(diag, message, text);
        }
    }
}

/// The security warning for an address bound on every interface.
fn push_wildcard_warning(diag: &Diag, message: &str, text: &mut String) {
    let code = "MLLP_BIND_ALL_INTERFACES";
    let human = format!("{} {code}: {message}", diag.paint("warning:", "1;33"));
    text.push_str(&diag.line(
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
                ServerEvent::SecurityWarning { .. } | ServerEvent::AcceptError { .. }
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
                "{} connection {connection}: {warning}",
                diag.paint("warning:", "33")
            ),
            json!({ "connection": connection, "code": warning.code, "byte_offset": warning.byte_offset }),
        ),
        ServerEvent::Message {
            connection,
            bytes,
            ack_code,
            duplicate,
            commit_ms,
        } => {
            let duplicate_text = if *duplicate { ", duplicate" } else { "" };
            let human = match ack_code {
                _ if diag.json() => String::new(),
                Some(code) => format!(
                    "connection {connection}: message {bytes} bytes, answered {code}{duplicate_text}, commit {commit_ms:.2} ms"
                ),
                None => format!(
                    "connection {connection}: message {bytes} bytes, no ACK{duplicate_text}, commit {commit_ms:.2} ms"
                ),
            };
            // One per message: the JSON fields are built only when they are written.
            let fields = if diag.json() {
                json!({
                    "connection": connection,
                    "bytes": bytes,
                    "ack_code": ack_code,
                    "duplicate": duplicate,
                    "commit_ms": (commit_ms * 1000.0).round() / 1000.0,
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
        _ => return None,
    })
}

/// The final counters, one event (with the test double's seed, when one ran).
pub fn stats(diag: &Diag, stats: &StatsSnapshot, seed: Option<u64>) {
    let mut fields = serde_json::to_value(stats).unwrap_or(Value::Null);
    if let (Some(seed), Value::Object(map)) = (seed, &mut fields) {
        map.insert("seed".into(), json!(seed));
    }
    let human = format!("stats {fields}");
    diag.event("stats", || human, fields);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cli::LogFormat;
    use mllp::ack::{AckCode, NackReason};
    use mllp::cause::Cause;
    use mllp::server::NackWhy;

    fn line(format: LogFormat, event: &ServerEvent) -> String {
        let diag = Diag {
            format,
            verbose: 0,
            quiet: false,
            color: false,
            stdout_color: false,
        };
        let mut text = String::new();
        push(&diag, event, &mut text);
        text.trim_end().to_string()
    }

    #[test]
    fn a_failed_commit_is_handler_rejected_in_both_formats() {
        let nack = |why| ServerEvent::Nack {
            connection: 7,
            ack_code: AckCode::AE,
            why,
        };
        let failed = nack(NackWhy::CommitFailed);
        assert_eq!(
            line(LogFormat::Human, &failed),
            "connection 7: answered AE (handler-rejected, commit-failed)"
        );
        let json: Value = serde_json::from_str(&line(LogFormat::Json, &failed)).unwrap();
        assert_eq!(json["reason"], "handler-rejected");
        assert_eq!(json["detail"], "commit-failed");
        let rejected = nack(NackWhy::Reason(NackReason::HandlerRejected));
        assert_eq!(
            line(LogFormat::Human, &rejected),
            "connection 7: answered AE (handler-rejected)"
        );
        let json: Value = serde_json::from_str(&line(LogFormat::Json, &rejected)).unwrap();
        assert_eq!(json["detail"], Value::Null);
    }

    #[test]
    fn message_lines_in_both_formats() {
        let message = |ack_code, duplicate| ServerEvent::Message {
            connection: 3,
            bytes: 150,
            ack_code,
            duplicate,
            commit_ms: 0.1234,
        };
        assert_eq!(
            line(LogFormat::Human, &message(Some(AckCode::AA), false)),
            "connection 3: message 150 bytes, answered AA, commit 0.12 ms"
        );
        assert_eq!(
            line(LogFormat::Human, &message(None, true)),
            "connection 3: message 150 bytes, no ACK, duplicate, commit 0.12 ms"
        );
        // The in-place line is the one `describe` gives.
        let diag = Diag {
            format: LogFormat::Human,
            verbose: 0,
            quiet: false,
            color: false,
            stdout_color: false,
        };
        for event in [message(Some(AckCode::AE), true), message(None, false)] {
            let (_, human, _) = describe(&diag, &event).unwrap();
            assert_eq!(line(LogFormat::Human, &event), human);
        }
        let json: Value =
            serde_json::from_str(&line(LogFormat::Json, &message(Some(AckCode::CA), true)))
                .unwrap();
        assert_eq!(
            json,
            json!({
                "event": "message",
                "connection": 3,
                "bytes": 150,
                "ack_code": "CA",
                "duplicate": true,
                "commit_ms": 0.123,
            })
        );
    }

    #[test]
    fn a_tls_client_error_names_the_client() {
        let event = ServerEvent::AcceptFailed {
            connection: 3,
            peer: "10.0.0.9:4000".into(),
            cause: Cause::TlsHandshake,
            detail: "client did not present a certificate".into(),
        };
        assert_eq!(
            line(LogFormat::Human, &event),
            "connection 3 from 10.0.0.9:4000: TLS handshake failed (tls-handshake): client did \
             not present a certificate"
        );
        let json: Value = serde_json::from_str(&line(LogFormat::Json, &event)).unwrap();
        assert_eq!(json["event"], "tls_client_error");
        assert_eq!(json["detail"], "client did not present a certificate");
    }
}
