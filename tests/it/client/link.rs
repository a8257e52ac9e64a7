//! Integration tests: establishing links against real local peers, and the
//! classification of every way that fails.

use mllp::cause::Cause;
use mllp::resolve::StaticResolver;
use mllp::transport::{Connector, Phase, TcpConnector};
use std::net::{IpAddr, Ipv4Addr};
use std::sync::Arc;
use std::time::Duration;
use tokio::net::TcpListener;

const LOCALHOST: IpAddr = IpAddr::V4(Ipv4Addr::LOCALHOST);

#[tokio::test]
async fn plain_connect_through_the_resolver_sets_nodelay_and_keepalive() {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    let resolver = StaticResolver::new().with("engine.test", [LOCALHOST]);
    let connector = TcpConnector::new("engine.test", port)
        .with_resolver(Arc::new(resolver))
        .with_keepalive(Duration::from_secs(17));
    let (stream, peer) = connector.connect_tcp().await.unwrap();
    assert_eq!(peer, listener.local_addr().unwrap());
    assert!(stream.nodelay().unwrap());
    let sock = socket2::SockRef::from(&stream);
    assert!(sock.keepalive().unwrap());
    assert_eq!(sock.keepalive_time().unwrap(), Duration::from_secs(17));
    assert_eq!(sock.keepalive_interval().unwrap(), Duration::from_secs(17));

    let plain = TcpConnector::new("127.0.0.1", port);
    let (stream, _) = plain.connect_tcp().await.unwrap();
    assert!(!socket2::SockRef::from(&stream).keepalive().unwrap());
    let conn = plain.connect().await.unwrap();
    assert!(conn.tls.is_none() && conn.security_warnings.is_empty());
}

#[tokio::test]
async fn refused_port_is_connection_refused_and_transient() {
    let port = closed_port();
    let err = TcpConnector::new("127.0.0.1", port)
        .connect()
        .await
        .unwrap_err();
    assert_eq!(err.cause, Cause::ConnectionRefused);
    assert_eq!(err.phase, Phase::Connect);
    assert_eq!(mllp::transport::classify(&err), Cause::ConnectionRefused);
}

#[tokio::test]
async fn dns_causes_come_through_the_replaceable_resolver() {
    let resolver = Arc::new(
        StaticResolver::new()
            .not_found("gone.test")
            .failing("flaky.test", "resolver timed out"),
    );
    let gone = TcpConnector::new("gone.test", 2575)
        .with_resolver(resolver.clone())
        .connect()
        .await
        .unwrap_err();
    assert_eq!(
        (gone.cause, gone.phase),
        (Cause::DnsNotFound, Phase::Resolve)
    );
    let flaky = TcpConnector::new("flaky.test", 2575)
        .with_resolver(resolver)
        .connect()
        .await
        .unwrap_err();
    assert_eq!(
        (flaky.cause, flaky.phase),
        (Cause::DnsFailed, Phase::Resolve)
    );
    assert!(flaky.to_string().contains("flaky.test"));
}

mod tls;

use crate::support::no_payload::{assert_clean, MARKER};
use crate::support::peer::{Behaviour, Peer, Script};
use crate::support::peer_wire::{frame, message};
use crate::support::ports::closed_port;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

#[tokio::test]
async fn addresses_are_tried_in_order_until_one_connects() {
    let peer = Peer::start(Script::always(Behaviour::Ack("AA"))).await;
    // Nothing listens on 127.0.0.2 at the peer's port: refused, then the next address.
    let resolver = StaticResolver::new().with(
        "engine.test",
        [IpAddr::V4(Ipv4Addr::new(127, 0, 0, 2)), LOCALHOST],
    );
    let conn = TcpConnector::new("engine.test", peer.port())
        .with_resolver(Arc::new(resolver))
        .connect()
        .await
        .unwrap();
    assert_eq!(conn.peer, Some(peer.addr()));

    let all_closed = StaticResolver::new().with(
        "engine.test",
        [
            IpAddr::V4(Ipv4Addr::new(127, 0, 0, 2)),
            IpAddr::V4(Ipv4Addr::new(127, 0, 0, 3)),
        ],
    );
    let err = TcpConnector::new("engine.test", closed_port())
        .with_resolver(Arc::new(all_closed))
        .connect()
        .await
        .unwrap_err();
    assert_eq!(err.cause, Cause::ConnectionRefused);
    assert!(err.detail.contains("all 2 addresses failed"), "{err}");
}

#[tokio::test]
async fn a_reset_after_connect_classifies_as_connection_reset() {
    let peer = Peer::start(Script::always(Behaviour::ResetAfter(0))).await;
    let conn = TcpConnector::new("127.0.0.1", peer.port())
        .connect()
        .await
        .unwrap();
    let mut stream = conn.stream;
    stream
        .write_all(&frame(&message("R1", MARKER)))
        .await
        .unwrap();
    let mut buf = [0u8; 64];
    let err = stream.read(&mut buf).await.unwrap_err();
    assert_eq!(mllp::transport::classify(&err), Cause::ConnectionReset);
    assert_eq!(peer.payloads().len(), 1);
}

#[tokio::test]
async fn a_handshake_that_never_completes_is_connect_timeout() {
    let peer = Peer::never_answering().await;
    let certs = crate::support::certs::Certs::generate();
    let tls = certs.client_options().build("127.0.0.1").unwrap();
    let err = TcpConnector::new("127.0.0.1", peer.port())
        .with_tls(tls)
        .with_connect_timeout(Duration::from_millis(300))
        .connect()
        .await
        .unwrap_err();
    assert_eq!(err.cause, Cause::ConnectTimeout);
    assert_eq!(err.cause.class(), mllp::cause::Class::Transient);
    assert_eq!(err.phase, Phase::Tls);
    assert_clean("connect timeout", &err, MARKER);
}
