//! `mllp listen`: `args` holds the flags and validates them into a server configuration (with
//! `setup` for the sink and the reply policy), `run` serves until a signal and decides the exit
//! code, `render` shows the server's events and statistics on stderr, `memory` sets the
//! process's allocator and threads for serving.

pub(crate) mod args;
mod dial;
mod memory;
pub(crate) mod render;
mod run;
mod setup;

pub use args::ListenArgs;
pub(crate) use dial::{run_server, wildcard_refused};
pub use run::run;
pub(crate) use run::{bind_metrics, serve_on_runtime, watch_signals};
