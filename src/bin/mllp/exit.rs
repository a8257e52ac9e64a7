//! Exit codes at the process edge: the classification lives in `mllp::exit`; here it becomes
//! the `ExitCode` the process ends with.

pub use mllp::exit::{for_delivery, for_soak, help, meanings, precedence, Exit, For, Observed};

/// The status the process ends with.
pub fn status(exit: Exit) -> std::process::ExitCode {
    std::process::ExitCode::from(exit.code())
}
