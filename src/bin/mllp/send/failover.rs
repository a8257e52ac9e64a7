//! `send --host A --host B`: failover hosts, in order, behind one link
//! ([`mllp::transport::HostList`]).

use super::args::SendArgs;
use crate::netargs;
use mllp::client::ClientOptions;
use mllp::transport::{Connector, HostList, TcpConnector};
use std::sync::Arc;

/// The link's connector: `primary` alone, or it and the further `--host`s with the failover
/// rules (the reconnect policy then applies to each host in turn). `Err`: a host or its TLS
/// refused, in flag words.
pub fn connector(
    args: &SendArgs,
    primary: TcpConnector,
    options: &mut ClientOptions,
) -> anyhow::Result<Result<Arc<dyn Connector>, String>> {
    if args.host.len() < 2 {
        return Ok(Ok(Arc::new(primary)));
    }
    let settings = args.link.settings();
    let mut hosts = vec![primary];
    for target in &args.host[1..] {
        let (host, port) = match netargs::endpoint(target, args.port, args.origin) {
            Ok(endpoint) => endpoint,
            Err(err) => return Ok(Err(format!("--host {target}: {err}"))),
        };
        let tls = match args.tls.options().map(|o| o.build(&host)).transpose() {
            Ok(tls) => tls,
            Err(err) => return Ok(Err(format!("TLS configuration for --host {target}: {err}"))),
        };
        hosts.push(settings.connector(&host, port, tls, netargs::resolver()?));
    }
    let Some(mut list) = HostList::new(hosts) else {
        return Ok(Ok(Arc::new(TcpConnector::new("", 0))));
    };
    if let Some(n) = args.failover_after {
        list = list.with_failover_after(n);
    }
    if let Some(d) = args.failback_after {
        list = list.with_failback_after(d);
    }
    let list = Arc::new(list);
    options.reconnect.strategy = list.per_host(options.reconnect.strategy.clone());
    Ok(Ok(list))
}
