//! `mllp deid`: `args` holds the flags, `run` loads the key and policy and de-identifies each
//! input through the library into its output, `render` writes the report.

mod args;
mod output;
mod render;
mod run;

pub use args::DeidArgs;
pub use run::run;
