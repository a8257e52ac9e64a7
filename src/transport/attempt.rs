//! One connect about to start, and the host it goes to: a link over several hosts says which
//! one each connection was made to, and when it moved between them.

use super::{Connection, LinkError};
use crate::resolve::BoxFuture;
use serde::Serialize;

/// One connect, its host chosen before it starts so what is said about it is the truth.
pub struct Attempt<'a> {
    /// Where it goes; `None` when the connector cannot say (test doubles).
    pub host: Option<HostTurn>,
    /// The connect itself.
    pub connect: BoxFuture<'a, Result<Connection, LinkError>>,
}

/// The host a connect goes to.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct HostTurn {
    /// `host:port`, as given.
    pub endpoint: String,
    /// Its place in the list of hosts, from 0 (the first, preferred one).
    pub index: usize,
    /// The link left another host for this one since the previous connect.
    pub moved: Option<Move>,
}

/// Why the link changed hosts.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Move {
    /// Away from `from` (its place in the list), after failed connects or when reconnecting
    /// gave up on it.
    Failover {
        /// `host:port` left.
        from: String,
    },
    /// Back to the first host, the failback time after leaving it.
    Failback {
        /// `host:port` left.
        from: String,
    },
}
