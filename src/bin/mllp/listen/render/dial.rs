//! The lines of a listener that dials out: where it connects, each failed connect with its
//! cause and class, and each connection made.

use crate::diag::Diag;
use mllp::server::ServerEvent;
use serde_json::{json, Value};

/// A dialling event's name, human line and JSON fields; `None` for any other event, or one
/// `--quiet` hides. Where it dials and why a connect failed are said even under `--quiet`.
pub(super) fn describe(diag: &Diag, event: &ServerEvent) -> Option<(&'static str, String, Value)> {
    Some(match event {
        ServerEvent::Dialling { target } => (
            "dialling",
            format!("dialling {target}"),
            json!({ "target": &**target }),
        ),
        ServerEvent::DialFailed {
            target,
            attempt,
            cause,
            phase,
            detail,
            retry_in,
        } => {
            let class = cause.class();
            let retry_ms = retry_in.as_millis() as u64;
            (
                "dial_failed",
                format!(
                    "{} cannot connect to {target} ({cause}, {class}, attempt {attempt}): \
                     {detail}; retrying in {}",
                    diag.paint("warning:", "33"),
                    humantime::format_duration(std::time::Duration::from_millis(retry_ms)),
                ),
                json!({
                    "target": &**target,
                    "attempt": attempt,
                    "cause": cause,
                    "class": class,
                    "phase": phase,
                    "detail": detail,
                    "retry_in_ms": retry_ms,
                }),
            )
        }
        ServerEvent::Dialled { .. } if diag.quiet => return None,
        ServerEvent::Dialled {
            connection,
            target,
            tls,
        } => (
            "dialled",
            match tls {
                Some(tls) => format!(
                    "connection {connection} dialled to {target} ({})",
                    tls.version
                ),
                None => format!("connection {connection} dialled to {target}"),
            },
            json!({ "connection": connection, "target": &**target, "tls": tls }),
        ),
        _ => return None,
    })
}
