//! Integration tests: the client core against the scripted peer over real loopback sockets.

use crate::support::peer::{Behaviour, Peer, Script};
use crate::support::peer_wire::message;
use bytes::Bytes;
use mllp::cause::Cause;
use mllp::client::*;
use mllp::transport::TcpConnector;
use std::sync::Arc;
use std::time::Duration;

fn client(peer: &Peer, options: ClientOptions) -> Client {
    let connector =
        TcpConnector::new("127.0.0.1", peer.port()).with_connect_timeout(Duration::from_secs(5));
    Client::new(Arc::new(connector), options).unwrap()
}

fn fast_reconnect(o: ClientOptions) -> ClientOptions {
    let backoff = BackoffConfig {
        initial: Duration::from_millis(10),
        max: Duration::from_millis(50),
        ..Default::default()
    };
    ClientOptions {
        reconnect: Reconnect {
            enabled: true,
            strategy: Arc::new(ExponentialBackoff::new(backoff)),
        },
        ..o
    }
}

async fn send_n(client: &Client, n: usize) -> Vec<Fate> {
    let mut handles = vec![];
    for i in 0..n {
        let payload = Bytes::from(message(&format!("id{i}"), "PAYLOADMARKER"));
        handles.push(client.send(payload).await);
    }
    let mut fates = vec![];
    for h in handles {
        fates.push(h.await);
    }
    fates
}

#[tokio::test]
async fn pipelined_sends_all_accepted_and_counted() {
    let peer = Peer::start(Script::always(Behaviour::Ack("AA"))).await;
    let client = client(&peer, ClientOptions::default());
    let fates = send_n(&client, 50).await;
    assert!(fates.iter().all(|f| f.population() == Population::Accepted));
    let stats = client.stats();
    assert_eq!(stats.by_population.get("accepted"), Some(&50));
    assert_eq!(stats.acked_by_code.get("AA"), Some(&50));
    assert!(!serde_json::to_string(&stats)
        .unwrap()
        .contains("PAYLOADMARKER"));
    assert!(client.close().await.is_clean());
    assert_eq!(client.state(), State::Closed);
}

#[tokio::test]
async fn control_id_survives_a_peer_dropping_every_10() {
    let peer = Peer::start(Script::always(Behaviour::DropEvery(10))).await;
    let options = fast_reconnect(ClientOptions {
        correlation: Correlation::ControlId,
        ..Default::default()
    });
    let client = client(&peer, options);
    let fates = send_n(&client, 30).await;
    assert!(
        fates.iter().all(|f| f.population() == Population::Accepted),
        "{fates:?}"
    );
    assert!(peer.connections() >= 3);
    assert!(client.stats().reconnect_attempts >= 2);
}

#[tokio::test]
async fn http_peer_is_framing_fatal_and_never_retried() {
    let peer = Peer::start(Script::always(Behaviour::Http)).await;
    let client = client(&peer, fast_reconnect(ClientOptions::default()));
    let mut events = client.subscribe();
    let fates = send_n(&client, 1).await;
    // An HTTP server kept nothing of it as HL7.
    assert_eq!(fates[0].population(), Population::NeverDelivered);
    assert_eq!(fates[0].cause_detail(), Some("http"));
    let mut saw_error = false;
    while let Ok(event) = events.recv().await {
        if let ClientEvent::Error { cause, class } = event {
            assert_eq!(cause, Cause::FramingFatal);
            assert_eq!(class, mllp::cause::Class::Permanent);
            saw_error = true;
        }
        if matches!(event, ClientEvent::StateChange(t) if t.to == State::Closed) {
            break;
        }
        assert!(!matches!(event, ClientEvent::Reconnecting { .. }));
    }
    assert!(saw_error);
    assert_eq!(peer.connections(), 1);
}
