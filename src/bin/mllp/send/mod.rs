//! `mllp send`: `args` holds the flags, `run` checks the input before the first byte, builds
//! the client and runs it over one link (`single`) or several (`links`), both through one event
//! loop (`drive`); `render` writes each message's result, `live` the progress and events on
//! stderr, `summary` the run's summary.

mod accept;
mod args;
mod drive;
mod dry_run;
mod failover;
mod links;
mod live;
mod render;
mod replay;
mod run;
mod signals;
mod single;
mod summary;

pub use args::SendArgs;
pub use run::run;
