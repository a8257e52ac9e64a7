//! `send --check-hl7`: every message checked as `check` checks it before the first byte is
//! sent; any error refuses the whole run.

use super::render::line;
use crate::diag::{Diag, Fatal};
use crate::exit::Exit;
use mllp::hl7::{Checker, Severity};
use mllp::input::InputSet;

/// Each message's errors on stderr and the refusal, or `None` when no message has one.
/// Warnings do not refuse and are not shown (`mllp check` lists them).
pub fn refuse_ill_formed(set: &mut InputSet, diag: &Diag) -> Option<Exit> {
    let checker = Checker::default();
    let mut refused = 0u64;
    for message in set.messages().filter_map(Result::ok) {
        let errors: Vec<_> = checker
            .check(&message.payload)
            .into_iter()
            .filter(|f| f.severity == Severity::Error)
            .collect();
        if errors.is_empty() {
            continue;
        }
        refused += 1;
        let label = message.label();
        for finding in &errors {
            diag.event(
                "hl7_error",
                || line(&label, finding, None, |t, _| t.to_string()),
                serde_json::json!({
                    "source": label,
                    "message": finding.message,
                    "path": finding.at,
                    "code": finding.code.as_str(),
                    "text": finding.what,
                }),
            );
        }
    }
    (refused > 0).then(|| {
        Fatal::new(
            Exit::Usage,
            format!(
                "--check-hl7: {} not well formed (listed above; mllp check -v shows the values)",
                match refused {
                    1 => "1 message is".to_string(),
                    n => format!("{n} messages are"),
                }
            ),
        )
        .then("nothing was sent")
        .report()
    })
}
