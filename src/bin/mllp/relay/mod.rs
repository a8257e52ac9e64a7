//! `mllp relay`: a receiver and a sender joined. `args` holds the flags, `plan` checks them and
//! prepares the parts, `run` builds the server and the upstream client from the library's cores
//! and serves until a signal, `lines` starts and ends what is said of the links, `render` says
//! what the upstream link does, `status` draws the live view on a terminal, `mirror` the shadow
//! engine's flags and lines.

mod args;
mod lines;
mod mirror;
mod plan;
mod render;
mod run;
mod status;

pub use args::RelayArgs;
pub use run::run;
