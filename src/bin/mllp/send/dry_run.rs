//! `send --dry-run`: every input read and checked, then listed as it would be sent (source,
//! MSH-10, MSH-9, bytes) and counted. No connection is opened.

use super::SendArgs;
use crate::diag::{count, Fatal};
use crate::exit::Exit;
use mllp::input::InputSet;
use serde_json::json;

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
        let scan = mllp::hl7::scan(&message.payload);
        let field = |f: Option<&[u8]>| {
            f.filter(|v| !v.is_empty())
                .map(|v| String::from_utf8_lossy(v).into_owned())
        };
        let control_id = field(scan.msh.as_ref().and_then(|m| m.control_id()));
        let message_type = field(scan.msh.as_ref().and_then(|m| m.message_type()));
        let label = format!("{}#{}", message.source, message.index);
        let size = message.payload.len() as u64;
        messages += 1;
        bytes += size;
        let line = if args.json {
            json!({
                "type": "message",
                "source": label,
                "control_id": control_id,
                "message_type": message_type,
                "bytes": size,
            })
            .to_string()
        } else {
            format!(
                "{label:<width$}  {:<12}  {:<12}  {size:>7} bytes",
                control_id.as_deref().unwrap_or("-"),
                message_type.as_deref().unwrap_or("-"),
            )
        };
        if crate::stdout::line(line).is_err() {
            return Ok(Exit::Success);
        }
    }
    let summary = if args.json {
        json!({
            "type": "summary",
            "dry_run": true,
            "messages": messages,
            "bytes": bytes,
            "exit_code": Exit::Success.code(),
        })
        .to_string()
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
