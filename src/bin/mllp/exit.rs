//! Exit codes at the process edge: the codes, their precedence and their text ([`codes`]), and
//! the `ExitCode` the process ends with.

mod codes;

pub use codes::{exit_for, help, meanings, precedence, Exit, For};
pub use mllp::outcome::Observed;

/// The status the process ends with.
pub fn status(exit: Exit) -> std::process::ExitCode {
    std::process::ExitCode::from(exit.code())
}
