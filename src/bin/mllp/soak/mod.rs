//! `mllp soak`: `args` holds the flags and makes the plan, `run` drives the library's run and
//! judges the report into an exit code, `view` is the live view on stderr, `render` the report
//! at the end, `words` the library's refusals in flag words.

mod args;
mod render;
mod run;
mod view;
mod words;

pub use args::SoakArgs;
pub use run::run;
