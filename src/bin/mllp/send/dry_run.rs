//! `send --dry-run`: every input read and checked, then listed as it would be sent (source,
//! MSH-10, MSH-9, bytes) and counted. No connection is opened.

use super::SendArgs;
use crate::diag::{count, Fatal};
use crate::exit::Exit;
use crate::output::send::{DryRunMessage, DryRunRecord};
use mllp::input::InputSet;

/// List what would be sent, on stdout; 0 when all of it could be, 2 when reading failed.
pub fn list(mut set: InputSet, args: &SendArgs, width: usize) -> anyhow::Result<Exit> {
    let (mut messages, mut bytes) = (0u64, 0u64);
    for message in set.messages() {
        let message = match message {
            Ok(message) => message,
            Err(err) => {
                return Ok(Fatal::new(Exit::Usage, err)
                    .then("nothing was sent (--dry-run)")
                    .report())
            }
        };
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
