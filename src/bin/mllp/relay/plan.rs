//! `mllp relay`'s flags checked and turned into the run's parts: the server settings, the
//! upstream link's connector and options (with its failover hosts), the store, the shadow's
//! client. A refusal is the exit it ends the run with.

use super::args::RelayArgs;
use crate::diag::Fatal;
use crate::exit::Exit;
use mllp::client::{Client, ClientOptions, LinkSettings, Window};
use mllp::framing::Release;
use mllp::relay::{self, Store};
use mllp::resolve::Resolver;
use mllp::server::ServerConfig;
use mllp::transport::Connector;
use std::sync::Arc;

/// What the run builds the server and the upstream link from.
pub struct Plan {
    pub link: LinkSettings,
    pub config: ServerConfig,
    pub connector: Arc<dyn Connector>,
    pub options: ClientOptions,
    pub store: Option<Store>,
}

/// Check the flags that clap cannot and prepare every part that needs no socket.
pub fn plan(args: &RelayArgs, resolver: &Arc<dyn Resolver>) -> Result<Plan, Exit> {
    let link = args.link();
    if let Err(e) = args.mirror.check() {
        return Err(Fatal::new(Exit::Usage, e).report());
    }
    if let Some(mirror) = &args.mirror.mirror {
        let listen = (args.listen.host.as_str(), args.listen.port);
        if let Err(e) = super::mirror::not_a_loop(mirror, listen, &args.to) {
            return Err(Fatal::new(Exit::Usage, e).report());
        }
    }
    let given = crate::failover::Rules {
        failover_after: args.failover_after,
        failback_after: args.failback_after,
    };
    // With one upstream they would do nothing: say so rather than accept them silently.
    if let Some(refused) = given.refused_for_one(args.to.len(), "--to") {
        return Err(Fatal::new(Exit::Usage, refused).report());
    }
    let config = ServerConfig {
        drain_timeout: link.drain_timeout,
        release: release(args.mllp2_downstream),
        ..args.guards.config()
    };
    let (connector, options) = upstream(args, &link, resolver)?;
    let store = match args.queue.as_ref().or(args.record.as_ref()) {
        Some(file) => match Store::open(file) {
            Ok(store) => Some(store),
            Err(e) => return Err(Fatal::new(Exit::Usage, &e).report()),
        },
        None => None,
    };
    Ok(Plan {
        link,
        config,
        connector,
        options,
        store,
    })
}

/// The upstream link's connector over every `--to`, and its client options.
fn upstream(
    args: &RelayArgs,
    link: &LinkSettings,
    resolver: &Arc<dyn Resolver>,
) -> Result<(Arc<dyn Connector>, ClientOptions), Exit> {
    let refused = |e: &dyn std::fmt::Display| {
        let message = format!("cannot load the upstream TLS material: {e}");
        Fatal::new(Exit::Permanent, message).report()
    };
    let upstream_tls = args
        .tls
        .options()
        .map(|o| o.build(&args.upstream().host))
        .transpose()
        .map_err(|e| refused(&e))?;
    let mut options = relay::client_options(link, window(args));
    options.release = release(args.mllp2_upstream);
    let (host, port) = (&args.upstream().host, args.upstream().port_or_default());
    let primary = link.connector(host, port, upstream_tls, Arc::clone(resolver));
    let more: Vec<_> = args.to[1..]
        .iter()
        .map(|t| (t.host.clone(), t.port_or_default()))
        .collect();
    let setup = (&args.tls, link, resolver);
    let connector =
        crate::failover::connector(primary, &more, setup, args.failover(), &mut options)
            .map_err(|e| refused(&e))?;
    if let Some(after) = args.failover().failover_after.filter(|_| args.to.len() > 1) {
        // A message every host closes on is a poison message; one only the first closes on
        // is the first host's fault: each host gets its failed connects before the message
        // is given up.
        let every_host = after.saturating_mul(args.to.len() as u32);
        options.max_poison_closes = options.max_poison_closes.max(every_host);
    }
    Ok((connector, options))
}

/// The shadow's client link: the upstream's waits and reconnects, its own TLS flags.
pub fn shadow_client(
    args: &RelayArgs,
    to: &mllp::target::Target,
    link: &LinkSettings,
    resolver: &Arc<dyn Resolver>,
) -> Result<Arc<Client>, Exit> {
    let tls = match args
        .mirror
        .tls()
        .options()
        .map(|o| o.build(&to.host))
        .transpose()
    {
        Ok(tls) => tls,
        Err(e) => {
            let message = format!("cannot load the shadow's TLS material: {e}");
            return Err(Fatal::new(Exit::Permanent, message).report());
        }
    };
    let options = relay::client_options(link, window(args));
    let connector = link.connector(&to.host, to.port_or_default(), tls, Arc::clone(resolver));
    Client::new(Arc::new(connector), options)
        .map(Arc::new)
        .map_err(|e| Fatal::new(Exit::Usage, e).report())
}

/// Messages in flight on a link, at most: `--window`, no byte bound.
fn window(args: &RelayArgs) -> Window {
    Window {
        count: Some(args.window),
        bytes: None,
    }
}

/// The MLLP release a side speaks.
fn release(two: bool) -> Release {
    if two {
        Release::Two
    } else {
        Release::One
    }
}
