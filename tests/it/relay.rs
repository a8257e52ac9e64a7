//! `mllp relay` through the binary: scripted peers and `mllp listen` upstream, raw clients
//! downstream. Pass-through answers byte for byte, an upstream down or silent, the queue.

mod crash;
mod failover;
mod flags;
mod mirror;
mod mirror_guard;
mod mllp2;
mod order;
pub(crate) mod proc;
mod replay;
mod stall;
mod store;
mod terminal;
mod tls;
mod upstream;

use crate::support::listen_proc::{is, ListenProc};
use crate::support::mllp_client::{adt, MllpClient};
use crate::support::peer::{Behaviour, Peer, Script};
use crate::support::peer_wire::ack;
use proc::RelayProc;
use std::time::Duration;

#[tokio::test]
async fn pass_through_answers_as_the_upstream_did_byte_for_byte() {
    let peer = Peer::start(Script::always(Behaviour::Ack("AE"))).await;
    let relay = RelayProc::start(&peer.addr().to_string(), &[]);
    let mut client = MllpClient::connect(relay.addr).await;
    let message = adt(b"P1", "");
    client.send(&message).await;
    let answer = client.ack().await.expect("an answer");
    assert_eq!(answer.payload, ack(&message, "AE"));
    assert_eq!(peer.payloads(), vec![message]);
}

#[tokio::test]
async fn an_enhanced_exchange_passes_both_answers_on_in_order() {
    let peer = Peer::start(Script::always(Behaviour::Replies(&["CA", "AA"]))).await;
    let relay = RelayProc::start(&peer.addr().to_string(), &[]);
    let mut client = MllpClient::connect(relay.addr).await;
    let message = adt(b"E1", "AL|AL");
    client.send(&message).await;
    let first = client.ack().await.expect("the CA");
    let second = client.ack().await.expect("the AA");
    assert_eq!(first.payload, ack(&message, "CA"));
    assert_eq!(second.payload, ack(&message, "AA"));
}

#[tokio::test]
async fn an_upstream_that_is_down_gets_the_message_refused_and_nothing_kept() {
    // A port that was free a moment ago: nothing listens there.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let relay = RelayProc::start(
        &format!("127.0.0.1:{port}"),
        &["--connect-timeout", "300ms"],
    );
    let mut client = MllpClient::connect(relay.addr).await;
    client.send(&adt(b"D1", "")).await;
    let answer = client.ack().await.expect("an answer");
    assert_eq!(answer.code, "AE");
    let text = String::from_utf8_lossy(&answer.payload).into_owned();
    assert!(text.contains("upstream-unavailable"), "{text}");
    assert!(text.contains("\rERR|"), "{text}");
}

#[tokio::test]
async fn an_upstream_that_never_answers_leaves_the_downstream_unanswered_and_closed() {
    let peer = Peer::start(Script::always(Behaviour::Stall)).await;
    let relay = RelayProc::start(&peer.addr().to_string(), &["--ack-timeout", "300ms"]);
    let mut client = MllpClient::connect(relay.addr).await;
    client.send(&adt(b"S1", "")).await;
    assert!(
        client.ack().await.is_none(),
        "no answer, the connection closed"
    );
    assert_eq!(peer.payloads().len(), 1);
}

