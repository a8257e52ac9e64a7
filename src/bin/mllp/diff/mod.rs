//! `mllp diff`: `args` holds the flags, `run` reads the two sides (the smaller indexed) and
//! pairs them through the library, `render` writes each finding and the summary.

mod args;
mod render;
mod run;

pub use args::DiffArgs;
pub use run::run;
