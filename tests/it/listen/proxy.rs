//! Integration tests: `mllp listen --proxy-protocol` as a real process: the client address of a
//! v1 or v2 header in events and under the per-peer cap, and the connections closed for want of
//! a header, from an untrusted address, or quietly as the balancer's own health check.

use crate::support::listen_proc::{is, ListenProc};
use crate::support::mllp_client::{marked, MllpClient};
use ppp::v2::{Builder, Command, Protocol, Version};
use std::net::SocketAddr;

fn v2(command: Command, client: &str) -> Vec<u8> {
    let client: SocketAddr = client.parse().unwrap();
    let dest: SocketAddr = "127.0.0.1:2575".parse().unwrap();
    Builder::with_addresses(Version::Two | command, Protocol::Stream, (client, dest))
        .build()
        .unwrap()
}

async fn proxied(addr: SocketAddr, header: &[u8]) -> MllpClient {
    let mut client = MllpClient::connect(addr).await;
    client.send_raw(header).await;
    client
}

#[tokio::test(flavor = "multi_thread")]
async fn the_header_names_the_peer_of_events_and_of_the_per_peer_cap() {
    let dir = tempfile::tempdir().unwrap();
    let peers = dir.path().join("peers");
    let exec = format!("echo \"$MLLP_PEER\" >> '{}'", peers.display());
    let listener = ListenProc::start(&[
        "--proxy-protocol",
        "--max-connections-per-peer",
        "1",
        "--exec",
        &exec,
    ]);
    let mut first = proxied(listener.addr, &v2(Command::Proxy, "10.9.8.7:1234")).await;
    first.send(&marked("P1", "")).await;
    assert_eq!(first.ack().await.unwrap().code, "AA");
    let opened = listener.wait_event(is("connection_opened"));
    assert_eq!(opened["peer"], "10.9.8.7:1234");
    // The same client again, through the same balancer address: over its cap.
    let mut second = proxied(
        listener.addr,
        b"PROXY TCP4 10.9.8.7 127.0.0.1 1235 2575\r\n",
    )
    .await;
    assert!(second.ack().await.is_none(), "closed at once");
    let closed = listener.wait_event(is("connection_closed"));
    assert_eq!(
        (closed["peer"].as_str(), closed["cause"].as_str()),
        (Some("10.9.8.7:1235"), Some("per-peer-limit"))
    );
    // Another client through the same balancer is its own peer.
    let mut third = proxied(listener.addr, &v2(Command::Proxy, "10.9.8.6:99")).await;
    third.send(&marked("P3", "")).await;
    assert_eq!(third.ack().await.unwrap().code, "AA");
    let seen = std::fs::read_to_string(&peers).unwrap();
    assert_eq!(
        seen, "10.9.8.7:1234\n10.9.8.6:99\n",
        "MLLP_PEER of each --exec"
    );
    listener.assert_no_payload();
}

#[tokio::test(flavor = "multi_thread")]
async fn no_header_or_an_untrusted_sender_is_closed_and_a_health_check_is_quiet() {
    let listener = ListenProc::start(&["--proxy-protocol"]);
    // A LOCAL header (the balancer's own check): no event at all.
    let check = proxied(listener.addr, &v2(Command::Local, "127.0.0.1:1")).await;
    drop(check);
    let mut bare = MllpClient::connect(listener.addr).await;
    bare.send(&marked("NOHEADER", "")).await;
    assert!(bare.ack().await.is_none());
    let closed = listener.wait_event(|e| e["event"] != "listening");
    assert_eq!(closed["event"], "connection_closed", "{closed}");
    assert_eq!(closed["cause"], "proxy-header");
    drop(listener);

    let listener = ListenProc::start(&["--proxy-protocol", "--proxy-from", "10.0.0.0/8"]);
    let mut client = proxied(listener.addr, &v2(Command::Proxy, "10.9.8.7:1234")).await;
    assert!(client.ack().await.is_none());
    let closed = listener.wait_event(is("connection_closed"));
    assert_eq!(closed["cause"], "proxy-untrusted");
}

#[test]
fn proxy_from_needs_proxy_protocol_and_valid_blocks() {
    for args in [
        &["listen", "--proxy-from", "10.0.0.0/8"][..],
        &["listen", "--proxy-protocol", "--proxy-from", "10.0.0.0/40"],
    ] {
        let out = crate::support::mllp().args(args).output().unwrap();
        assert_eq!(out.status.code(), Some(2), "{args:?}");
    }
}
