//! Unit tests of the client core over in-memory links on tokio's paused clock.

mod dropped;
mod engines;
mod fifo;
mod flow;
pub(crate) mod harness;
mod link;
mod many;
mod model;
mod pipeline_off;
mod retry_model;
mod some;
mod tls_refusal;
mod truth;
mod verdicts;
