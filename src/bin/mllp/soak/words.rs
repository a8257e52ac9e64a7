//! Soak's refusals in the command's words: the library names the setting, the command the flag
//! that sets it (`--connections`, `--allow-synthetic`, ...).

use mllp::soak::{PlanError, SoakError};
use std::fmt;

/// A library error said in flag words; its causes stay the library error's own.
#[derive(Debug)]
pub struct Worded<E> {
    text: String,
    inner: E,
}

impl<E: std::error::Error> fmt::Display for Worded<E> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text)
    }
}

impl<E: std::error::Error + 'static> std::error::Error for Worded<E> {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        self.inner.source()
    }
}

/// A plan the library refuses, named by its flag.
pub fn plan(inner: PlanError) -> Worded<PlanError> {
    let text = plan_text(&inner);
    Worded { text, inner }
}

/// A run that could not start, named by its flag where one is at fault.
pub fn soak(inner: SoakError) -> Worded<SoakError> {
    let text = match &inner {
        SoakError::Plan(p) => plan_text(p),
        SoakError::OutDir { dir, .. } => {
            format!("--out-dir {}: not a writable directory", dir.display())
        }
        other => other.to_string(),
    };
    Worded { text, inner }
}

fn plan_text(e: &PlanError) -> String {
    match e {
        PlanError::Connections => format!(
            "--connections must be from 1 to {}",
            mllp::soak::MAX_CONNECTIONS
        ),
        PlanError::Messages => "--messages must be at least 1".into(),
        PlanError::Window => "--window must be at least 1".into(),
        PlanError::NoTemplate => "--template: at least one message is needed".into(),
        PlanError::Synthetic => "against a real --host the built-in synthetic message needs \
                                 --allow-synthetic (fake patients must not reach a production \
                                 engine by accident), or give --template FILE"
            .into(),
        PlanError::NackNeedsEmbedded => "--chaos nack needs the embedded listener: the proxy in \
                                         front of a real --host forwards bytes and cannot forge \
                                         the peer's ACKs"
            .into(),
        PlanError::Backups => "a second --host needs no --chaos: the fault proxy stands in \
                               front of one host"
            .into(),
        other => other.to_string(),
    }
}
