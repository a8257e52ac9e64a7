//! `mllp show`: `args` holds the flags, `run` reads the inputs a message at a time and decides
//! the exit code, `render` writes each message as an outline, a line of values or JSON.

mod args;
mod render;
mod run;

pub use args::ShowArgs;
pub use run::run;
