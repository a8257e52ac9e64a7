//! The one integration test binary: shared helpers in `support`, one module per area.

mod support;

mod cli;
mod client_flow;
mod client_link;
mod closed_stdout;
mod conformance;
mod crowd;
mod endpoints;
mod endurance;
mod framing;
mod hl7_ack;
mod interop;
mod listen;
mod listen_answers;
mod listen_guards;
mod listen_hosts;
mod listen_metrics;
mod listen_moved;
mod listen_output;
mod listen_postgres;
mod listen_store;
mod listen_tls;
mod listen_truth;
mod log_json;
mod output_details;
mod probe;
mod proof;
mod relay;
mod send;
mod send_cli;
mod send_output;
mod soak;
mod terminal;
mod tls_matrix;
