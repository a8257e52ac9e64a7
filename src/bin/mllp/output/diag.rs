//! The stderr events every command shares under `--log-format json`.

use mllp::cause::Cause;
use serde::Serialize;

/// One shared diagnostic event; `event` is the variant's name in snake case.
#[derive(Debug, Clone, Serialize)]
#[serde(tag = "event", rename_all = "snake_case")]
pub enum Diagnostic<'a> {
    /// The error a command ends on, in place of `mllp: error: ...`.
    Error {
        /// What went wrong, in one line.
        message: &'a str,
        /// The code the process exits with.
        exit_code: i32,
        /// The stable cause, where one names the failure (a refused bind's `permission-denied`).
        #[serde(skip_serializing_if = "Option::is_none")]
        cause: Option<Cause>,
        /// The stable warning code, where one names it (`MLLP_BIND_ALL_INTERFACES`).
        #[serde(skip_serializing_if = "Option::is_none")]
        code: Option<&'a str>,
        /// A refused command line: the parser's kind of error (`unknown-argument`, ...).
        #[serde(skip_serializing_if = "Option::is_none")]
        kind: Option<&'a str>,
    },
    /// A bug: the panic's message.
    Panic {
        /// The panic as Rust reports it.
        message: &'a str,
    },
    /// A security warning, said even under `--quiet`.
    SecurityWarning {
        /// `MLLP_TLS_VERIFY_DISABLED` or `MLLP_BIND_ALL_INTERFACES`.
        code: &'a str,
        /// What it means, in one line.
        message: &'a str,
    },
    /// Stdout stopped taking writes for a reason other than the reader leaving.
    StdoutError {
        /// The write error.
        message: &'a str,
    },
    /// Where `--metrics` serves the Prometheus exporter.
    MetricsListening {
        /// The bound address, `IP:PORT`.
        addr: String,
    },
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::output::line;

    #[test]
    fn each_event_keeps_its_field_names() {
        let error = Diagnostic::Error {
            message: "m",
            exit_code: 2,
            cause: Some(Cause::PermissionDenied),
            code: Some("MLLP_BIND_ALL_INTERFACES"),
            kind: Some("unknown-argument"),
        };
        assert_eq!(
            line(&error),
            r#"{"cause":"permission-denied","code":"MLLP_BIND_ALL_INTERFACES","event":"error","exit_code":2,"kind":"unknown-argument","message":"m"}"#
        );
        let bare = Diagnostic::Error {
            message: "m",
            exit_code: 5,
            cause: None,
            code: None,
            kind: None,
        };
        assert_eq!(
            line(&bare),
            r#"{"event":"error","exit_code":5,"message":"m"}"#
        );
        assert_eq!(
            line(&Diagnostic::Panic { message: "p" }),
            r#"{"event":"panic","message":"p"}"#
        );
        let warning = Diagnostic::SecurityWarning {
            code: "MLLP_TLS_VERIFY_DISABLED",
            message: "m",
        };
        assert_eq!(
            line(&warning),
            r#"{"code":"MLLP_TLS_VERIFY_DISABLED","event":"security_warning","message":"m"}"#
        );
        assert_eq!(
            line(&Diagnostic::StdoutError { message: "m" }),
            r#"{"event":"stdout_error","message":"m"}"#
        );
        let metrics = Diagnostic::MetricsListening {
            addr: "127.0.0.1:9".into(),
        };
        assert_eq!(
            line(&metrics),
            r#"{"addr":"127.0.0.1:9","event":"metrics_listening"}"#
        );
    }
}
