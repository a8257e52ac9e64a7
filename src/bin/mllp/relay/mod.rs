//! `mllp relay`: a receiver and a sender joined. `args` holds the flags, `run` builds the
//! server and the upstream client from the library's cores and serves until a signal, `render`
//! says what the upstream link does, `status` draws the live view on a terminal, `mirror` the shadow engine's flags and lines.

mod args;
mod mirror;
mod render;
mod run;
mod status;

pub use args::RelayArgs;
pub use run::run;
