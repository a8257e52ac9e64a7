//! Integration tests: what `mllp listen` answers, as a real process: enhanced-mode and batch
//! acknowledgement, and each test-double behaviour as a client sees it.

use crate::support::listen_proc::{is, ListenProc};
use crate::support::mllp_client::{adt, marked, MllpClient};
use serde_json::Value;
use std::time::Duration;

#[tokio::test]
async fn enhanced_al_al_is_answered_ca_then_aa_with_the_same_msa2() {
    let server = ListenProc::start(&["--format", "json"]);
    let mut client = MllpClient::connect(server.addr).await;
    client.send(&marked("E1", "AL|AL")).await;
    let accept = client.ack().await.unwrap();
    let application = client.ack().await.unwrap();
    assert_eq!(
        (accept.code.as_str(), application.code.as_str()),
        ("CA", "AA")
    );
    assert_eq!(accept.control_id, b"E1");
    assert_eq!(application.control_id, b"E1");
    // NE for the application ACK: only the accept ACK.
    client.send(&marked("E2", "AL|NE")).await;
    assert_eq!(client.ack().await.unwrap().code, "CA");
    assert!(client.silent_for(Duration::from_millis(200)).await);
}

fn batch() -> Vec<u8> {
    let mut b = b"FHS|^~\\&|SND|SF|RCV|RF|20240101120000||||F1\rBHS|^~\\&|SND|SF|RCV|RF|20240101120000||||B1\r".to_vec();
    for id in ["B-1", "B-2", "B-3"] {
        b.extend_from_slice(&adt(id.as_bytes(), ""));
    }
    b.extend_from_slice(b"BTS|3\rFTS|1\r");
    b
}

#[tokio::test]
async fn batch_ack_answers_a_three_message_batch() {
    let server = ListenProc::start(&["--format", "json", "--batch-ack"]);
    let mut client = MllpClient::connect(server.addr).await;
    client.send(&batch()).await;
    let ack = client.ack().await.unwrap();
    let text = String::from_utf8_lossy(&ack.payload).into_owned();
    let segments: Vec<&str> = text.split('\r').filter(|s| !s.is_empty()).collect();
    let names: Vec<&str> = segments.iter().map(|s| &s[..3]).collect();
    assert_eq!(
        names,
        ["FHS", "BHS", "MSH", "MSA", "MSH", "MSA", "MSH", "MSA", "BTS", "FTS"],
        "{text:?}"
    );
    let msas: Vec<&str> = segments
        .iter()
        .filter(|s| s.starts_with("MSA"))
        .copied()
        .collect();
    assert_eq!(msas, ["MSA|AA|B-1", "MSA|AA|B-2", "MSA|AA|B-3"]);

    let plain = ListenProc::start(&["--format", "json"]);
    let mut client = MllpClient::connect(plain.addr).await;
    client.send(&batch()).await;
    assert!(!["AA", "CA"].contains(&client.ack().await.unwrap().code.as_str()));
}

/// The ACK codes of `n` messages on one connection (`None` where none came before the close).
async fn codes(args: &[&str], n: usize) -> Vec<Option<String>> {
    let server = ListenProc::start(args);
    let mut client = MllpClient::connect(server.addr).await;
    let mut out = Vec::new();
    for i in 0..n {
        client.send(&marked(&format!("X{i}"), "")).await;
        out.push(client.ack().await.map(|a| a.code));
    }
    out
}

#[tokio::test]
async fn each_test_double_behaviour_is_seen_by_a_client() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().to_str().unwrap();
    let some = |c: &str| Some(c.to_string());
    assert_eq!(
        codes(&["--nack-rate", "1", "--out-dir", out], 1).await,
        [some("AE")]
    );
    assert_eq!(
        codes(&["--reject-rate", "1", "--out-dir", out], 1).await,
        [some("AR")]
    );
    assert_eq!(
        std::fs::read_dir(dir.path()).unwrap().count(),
        0,
        "nothing committed"
    );
    assert_eq!(codes(&["--ack", "CR"], 1).await, [some("CR")]);
    assert_eq!(
        codes(&["--drop-after", "2"], 3).await,
        [some("AA"), some("AA"), None]
    );

    // Silent: committed, never answered.
    let server = ListenProc::start(&["--silent-rate", "1", "--out-dir", out]);
    let mut client = MllpClient::connect(server.addr).await;
    client.send(&marked("Q1", "")).await;
    let event = server.wait_event(is("message"));
    assert_eq!(event["ack_code"], Value::Null);
    assert!(client.silent_for(Duration::from_millis(200)).await);
    assert_eq!(
        std::fs::read_dir(dir.path()).unwrap().count(),
        1,
        "committed"
    );

    // Delay: nothing at first, then the ACK.
    let server = ListenProc::start(&["--ack-delay", "1s"]);
    let mut client = MllpClient::connect(server.addr).await;
    client.send(&marked("Q2", "")).await;
    assert!(client.silent_for(Duration::from_millis(100)).await);
    assert_eq!(client.ack().await.unwrap().code, "AA");

    // Rates repeat with the seed.
    let args = ["--nack-rate", "0.5", "--seed", "9"];
    let first = codes(&args, 12).await;
    assert_eq!(first, codes(&args, 12).await);
    assert!(
        first.contains(&some("AA")) && first.contains(&some("AE")),
        "{first:?}"
    );
}

#[tokio::test]
async fn an_inbound_ack_is_neither_refused_nor_counted_as_rejected() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().to_str().unwrap();
    let server = ListenProc::start(&["--reject-rate", "1", "--out-dir", out]);
    let mut client = MllpClient::connect(server.addr).await;
    client
        .send(b"MSH|^~\\&|A|B|C|D|20240101000000||ACK^A01|K1|P|2.5\rMSA|AA|X0\r")
        .await;
    client.send(&marked("X1", "")).await;
    // The ACK goes unanswered; the next message is the one refused.
    assert_eq!(client.ack().await.unwrap().code, "AR");
    server.wait_event(is("message"));
    server.wait_event(is("message"));
    server.signal("TERM");
    drop(client);
    let (status, rest, _) = server.wait();
    assert_eq!(status.code(), Some(0));
    assert!(rest.iter().all(|v| v["event"] != "sink_error"), "{rest:?}");
    let stats = rest
        .iter()
        .find(|v| v["event"] == "stats")
        .expect("stats on exit");
    assert_eq!(stats["messages"], 2, "{stats}");
    assert_eq!(stats["rejected"], 1, "{stats}");
    assert_eq!(stats["committed"], 1, "{stats}");
    assert_eq!(stats["inbound_acks"], 1, "{stats}");
    assert_eq!(stats["nacks_by_reason"]["handler-rejected"], 1, "{stats}");
}
