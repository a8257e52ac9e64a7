//! `send --dry-run`: every input read and checked, then listed as it would be sent (source,
//! MSH-10, MSH-9, bytes) and counted. No connection is opened.

use super::args::SendArgs;
use crate::diag::{count, Diag, Fatal};
use crate::exit::Exit;
use crate::output::send::{DryRunMessage, DryRunRecord};
use mllp::input::{ControlIdCount, InputSet, SharedControlId};
use serde_json::json;

/// List what would be sent, on stdout; 0 when all of it could be, 2 when reading failed.
pub fn list(mut set: InputSet, args: &SendArgs, diag: &Diag, width: usize) -> anyhow::Result<Exit> {
    let (mut messages, mut bytes) = (0u64, 0u64);
    let mut ids = ControlIdCount::default();
    for message in set.messages() {
        let message = match message {
            Ok(message) => message,
            Err(err) => {
                return Ok(Fatal::new(Exit::Usage, super::run::refusal(&err))
                    .then("nothing was sent (--dry-run)")
                    .report())
            }
        };
        ids.observe(&message);
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
    for shared in ids.shared() {
        warn_shared(diag, &shared);
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
