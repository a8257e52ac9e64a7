//! `mllp send`, a straight line: `args` holds the flags, `plan` turns them into options without
//! I/O, `run` checks the input before the first byte (`inputs`), builds the client and runs it
//! over one link (`single`) or several (`links`), both through one event loop (`drive`);
//! `render` writes each message's result, `live` the progress and events on stderr, `summary`
//! the run's summary and exit code.

mod accept;
mod args;
mod drive;
mod dry_run;
mod failover;
mod inputs;
mod links;
mod live;
mod plan;
mod render;
mod replay;
mod run;
mod signals;
mod single;
mod summary;

pub use args::SendArgs;
pub use run::run;
