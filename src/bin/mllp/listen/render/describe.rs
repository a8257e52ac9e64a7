//! Each server event's name, human line and JSON fields, at the verbosity asked for.

use super::{header_text, message_line, unsafe_on_terminal, Answers};
use crate::diag::Diag;
use mllp::server::EXEC_STDERR_LINE_MAX;
use mllp::server::{ConnectionId, ServerEvent};
use mllp::tls::AcceptedTls;
use serde_json::{json, Value};

/// An event's name, human line and JSON fields; `None` when this verbosity hides it.
pub(super) fn describe(
    diag: &Diag,
    event: &ServerEvent,
    answers: Answers,
) -> Option<(&'static str, String, Value)> {
    if let Some(line) = super::dial::describe(diag, event) {
        return Some(line);
    }
    if let ServerEvent::Listening { addr } = event {
        return Some((
            "listening",
            format!("listening on {addr}"),
            json!({ "addr": addr.to_string() }),
        ));
    }
    if diag.quiet && !shown_when_quiet(event) {
        return None;
    }
    connection(diag, event)
        .or_else(|| message(diag, event, answers))
        .or_else(|| store(diag, event))
}

/// Under --quiet only the address, security warnings, accept errors, the store's state, the
/// exec command's own stderr and the final stats are shown.
fn shown_when_quiet(event: &ServerEvent) -> bool {
    matches!(
        event,
        ServerEvent::SecurityWarning { .. }
            | ServerEvent::AcceptError { .. }
            | ServerEvent::ExecStderr { .. }
            | ServerEvent::StoreLost { .. }
            | ServerEvent::StoreRestored { .. }
            | ServerEvent::StoreError { .. }
    )
}

/// A connection's life: opened, closed, its handshake or accept failing, its warnings.
fn connection(diag: &Diag, event: &ServerEvent) -> Option<(&'static str, String, Value)> {
    Some(match event {
        ServerEvent::ConnectionOpened {
            connection,
            peer,
            tls,
        } => opened(*connection, peer, tls.as_deref()),
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
            hint,
        } => {
            let hint = hint.as_ref().map(crate::hint::words);
            let mut line = format!(
                "connection {connection} from {peer}: TLS handshake failed ({cause}): {detail}"
            );
            if let Some(hint) = &hint {
                line.push_str("; hint: ");
                line.push_str(hint);
            }
            (
                "tls_client_error",
                line,
                json!({
                    "connection": connection,
                    "peer": &**peer,
                    "cause": cause,
                    "detail": detail,
                    "hint": hint,
                }),
            )
        }
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
        _ => return None,
    })
}

/// A message and what it was answered.
fn message(
    diag: &Diag,
    event: &ServerEvent,
    answers: Answers,
) -> Option<(&'static str, String, Value)> {
    Some(match event {
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
                message_line(&mut human, event, answers);
            }
            // One per message: the JSON fields are built only when they are written.
            let fields = if diag.json() {
                let ms = commit_ms.map(|ms| (ms * 1000.0).round() / 1000.0);
                let mut fields = json!({
                    "connection": connection,
                    "bytes": bytes,
                    "ack_code": ack_code,
                    "duplicate": duplicate,
                    "control_id": header_text(control_id),
                    "message_type": header_text(message_type),
                });
                let took = match answers {
                    Answers::Committed => "commit_ms",
                    Answers::PassedOn => "upstream_ms",
                };
                fields[took] = json!(ms);
                fields
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
            match answers {
                Answers::Committed => format!("connection {connection}: commit failed: {detail}"),
                // The detail says what the upstream did.
                Answers::PassedOn => format!("connection {connection}: {detail}"),
            },
            json!({ "connection": connection, "detail": detail }),
        ),
        _ => return None,
    })
}

/// The security warnings, the store's state and the exec command's stderr.
fn store(diag: &Diag, event: &ServerEvent) -> Option<(&'static str, String, Value)> {
    Some(match event {
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
        ServerEvent::StoreError { detail } => (
            "store_error",
            format!("{} store: {detail}", diag.paint("warning:", "33")),
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
        ServerEvent::ExecStderr {
            connection,
            pid,
            line,
            truncated,
        } => {
            let shown: String = line
                .chars()
                .map(|c| if unsafe_on_terminal(c) { '?' } else { c })
                .collect();
            let cut = if *truncated {
                format!(" [cut at {EXEC_STDERR_LINE_MAX} bytes]")
            } else {
                String::new()
            };
            (
                "exec_stderr",
                format!("exec[{pid}] (connection {connection}): {shown}{cut}"),
                json!({ "connection": connection, "pid": pid, "line": shown, "truncated": truncated }),
            )
        }
        _ => return None,
    })
}

/// `connection_opened`: who connected, and what the TLS handshake established.
fn opened(
    connection: ConnectionId,
    peer: &str,
    tls: Option<&AcceptedTls>,
) -> (&'static str, String, Value) {
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
            "peer": peer,
            "tls": tls,
            "subject": subject,
            "authorized": authorized,
        }),
    )
}
