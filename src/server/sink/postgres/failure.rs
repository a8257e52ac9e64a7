//! What went wrong talking to PostgreSQL, in words and in class: whether trying later may work
//! (the server could not be reached, was starting or stopping, or had no room) or not (it
//! refused these settings: authentication, a missing database or role, grants, TLS trust).
//! A server's error is told by its SQLSTATE, the condition's name and the names of the objects
//! it carries, never by its message or detail text: a trigger or a constraint can put row
//! values there. A trigger can set the object names too, so a name is shown only when it is one
//! of the table's own, as read from the catalog; any other is withheld.

use crate::cause::{classify_io, Cause};
use std::collections::BTreeSet;
use std::error::Error as _;
use std::sync::Mutex;

/// The names an error may show: the table's schema, name, columns, their types, constraints
/// and indexes, as the catalog gave them.
static KNOWN: Mutex<BTreeSet<String>> = Mutex::new(BTreeSet::new());

/// Add `names`, read from the catalog, to those an error may show.
pub(super) fn learn(names: impl IntoIterator<Item = String>) {
    KNOWN
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .extend(names);
}

/// `name` as shown: itself when the catalog knows it, else withheld.
fn shown(name: &str) -> String {
    let known = KNOWN.lock().unwrap_or_else(|p| p.into_inner());
    if known.contains(name) {
        printable(name)
    } else {
        "(name withheld)".to_string()
    }
}

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
            what: server_error(db),
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

/// A server's error in words of our own: `23505 unique_violation (table messages, constraint
/// one_id)`; a name the catalog does not know is `(name withheld)`.
pub(super) fn server_error(db: &tokio_postgres::error::DbError) -> String {
    let code = db.code().code();
    let mut what = match condition(code) {
        Some(name) => format!("{code} {name}"),
        None => code.to_string(),
    };
    let names = [
        ("schema", db.schema()),
        ("table", db.table()),
        ("column", db.column()),
        ("constraint", db.constraint()),
        ("type", db.datatype()),
    ];
    let named: Vec<String> = names
        .iter()
        .filter_map(|(what, name)| Some(format!("{what} {}", shown(name.as_ref()?))))
        .collect();
    if !named.is_empty() {
        what.push_str(&format!(" ({})", named.join(", ")));
    }
    what
}

/// An object's name as shown: at most 63 printable characters (the server's own limit).
fn printable(name: &str) -> String {
    name.chars().filter(|c| !c.is_control()).take(63).collect()
}

/// The condition name of the SQLSTATEs a listener meets; others are shown by code alone.
fn condition(code: &str) -> Option<&'static str> {
    Some(match code {
        "08000" => "connection_exception",
        "08003" => "connection_does_not_exist",
        "08006" => "connection_failure",
        "08001" => "sqlclient_unable_to_establish_sqlconnection",
        "08004" => "sqlserver_rejected_establishment_of_sqlconnection",
        "08P01" => "protocol_violation",
        "0A000" => "feature_not_supported",
        "22001" => "string_data_right_truncation",
        "22021" => "character_not_in_repertoire",
        "22P02" => "invalid_text_representation",
        "23000" => "integrity_constraint_violation",
        "23502" => "not_null_violation",
        "23503" => "foreign_key_violation",
        "23505" => "unique_violation",
        "23514" => "check_violation",
        "23P01" => "exclusion_violation",
        "25006" => "read_only_sql_transaction",
        "25P02" => "in_failed_sql_transaction",
        "28000" => "invalid_authorization_specification",
        "28P01" => "invalid_password",
        "3D000" => "invalid_catalog_name",
        "3F000" => "invalid_schema_name",
        "40001" => "serialization_failure",
        "40P01" => "deadlock_detected",
        "42501" => "insufficient_privilege",
        "42601" => "syntax_error",
        "42703" => "undefined_column",
        "42704" => "undefined_object",
        "42P01" => "undefined_table",
        "42P07" => "duplicate_table",
        "42804" => "datatype_mismatch",
        "53100" => "disk_full",
        "53200" => "out_of_memory",
        "53300" => "too_many_connections",
        "54000" => "program_limit_exceeded",
        "55P03" => "lock_not_available",
        "55006" => "object_in_use",
        "57014" => "query_canceled",
        "57P01" => "admin_shutdown",
        "57P02" => "crash_shutdown",
        "57P03" => "cannot_connect_now",
        "58030" => "io_error",
        "P0001" => "raise_exception",
        "XX000" => "internal_error",
        "XX001" => "data_corrupted",
        _ => return None,
    })
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
