//! The one integration test binary: shared helpers in `support`, one module per area.

mod support;

mod check;
mod cli;
mod client;
mod closed_stdout;
mod conformance;
mod crowd;
mod endpoints;
mod endurance;
mod framing;
mod hl7_ack;
mod interop;
mod listen;
mod log_json;
mod output_details;
mod probe;
mod proof;
mod relay;
mod send;
mod show;
mod soak;
mod terminal;
mod tls_matrix;
