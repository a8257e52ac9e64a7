//! The scripted peer checked against a few lines of raw tokio: each behaviour does what it says.

use super::certs::Certs;
use super::peer::{Behaviour, Peer, Script};
use super::peer_wire::{control_id, frame, message, Deframer};
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

async fn send(stream: &mut TcpStream, ids: &[&str]) {
    for id in ids {
        stream.write_all(&frame(&message(id, "X"))).await.unwrap();
    }
}

/// Reads until `count` frames arrived; returns (MSA-1, MSA-2) of each.
async fn acks(stream: &mut TcpStream, count: usize) -> Vec<(String, String)> {
    let mut deframer = Deframer::default();
    let mut out = Vec::new();
    let mut buf = [0u8; 1024];
    while out.len() < count {
        let n = stream.read(&mut buf).await.unwrap();
        assert!(n > 0, "peer closed after {} ACKs", out.len());
        deframer.push(&buf[..n]);
        while let Some(ack) = deframer.next_frame() {
            let text = String::from_utf8(ack).unwrap();
            let msa = text.split('\r').find(|s| s.starts_with("MSA")).unwrap();
            let fields: Vec<&str> = msa.split('|').collect();
            out.push((fields[1].to_string(), fields[2].to_string()));
        }
    }
    out
}

#[tokio::test]
async fn acks_naks_and_reorders_with_msa2_from_msh10() {
    let peer = Peer::start(Script::then(
        vec![Behaviour::Ack("AE"), Behaviour::Reorder(3)],
        Behaviour::Ack("AA"),
    ))
    .await;
    let mut nak = TcpStream::connect(peer.addr()).await.unwrap();
    send(&mut nak, &["N1"]).await;
    assert_eq!(acks(&mut nak, 1).await, [("AE".into(), "N1".into())]);
    let mut reorder = TcpStream::connect(peer.addr()).await.unwrap();
    send(&mut reorder, &["A", "B", "C"]).await;
    let ids: Vec<String> = acks(&mut reorder, 3)
        .await
        .into_iter()
        .map(|a| a.1)
        .collect();
    assert_eq!(ids, ["C", "B", "A"]);
    let record = peer.wait_for(|r| r.payloads.len() == 4).await;
    assert_eq!(record.connections, 2);
    assert_eq!(control_id(&record.payloads[3]).as_deref(), Some("C"));
}

#[tokio::test]
async fn drops_every_n_messages_and_resets_after_n() {
    let peer = Peer::start(Script::then(
        vec![Behaviour::DropEvery(2)],
        Behaviour::ResetAfter(1),
    ))
    .await;
    let mut dropping = TcpStream::connect(peer.addr()).await.unwrap();
    send(&mut dropping, &["D1", "D2"]).await;
    assert_eq!(acks(&mut dropping, 2).await.len(), 2);
    assert_eq!(dropping.read(&mut [0u8; 8]).await.unwrap(), 0);

    let mut resetting = TcpStream::connect(peer.addr()).await.unwrap();
    send(&mut resetting, &["R1"]).await;
    assert_eq!(acks(&mut resetting, 1).await.len(), 1);
    send(&mut resetting, &["R2"]).await;
    let err = resetting.read(&mut [0u8; 8]).await.unwrap_err();
    assert_eq!(err.kind(), std::io::ErrorKind::ConnectionReset);
}

#[tokio::test]
async fn stalls_closes_and_speaks_other_protocols() {
    let peer = Peer::start(Script::then(
        vec![Behaviour::Stall, Behaviour::CloseAtOnce, Behaviour::Http],
        Behaviour::SshBanner,
    ))
    .await;
    let mut stalled = TcpStream::connect(peer.addr()).await.unwrap();
    send(&mut stalled, &["S1", "S2"]).await;
    // Had the peer answered S1, the answer would be in our buffer before it recorded S2
    // (loopback delivers a write at once).
    peer.wait_for(|r| r.payloads.len() == 2).await;
    let pending = stalled.try_read(&mut [0u8; 8]);
    assert!(
        matches!(&pending, Err(e) if e.kind() == std::io::ErrorKind::WouldBlock),
        "a stalled peer answered: {pending:?}"
    );

    let mut closed = TcpStream::connect(peer.addr()).await.unwrap();
    assert_eq!(closed.read(&mut [0u8; 8]).await.unwrap(), 0);

    let mut http = TcpStream::connect(peer.addr()).await.unwrap();
    send(&mut http, &["H1"]).await;
    let mut answer = String::new();
    http.read_to_string(&mut answer).await.unwrap();
    assert!(answer.starts_with("HTTP/1.1 400 Bad Request"), "{answer}");

    let mut ssh = TcpStream::connect(peer.addr()).await.unwrap();
    let mut banner = [0u8; 8];
    ssh.read_exact(&mut banner).await.unwrap();
    assert_eq!(&banner, b"SSH-2.0-");
}

#[tokio::test]
async fn the_tls_acceptor_bounds_handshakes_and_reports_plain_clients_without_payload() {
    let certs = Certs::generate();
    let acceptor = certs
        .server_options(&certs.server)
        .acceptor(Duration::from_millis(200))
        .unwrap();
    let peer = Peer::start_tls(Script::always(Behaviour::Ack("AA")), acceptor).await;
    let _silent = TcpStream::connect(peer.addr()).await.unwrap();
    let mut plain = TcpStream::connect(peer.addr()).await.unwrap();
    let marker = super::no_payload::MARKER;
    plain
        .write_all(&frame(&message("P1", marker)))
        .await
        .unwrap();
    let record = peer.wait_for(|r| r.tls_errors.len() == 2).await;
    let mut causes: Vec<_> = record.tls_errors.iter().map(|e| e.cause).collect();
    causes.sort();
    use mllp::cause::Cause;
    assert_eq!(causes, [Cause::ConnectTimeout, Cause::TlsHandshake]);
    for err in &record.tls_errors {
        super::no_payload::assert_clean("tls_client_error", err, marker);
        super::no_payload::assert_clean("tls_client_error", err, "MSH");
    }
}
