//! What went wrong talking to PostgreSQL, in words and in class: whether trying later may work
//! (the server could not be reached, was starting or stopping, or had no room) or not (it
//! refused these settings: authentication, a missing database or role, grants, TLS trust).

use crate::cause::{classify_io, Cause};
use std::error::Error as _;

/// One failure: what happened (never a password: errors name the server, not the URL), whether
/// it is worth trying again, and the cause, where one names it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Failure {
    /// What happened, in words.
    pub what: String,
    /// Worth trying again: the database may come back.
    pub transient: bool,
    /// The cause, when one names it.
    pub cause: Option<Cause>,
}

impl Failure {
    pub(super) fn permanent(what: String) -> Failure {
        Failure {
            what,
            transient: false,
            cause: None,
        }
    }
}

/// SQLSTATE classes and codes that pass: connection exceptions (08), insufficient resources
/// (53: too many connections, out of memory or disk), operator intervention (57: shutting down,
/// starting up), system errors (58), and transaction rollbacks (40: serialization, deadlock).
fn transient_state(code: &str) -> bool {
    ["08", "53", "57", "58", "40"]
        .iter()
        .any(|class| code.starts_with(class))
}

/// Classify and describe `e`, with the reason tokio-postgres keeps in its source (its own text
/// says only "error connecting to server").
pub(super) fn of(e: &tokio_postgres::Error) -> Failure {
    if let Some(db) = e.as_db_error() {
        let code = db.code().code();
        return Failure {
            what: format!("{} ({code})", db.message()),
            transient: transient_state(code),
            cause: None,
        };
    }
    let mut what = e.to_string();
    let mut io = None;
    let mut tls = None;
    let mut source = e.source();
    while let Some(inner) = source {
        what.push_str(": ");
        what.push_str(&inner.to_string());
        if let Some(err) = inner.downcast_ref::<std::io::Error>() {
            io.get_or_insert(err.kind());
            if let Some(r) = err
                .get_ref()
                .and_then(|r| r.downcast_ref::<rustls::Error>())
            {
                tls.get_or_insert(r.clone());
            }
        }
        if let Some(r) = inner.downcast_ref::<rustls::Error>() {
            tls.get_or_insert(r.clone());
        }
        source = inner.source();
    }
    let handshake = what.starts_with("error performing TLS handshake");
    if tls.is_some() || handshake {
        let cause = match tls {
            Some(rustls::Error::InvalidCertificate(_)) => Cause::TlsVerify,
            _ => Cause::TlsHandshake,
        };
        return Failure {
            what,
            transient: false,
            cause: Some(cause),
        };
    }
    if what.starts_with("authentication error") || what.starts_with("invalid configuration") {
        return Failure::permanent(what);
    }
    if what.starts_with("timeout waiting for server") {
        return Failure {
            what,
            transient: true,
            cause: Some(Cause::ConnectTimeout),
        };
    }
    let cause = io.map(|kind| classify_io(&std::io::Error::from(kind)));
    Failure {
        what,
        transient: cause.is_none_or(|c| c.class() == crate::cause::Class::Transient),
        cause,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn server_states_that_pass_are_transient_and_refusals_are_not() {
        for code in ["08006", "53300", "57P01", "57P03", "58030", "40P01"] {
            assert!(transient_state(code), "{code}");
        }
        // Authentication, no such database, no such role, no privilege, a read-only standby.
        for code in ["28P01", "28000", "3D000", "42501", "25006", "42P01"] {
            assert!(!transient_state(code), "{code}");
        }
    }
}
