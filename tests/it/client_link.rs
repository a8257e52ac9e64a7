//! Integration tests: client_link. Establishing links against real local peers, and the
//! classification of every way that fails.

use mllp::cause::Cause;
use mllp::resolve::StaticResolver;
use mllp::transport::{Connector, Phase, TcpConnector};
use std::net::{IpAddr, Ipv4Addr};
use std::sync::Arc;
use std::time::Duration;
use tokio::net::TcpListener;

const LOCALHOST: IpAddr = IpAddr::V4(Ipv4Addr::LOCALHOST);

/// A port nothing listens on: bind, read the port, drop the listener.
async fn closed_port() -> u16 {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    listener.local_addr().unwrap().port()
}

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
    let port = closed_port().await;
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
