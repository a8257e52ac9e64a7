//! `send --dry-run`: every input read and checked, then listed as it would be sent (source,
//! MSH-10, MSH-9, bytes) and counted, in bounded memory: one message at a time, the control IDs
//! counted in a temporary file. No connection is opened.

use super::args::SendArgs;
use crate::diag::{count, Diag, Fatal};
use crate::exit::Exit;
use crate::output::send::{DryRunMessage, DryRunRecord};
use mllp::input::{InputSet, SharedControlId, SharedControlIds};
use serde_json::json;

/// List what would be sent, on stdout; 0 when all of it could be, 2 when reading failed.
pub fn list(mut set: InputSet, args: &SendArgs, diag: &Diag, width: usize) -> anyhow::Result<Exit> {
    let (mut messages, mut bytes) = (0u64, 0u64);
    let mut ids = SharedControlIds::new()
        .map_err(|e| uncounted(diag, &e))
        .ok();
    for message in set.messages() {
        let message = match message {
            Ok(message) => message,
            Err(err) => {
                return Ok(Fatal::new(Exit::Usage, super::inputs::refusal(&err))
                    .then("nothing was sent (--dry-run)")
                    .report())
            }
        };
        if let Some(Err(e)) = ids.as_mut().map(|count| count.observe(&message)) {
            uncounted(diag, &e);
            ids = None;
        }
        let listed = DryRunMessage::new(&message);
        messages += 1;
        bytes += listed.bytes;
        let line = if args.json {
            crate::output::line(&DryRunRecord::Message(listed))
        } else {
            format!(
                "{:<width$}  {:<12}  {:<12}  {:>7} bytes",
                listed.source,
                listed.control_id.as_deref().unwrap_or("-"),
                listed.message_type.as_deref().unwrap_or("-"),
                listed.bytes,
            )
        };
        if crate::stdout::line(line).is_err() {
            return Ok(Exit::Success);
        }
    }
    if let Some(Err(e)) = ids.map(|count| count.shared(|shared| warn_shared(diag, &shared))) {
        uncounted(diag, &e);
    }
    let summary = if args.json {
        crate::output::line(&DryRunRecord::summary(messages, bytes))
    } else {
        format!(
            "{}, {}: would be sent; nothing was sent (--dry-run)",
            count(messages, "message"),
            count(bytes, "byte")
        )
    };
    let _ = crate::stdout::line(summary);
    Ok(Exit::Success)
}

/// The shared control IDs cannot be counted (no room for the temporary file): the listing goes
/// on without that warning.
fn uncounted(diag: &Diag, error: &std::io::Error) {
    diag.event(
        "warning",
        || {
            format!(
                "{} cannot look for shared control IDs: {error}",
                diag.paint("warning:", "33"),
            )
        },
        json!({ "code": "MLLP_CONTROL_IDS_UNCOUNTED", "error": error.to_string() }),
    );
}

/// Several messages of the input carry one control ID: a receiver that de-duplicates on MSH-10
/// keeps the first only, and their ACKs cannot be told apart.
fn warn_shared(diag: &Diag, shared: &SharedControlId) {
    let more = shared.messages - shared.first.len() as u64;
    let named = match more {
        0 => shared.first.join(", "),
        n => format!("{}, and {n} more", shared.first.join(", ")),
    };
    diag.event(
        "warning",
        || {
            format!(
                "{} control ID {} is shared by {} messages ({named}): a receiver that \
                 de-duplicates on MSH-10 keeps only the first, and their ACKs cannot be told \
                 apart; --fresh-control-ids gives each its own",
                diag.paint("warning:", "33"),
                shared.control_id,
                shared.messages,
            )
        },
        json!({
            "code": "MLLP_SHARED_CONTROL_ID",
            "control_id": shared.control_id,
            "messages": shared.messages,
            "first": shared.first,
        }),
    );
}
