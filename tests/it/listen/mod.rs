//! Integration tests: `mllp listen` as a real process over real loopback sockets, one module per
//! topic: the basics, answers, guards, host lists, log rate, metrics, moved stores, output, the
//! stores (files, SQLite, PostgreSQL and its link), the PROXY protocol, a deployment behind
//! HAProxy, TLS, and the truth of every answer.

mod answers;
mod basics;
mod dial;
mod guards;
mod hosts;
mod log_rate;
mod metrics;
mod mllp2;
mod moved;
mod output;
mod postgres;
mod postgres_crash;
mod postgres_group;
pub(crate) mod postgres_link;
pub(crate) mod postgres_truth;
mod proxy;
mod scale_out;
mod store;
mod store_exec;
mod tls;
mod truth;
