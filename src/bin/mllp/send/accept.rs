//! `send --accept [HOST:]PORT`: the link is the connection the engine opens to us
//! ([`mllp::transport::AcceptConnector`]), bound with the listener's safety (loopback by
//! default, a wildcard only with `--allow-wildcard`).

use super::args::SendArgs;
use crate::diag::{Diag, Fatal};
use crate::exit::Exit;
use mllp::server::BindError;
use mllp::transport::{AcceptConnector, AcceptEvent, Connector};
use serde_json::json;
use std::sync::Arc;

/// The link's connector and the words for where it goes.
type Link = (Arc<dyn Connector>, String);

/// Under `--accept`, the accepting connector in place of `connector` and the endpoint words for
/// the lines that say where the link goes; otherwise both as they are. `Err`: a refusal, already
/// reported, and its exit code.
pub fn connector(
    args: &SendArgs,
    connector: Arc<dyn Connector>,
    endpoint: String,
    diag: &Diag,
) -> anyhow::Result<Result<Link, Exit>> {
    let Some((host, port)) = &args.accept else {
        return Ok(Ok((connector, endpoint)));
    };
    let refuse = |message: &str| Ok(Err(Fatal::new(Exit::Usage, message).report()));
    if !args.host.is_empty() && !args.origin.host_from_env {
        return refuse("--accept waits for the engine to connect, --host connects to it: give one");
    }
    if args.connections > 1 {
        return refuse("--accept takes one connection at a time: leave out --connections");
    }
    let resolver = crate::netargs::resolver()?;
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    let bound = runtime.block_on(async {
        let listener =
            mllp::server::bind_with(&*resolver, host, *port, args.allow_wildcard).await?;
        listener.into_std().map_err(|source| BindError::Io {
            host: host.clone(),
            port: *port,
            source,
        })
    });
    let listener = match bound {
        Ok(listener) => listener,
        Err(e @ BindError::Wildcard { .. }) => {
            return Ok(Err(crate::listen::wildcard_refused(&e).report()))
        }
        // An address that cannot be listened on is refused as the command line's, before
        // anything is sent: no message has a fate yet, so none is reported.
        Err(BindError::Io { source, .. }) => {
            let what = match source.kind() {
                std::io::ErrorKind::AddrInUse => {
                    "the address is in use: give another port (0 picks a free one, said on the \
                     accepting line) or stop what listens there"
                }
                _ => "give an address of this machine and a port this user may listen on",
            };
            let message = format!("--accept {host}:{port}: cannot listen there: {source}; {what}");
            let refused = Fatal::new(Exit::Usage, message);
            return Ok(Err(refused.then("nothing was sent").report()));
        }
        Err(e) => {
            let refused = Fatal::new(Exit::Permanent, format!("--accept: {e}")).cause(e.cause());
            return Ok(Err(refused.then("nothing was sent").report()));
        }
    };
    let (tx, rx) = tokio::sync::mpsc::channel(64);
    let accepting = AcceptConnector::new(listener)?
        .with_wait(args.link.timing.connect_timeout)
        .with_events(tx);
    let addr = accepting.local_addr();
    // Always said, first: with port 0 it is how the engine's side learns the port.
    diag.event(
        "accepting",
        || format!("accepting on {addr}"),
        json!({ "addr": addr.to_string(), "time": now() }),
    );
    if mllp::server::is_wildcard(addr.ip()) {
        let message = "accepting on every interface: any host that can reach this machine can \
                       take the messages";
        diag.security_warning("MLLP_BIND_ALL_INTERFACES", message);
    }
    let diag = diag.clone();
    std::thread::Builder::new()
        .name("mllp-accept".into())
        .spawn(move || say_events(&diag, rx))?;
    Ok(Ok((Arc::new(accepting), format!("{addr} (accepting)"))))
}

/// When an event is said, as every event of `send` carries it (RFC 3339 UTC, milliseconds).
fn now() -> String {
    humantime::format_rfc3339_millis(std::time::SystemTime::now()).to_string()
}

/// What the accepting side reports, until the connector is gone.
fn say_events(diag: &Diag, mut rx: tokio::sync::mpsc::Receiver<AcceptEvent>) {
    while let Some(event) = rx.blocking_recv() {
        match event {
            AcceptEvent::Refused { peer } => diag.event(
                "accept_refused",
                || {
                    format!(
                        "{} a connection from {peer} came while another is in use: closed",
                        diag.paint("warning:", "33")
                    )
                },
                json!({ "peer": peer.to_string(), "reason": "in-use", "time": now() }),
            ),
            AcceptEvent::Failed { error } => diag.event(
                "accept_error",
                || format!("{} accepting failed: {error}", diag.paint("warning:", "33")),
                json!({ "error": error, "time": now() }),
            ),
            _ => {}
        }
    }
}
