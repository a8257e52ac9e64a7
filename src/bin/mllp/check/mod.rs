//! `mllp check`: `args` holds the flags and reads the profile, `run` checks the inputs a
//! message at a time and decides the exit code, `render` writes each finding and the summary;
//! `before_send` is the same check for `send --check-hl7`.

mod args;
mod before_send;
mod render;
mod run;

pub use args::CheckArgs;
pub use before_send::refuse_ill_formed;
pub use run::run;
