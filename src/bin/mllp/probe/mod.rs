//! `mllp probe`: `args` holds the flags and makes the probe configuration, `run` drives the
//! library's probe loop and decides the exit code, `render` shows each result and the statistics.

mod args;
mod render;
mod run;

pub use args::ProbeArgs;
pub use run::run;
