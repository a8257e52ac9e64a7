//! Failover hosts for the commands that connect out (`send --host`, `relay --to`, `soak
//! --host`): one link over the endpoints in order ([`mllp::client::HostList`]), each with
//! its own TLS name, and the reconnect policy applied to each host in turn (without
//! reconnecting, each host tried once, in order).

use crate::netargs::TlsArgs;
use mllp::client::HostList;
use mllp::client::{ClientOptions, LinkSettings};
use mllp::resolve::Resolver;
use mllp::transport::{Connector, TcpConnector};
use std::sync::Arc;
use std::time::Duration;

/// When the link moves between hosts.
#[derive(Debug, Clone, Copy, Default)]
pub struct Rules {
    /// After this many failed connects in a row to one host.
    pub failover_after: Option<u32>,
    /// Back to the first host at the first connect this long after leaving it.
    pub failback_after: Option<Duration>,
}

impl Rules {
    /// With one host the rules would do nothing: the words refusing them (`hosts` is the flag
    /// that names the hosts, e.g. `--host`), or `None` when there are several hosts or no rule.
    pub fn refused_for_one(&self, count: usize, hosts: &str) -> Option<String> {
        if count >= 2 {
            return None;
        }
        let flag = match (self.failover_after, self.failback_after) {
            (Some(_), _) => "--failover-after",
            (None, Some(_)) => "--failback-after",
            (None, None) => return None,
        };
        Some(format!(
            "{flag} moves the link between hosts: give {hosts} more than once (in order of preference)"
        ))
    }
}

/// The link's connector: `primary` alone, or it and the connectors to `more` with the failover
/// `rules` (the reconnect policy of `options` then applies to each host in turn). `Err`: a
/// host's TLS material refused, in words naming the host (the caller adds the flag).
pub fn connector(
    primary: TcpConnector,
    more: &[(String, u16)],
    (tls, settings, resolver): (&TlsArgs, &LinkSettings, &Arc<dyn Resolver>),
    rules: Rules,
    options: &mut ClientOptions,
) -> Result<Arc<dyn Connector>, String> {
    if more.is_empty() {
        return Ok(Arc::new(primary));
    }
    let mut hosts = vec![primary];
    for (host, port) in more {
        let tls = match tls.options().map(|o| o.build(host)).transpose() {
            Ok(tls) => tls,
            Err(err) => return Err(format!("TLS configuration for {host}: {err}")),
        };
        hosts.push(settings.connector(host, *port, tls, Arc::clone(resolver)));
    }
    let mut list = HostList::new(hosts).ok_or("no host to connect to")?;
    if let Some(n) = rules.failover_after {
        list = list.with_failover_after(n);
    }
    if let Some(d) = rules.failback_after {
        list = list.with_failback_after(d);
    }
    let list = Arc::new(list);
    options.reconnect.strategy = match options.reconnect.enabled {
        true => list.per_host(options.reconnect.strategy.clone()),
        // Reconnecting off still moves the link on once per host: the next host is what the
        // list of them is for.
        false => {
            options.reconnect.enabled = true;
            list.once_each()
        }
    };
    Ok(list)
}
