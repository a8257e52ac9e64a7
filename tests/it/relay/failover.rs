//! `relay --to A --to B`: an upstream that refuses hands the link to the next after
//! `--failover-after` failed connects; each message is still answered downstream only after
//! an upstream committed it, and the events name each connection's host.

use super::proc::RelayProc;
use crate::support::mllp_client::{adt, MllpClient};
use crate::support::peer::{Behaviour, Peer, Script};
use crate::support::ports::closed_port;
use std::time::Duration;

#[tokio::test(flavor = "multi_thread")]
async fn an_upstream_that_refuses_hands_the_link_to_the_next() {
    let a = format!("127.0.0.1:{}", closed_port());
    let backup = Peer::start(Script::always(Behaviour::Ack("AA"))).await;
    let b = format!("127.0.0.1:{}", backup.port());
    let args = [
        "--to",
        b.as_str(),
        "--failover-after",
        "2",
        "--backoff-initial",
        "10ms",
        "--backoff-max",
        "50ms",
    ];
    let relay = RelayProc::start(&a, &args);
    let seen = relay.events_until(|e| e["event"] == "upstream_state" && e["to"] == "CONNECTED");
    let moved: Vec<_> = seen
        .iter()
        .filter(|e| e["event"] == "upstream_failover")
        .collect();
    assert_eq!(moved.len(), 1, "{seen:#?}");
    assert_eq!(
        (&moved[0]["from"], &moved[0]["to"]),
        (&a.clone().into(), &b.clone().into())
    );
    let failures: Vec<_> = seen
        .iter()
        .filter(|e| e["event"] == "upstream_reconnecting")
        .collect();
    assert!(failures.iter().all(|e| e["upstream"] == a), "{seen:#?}");
    assert_eq!(seen.last().unwrap()["upstream"], b, "{seen:#?}");

    let mut client = MllpClient::connect(relay.addr).await;
    for i in 0..3 {
        let id = format!("FO{i}");
        client.send(&adt(id.as_bytes(), "")).await;
        let ack = client.ack().await.expect("an answer");
        assert_eq!(ack.code, "AA");
        assert_eq!(ack.control_id, id.as_bytes());
    }
    assert_eq!(backup.payloads().len(), 3);
}

#[test]
fn several_upstreams_take_failover_flags_and_refuse_a_bad_one() {
    let run = |args: &[&str]| {
        let mut all = vec!["relay", "--listen", "0", "--to", "127.0.0.1:1"];
        all.extend(args);
        crate::support::mllp()
            .args(all)
            .timeout(Duration::from_secs(10))
            .output()
            .unwrap()
    };
    let zero = run(&["--to", "127.0.0.1:2", "--failover-after", "0"]);
    assert_eq!(zero.status.code(), Some(2));
    let bad = run(&["--to", "not a host"]);
    assert_eq!(bad.status.code(), Some(2));
}

/// `--to A --to B --failover-after 2`, A accepting and closing at once (on the first bytes),
/// B answering `AA`; `messages` pipelined downstream. Each answer read, and the relay's events.
async fn through_a_closing_primary(messages: usize) -> (Vec<String>, Peer, Vec<serde_json::Value>) {
    let closing = Peer::start(Script::always(Behaviour::CloseAfterFirstRead)).await;
    let backup = Peer::start(Script::always(Behaviour::Ack("AA"))).await;
    let (a, b) = (closing.addr().to_string(), backup.addr().to_string());
    let args = [
        "--to",
        &b,
        "--failover-after",
        "2",
        "--backoff-initial",
        "10ms",
    ];
    let relay = RelayProc::start(&a, &args);
    let mut client = MllpClient::connect(relay.addr).await;
    for i in 0..messages {
        client.send(&adt(format!("FA{i}").as_bytes(), "")).await;
    }
    let mut answered = Vec::new();
    while let Ok(Some(ack)) = client.ack_within(Duration::from_secs(10)).await {
        assert_eq!(ack.code, "AA", "only B's AA is passed on");
        answered.push(String::from_utf8_lossy(&ack.control_id).into_owned());
        if answered.len() == messages {
            break;
        }
    }
    drop(client);
    // The downstream connection's end is said before the stop, whoever ended it.
    let mut events = relay.events_until(|e| e["event"] == "connection_closed");
    events.extend(relay.terminate());
    (answered, backup, events)
}

/// Whatever became of the messages, each downstream `AA` is one B gave, and a downstream
/// connection the relay ends says why truly: the upstream closed, not a stop.
#[tokio::test(flavor = "multi_thread")]
async fn a_primary_that_closes_at_once_never_passes_for_a_stop() {
    let (answered, backup, events) = through_a_closing_primary(5).await;
    let at_b: Vec<String> = backup
        .payloads()
        .iter()
        .map(|p| String::from_utf8_lossy(p).into_owned())
        .collect();
    for id in &answered {
        assert!(
            at_b.iter().any(|p| p.contains(&format!("|{id}|"))),
            "{id} AA'd, never at B"
        );
    }
    let closes: Vec<_> = events
        .iter()
        .filter(|e| e["event"] == "connection_closed")
        .collect();
    assert_eq!(closes.len(), 1, "{events:#?}");
    assert_eq!(closes[0]["cause"], "peer-closed", "{events:#?}");
}

/// A connection that closes before any answer counts toward `--failover-after`: the relay moves
/// to B and delivers everything there, each `AA` after B's.
#[tokio::test(flavor = "multi_thread")]
async fn a_primary_that_closes_at_once_hands_everything_to_the_next() {
    let (answered, backup, _) = through_a_closing_primary(5).await;
    let expected: Vec<String> = (0..5).map(|i| format!("FA{i}")).collect();
    assert_eq!(answered, expected);
    assert_eq!(backup.payloads().len(), 5);
}
