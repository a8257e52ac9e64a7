//! `send --host A --host B`: failover hosts, in order, behind one link
//! ([`crate::failover`]).

use super::args::SendArgs;
use crate::failover::Rules;
use crate::netargs;
use mllp::client::ClientOptions;
use mllp::transport::{Connector, TcpConnector};
use std::sync::Arc;

/// The link's connector: `primary` alone, or it and the further `--host`s with the failover
/// rules (the reconnect policy then applies to each host in turn). `Err`: a host or its TLS
/// refused, in flag words.
pub fn connector(
    args: &SendArgs,
    primary: TcpConnector,
    options: &mut ClientOptions,
) -> anyhow::Result<Result<Arc<dyn Connector>, String>> {
    let rules = Rules {
        failover_after: args.failover_after,
        failback_after: args.failback_after,
    };
    // With one host they would do nothing: say so rather than accept them silently.
    if let Some(refused) = rules.refused_for_one(args.host.len(), "--host") {
        return Ok(Err(refused));
    }
    // Without reconnecting each host gets one connect: there is no count to reach, and no
    // coming back.
    if args.link.giving_up.no_reconnect {
        if let Some(flag) = failover_flag(args) {
            return Ok(Err(format!(
                "{flag} with --no-reconnect: each --host is tried once, in order; \
                 leave out {flag}, or --no-reconnect to keep trying"
            )));
        }
    }
    let mut more = Vec::new();
    for target in args.host.iter().skip(1) {
        match netargs::endpoint(target, args.port, args.origin) {
            Ok(endpoint) => more.push(endpoint),
            Err(err) => return Ok(Err(format!("--host {target}: {err}"))),
        }
    }
    let settings = args.link.settings();
    let resolver = netargs::resolver()?;
    let made = crate::failover::connector(
        primary,
        &more,
        (&args.tls, &settings, &resolver),
        rules,
        options,
    );
    Ok(made.map_err(|err| format!("{err} (--host)")))
}

/// The first failover flag given, if any.
fn failover_flag(args: &SendArgs) -> Option<&'static str> {
    match (args.failover_after, args.failback_after) {
        (Some(_), _) => Some("--failover-after"),
        (None, Some(_)) => Some("--failback-after"),
        (None, None) => None,
    }
}
