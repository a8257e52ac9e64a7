//! The accepting connector over loopback: each connect hands out the next inbound connection,
//! a connection arriving while one is in use is closed and reported, the place frees when the
//! link is dropped, a wait with no peer is a connect timeout, and TLS is served when asked.

use super::*;
use crate::tls::{ClientTlsOptions, ServerTlsOptions};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

fn bound() -> std::net::TcpListener {
    std::net::TcpListener::bind("127.0.0.1:0").unwrap()
}

#[tokio::test]
async fn one_link_at_a_time_and_the_place_frees_when_it_is_dropped() {
    let (tx, mut events) = mpsc::channel(8);
    let connector = AcceptConnector::new(bound()).unwrap().with_events(tx);
    let addr = connector.local_addr();
    let waiting = tokio::spawn(async move {
        let link = connector.connect().await.unwrap();
        (connector, link)
    });
    let mut engine = TcpStream::connect(addr).await.unwrap();
    let (connector, mut link) = waiting.await.unwrap();
    assert!(link.peer.is_some() && link.tls.is_none());
    engine.write_all(b"hello").await.unwrap();
    let mut got = [0u8; 5];
    link.stream.read_exact(&mut got).await.unwrap();
    assert_eq!(&got, b"hello");

    // In use: a second engine connection is closed at once and reported.
    let mut second = TcpStream::connect(addr).await.unwrap();
    let mut buf = [0u8; 8];
    assert!(matches!(second.read(&mut buf).await, Ok(0) | Err(_)));
    let refused = events.recv().await.unwrap();
    assert!(
        matches!(refused, AcceptEvent::Refused { .. }),
        "{refused:?}"
    );

    // Dropped: the next connection becomes the next link.
    drop(link);
    let _third = TcpStream::connect(addr).await.unwrap();
    let next = connector.connect().await.unwrap();
    assert!(next.peer.is_some());
}

#[tokio::test]
async fn a_wait_with_no_peer_is_a_connect_timeout() {
    let connector = AcceptConnector::new(bound())
        .unwrap()
        .with_wait(Duration::from_millis(50));
    let error = connector.connect().await.unwrap_err();
    assert_eq!(error.cause, Cause::ConnectTimeout);
    assert_eq!(error.phase, Phase::Connect);
    assert!(
        error.detail.contains("no peer connected"),
        "{}",
        error.detail
    );
}

#[tokio::test]
async fn tls_is_served_on_each_connection_when_asked() {
    let dir = tempfile::tempdir().unwrap();
    let key = rcgen::KeyPair::generate().unwrap();
    let cert = rcgen::CertificateParams::new(vec!["localhost".to_string()])
        .unwrap()
        .self_signed(&key)
        .unwrap();
    let (cert_file, key_file) = (dir.path().join("cert.pem"), dir.path().join("key.pem"));
    std::fs::write(&cert_file, cert.pem()).unwrap();
    std::fs::write(&key_file, key.serialize_pem()).unwrap();
    let served = ServerTlsOptions {
        cert_file: cert_file.clone(),
        key_file,
        ..ServerTlsOptions::default()
    };
    let acceptor = served.acceptor(Duration::from_secs(5)).unwrap();
    let connector = AcceptConnector::new(bound()).unwrap().with_tls(acceptor);
    let addr = connector.local_addr();
    let client = ClientTlsOptions {
        ca_file: Some(cert_file),
        ca_only: true,
        ..ClientTlsOptions::default()
    }
    .build("localhost")
    .unwrap();
    let engine =
        super::super::TcpConnector::new(addr.ip().to_string(), addr.port()).with_tls(client);
    let (ours, theirs) = tokio::join!(connector.connect(), engine.connect());
    let (mut ours, mut theirs) = (ours.unwrap(), theirs.unwrap());
    assert!(ours.tls.is_some() && theirs.tls.is_some());
    theirs.stream.write_all(b"over tls").await.unwrap();
    let mut got = [0u8; 8];
    ours.stream.read_exact(&mut got).await.unwrap();
    assert_eq!(&got, b"over tls");
}