#[tokio::test]
async fn one_connections_messages_reach_the_upstream_in_arrival_order() {
    let upstream = ListenProc::start(&["--ack-delay", "5ms"]);
    let relay = RelayProc::start(&upstream.addr.to_string(), &[]);
    let mut client = MllpClient::connect(relay.addr).await;
    let ids: Vec<String> = (0..20).map(|i| format!("O{i}")).collect();
    for id in &ids {
        client.send(&adt(id.as_bytes(), "")).await;
    }
    for id in &ids {
        let answer = client.ack().await.expect("an answer");
        assert_eq!(answer.control_id, id.as_bytes());
        assert_eq!(answer.code, "AA");
    }
    let events = upstream.events_until(|e| is("message")(e) && e["control_id"] == "O19");
    let seen: Vec<_> = events
        .iter()
        .filter(|e| is("message")(e))
        .map(|e| e["control_id"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(seen, ids);
}

#[tokio::test]
async fn a_queue_takes_messages_while_the_upstream_is_down_and_delivers_them_in_order() {
    let dir = tempfile::tempdir().unwrap();
    let queue = dir.path().join("q.db");
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let relay = RelayProc::start(
        &format!("127.0.0.1:{port}"),
        &["--queue", queue.to_str().unwrap(), "--backoff-max", "200ms"],
    );
    let mut client = MllpClient::connect(relay.addr).await;
    let ids: Vec<String> = (0..5).map(|i| format!("Q{i}")).collect();
    for id in &ids {
        client.send(&adt(id.as_bytes(), "")).await;
        let answer = client.ack().await.expect("an answer");
        assert_eq!(answer.code, "AA", "taken by the queue");
    }
    let upstream = ListenProc::start_at(port, &[]);
    let events = upstream.events_until(|e| is("message")(e) && e["control_id"] == "Q4");
    let seen: Vec<_> = events
        .iter()
        .filter(|e| is("message")(e))
        .map(|e| e["control_id"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(seen, ids);
}

#[tokio::test]
async fn a_full_queue_refuses_and_keeps_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let queue = dir.path().join("q.db");
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let relay = RelayProc::start(
        &format!("127.0.0.1:{port}"),
        &["--queue", queue.to_str().unwrap(), "--max-queue", "2"],
    );
    let mut client = MllpClient::connect(relay.addr).await;
    let mut codes = Vec::new();
    for id in ["F1", "F2", "F3"] {
        client.send(&adt(id.as_bytes(), "")).await;
        codes.push(client.ack().await.expect("an answer").code);
    }
    assert_eq!(codes, ["AA", "AA", "AE"]);
    drop(relay);
    let db = rusqlite::Connection::open(&queue).unwrap();
    let rows: Vec<String> = db
        .prepare("SELECT control_id FROM queue ORDER BY id")
        .unwrap()
        .query_map([], |r| r.get(0))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    assert_eq!(rows, ["F1", "F2"]);
}

#[tokio::test]
async fn an_upstream_negative_answer_is_a_dead_letter_not_retried() {
    let dir = tempfile::tempdir().unwrap();
    let queue = dir.path().join("q.db");
    let peer = Peer::start(Script::always(Behaviour::Ack("AR"))).await;
    let relay = RelayProc::start(
        &peer.addr().to_string(),
        &["--queue", queue.to_str().unwrap()],
    );
    let mut client = MllpClient::connect(relay.addr).await;
    client.send(&adt(b"N1", "")).await;
    assert_eq!(client.ack().await.expect("an answer").code, "AA");
    let db = rusqlite::Connection::open(&queue).unwrap();
    let mut status = String::new();
    for _ in 0..100 {
        status = db
            .query_row("SELECT status FROM queue", [], |r| r.get(0))
            .unwrap();
        if status != "pending" {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert_eq!(status, "negative");
    let (code, attempts): (String, u32) = db
        .query_row("SELECT ack_code, attempts FROM queue", [], |r| {
            Ok((r.get(0)?, r.get(1)?))
        })
        .unwrap();
    assert_eq!((code.as_str(), attempts), ("AR", 1));
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert_eq!(peer.payloads().len(), 1, "never sent again");
}

#[tokio::test]
async fn a_record_keeps_each_message_with_its_upstream_answer() {
    let dir = tempfile::tempdir().unwrap();
    let record = dir.path().join("trace.db");
    let peer = Peer::start(Script::always(Behaviour::Ack("AA"))).await;
    let relay = RelayProc::start(
        &peer.addr().to_string(),
        &["--record", record.to_str().unwrap()],
    );
    let mut client = MllpClient::connect(relay.addr).await;
    let message = adt(b"R1", "");
    client.send(&message).await;
    assert_eq!(client.ack().await.expect("an answer").code, "AA");
    let db = rusqlite::Connection::open(&record).unwrap();
    let (status, code, ack_bytes, payload): (String, String, Vec<u8>, Vec<u8>) = db
        .query_row(
            "SELECT status, ack_code, ack, payload FROM queue",
            [],
            |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)),
        )
        .unwrap();
    assert_eq!((status.as_str(), code.as_str()), ("accepted", "AA"));
    assert_eq!(ack_bytes, ack(&message, "AA"));
    assert_eq!(payload, message);
}

#[tokio::test]
async fn json_events_carry_the_relays_figures_every_second() {
    let peer = Peer::start(Script::always(Behaviour::Ack("AA"))).await;
    let relay = RelayProc::start(&peer.addr().to_string(), &[]);
    let mut client = MllpClient::connect(relay.addr).await;
    for i in 0..3 {
        client.send(&adt(format!("F{i}").as_bytes(), "")).await;
        assert_eq!(client.ack().await.expect("an answer").code, "AA");
    }
    let stats = loop {
        let event = relay
            .events
            .recv_timeout(Duration::from_secs(10))
            .expect("a relay_stats event");
        if event["event"] == "relay_stats" && event["settled"] == 3 {
            break event;
        }
    };
    assert_eq!(stats["received"], 3, "{stats}");
    assert_eq!(stats["queue_depth"], 0, "{stats}");
    assert!(stats["ack_p50_ms"].as_f64().is_some(), "{stats}");
    assert!(stats["ack_p99_ms"].as_f64().is_some(), "{stats}");
    assert_eq!(stats["upstream_state"], "CONNECTED", "{stats}");
    assert_eq!(stats["reconnects"], 0, "{stats}");
}
