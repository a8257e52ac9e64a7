//! What a soak worker tells the run's monitor: each message's result, and its link's events.

use crate::ack::AckCode;
use crate::client::{ClientEvent, Population};
use std::time::Duration;

/// One message's result.
#[derive(Debug, Clone, Copy)]
pub struct Done {
    /// Since the start of the run.
    pub at: Duration,
    /// From the due time (with a rate) or the send call, to the fate.
    pub latency: Duration,
    /// The fate it ended in.
    pub population: Population,
    /// The ACK code it ended on (`CA` for committed-only); `None` when no answer settled it.
    pub code: Option<AckCode>,
    /// The public cause of a fate other than accepted or negative, as in JSON `cause` fields.
    pub cause: Option<&'static str>,
}

/// A worker's report to the monitor.
#[derive(Debug)]
pub(crate) enum WorkerNote {
    Done { conn: usize, items: Vec<Done> },
    Event { conn: usize, event: ClientEvent },
    Lagged { conn: usize, n: u64 },
}
