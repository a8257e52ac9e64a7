//! `mllp listen --dial` against an engine that only accepts connections and pushes messages
//! down them: every message stored before its AA (out-dir and SQLite), a connection dropped
//! mid-batch and the rest received on the next one, a refused connect reported with its class
//! while dialling goes on, and Release 2 on a dialled connection. No event carries the payload
//! marker.

use crate::support::listen_proc::{is, ListenProc};
use crate::support::no_payload::MARKER;
use crate::support::peer_wire::{control_id, message};
use crate::support::ports::closed_port;
use crate::support::reverse::{FirstConnection, PushingEngine};
use crate::support::store::Store;
use std::collections::BTreeSet;

fn messages(prefix: &str, n: usize) -> Vec<Vec<u8>> {
    (1..=n)
        .map(|i| message(&format!("{prefix}{i}"), MARKER))
        .collect()
}

fn ids(messages: &[Vec<u8>]) -> BTreeSet<String> {
    messages.iter().filter_map(|m| control_id(m)).collect()
}

#[tokio::test(flavor = "multi_thread")]
async fn an_engine_that_only_accepts_gets_each_message_stored_before_its_aa() {
    for kind in ["out-dir", "sqlite"] {
        let root = tempfile::tempdir().unwrap();
        let store = Store::new(kind, root.path());
        let sent = messages("D", 5);
        let engine =
            PushingEngine::start(sent.clone(), FirstConnection::Whole, Some(store.clone())).await;
        let args = store.args();
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let addr = engine.addr.to_string();
        let listener = ListenProc::dialling(engine.addr, &args);
        let pushed = engine.finished().await;
        assert_eq!(pushed.connections, 1, "{kind}");
        assert!(
            pushed.answers.iter().all(|(_, code)| code == "AA"),
            "{kind}: {:?}",
            pushed.answers
        );
        assert_eq!(pushed.answers.len(), 5, "{kind}");
        assert_eq!(ids(&store.messages()), ids(&sent), "{kind}");
        let dialled = listener.wait_event(is("dialled"));
        assert_eq!(dialled["target"], addr.as_str(), "{kind}");
        listener.wait_event(is("message"));
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_connection_dropped_mid_batch_is_dialled_again_and_the_rest_arrive() {
    let root = tempfile::tempdir().unwrap();
    let store = Store::new("out-dir", root.path());
    let sent = messages("R", 8);
    // Two answered, two more written and half of a fifth, then the engine drops the link.
    let first = FirstConnection::Drop {
        answered: 2,
        written: 2,
    };
    let engine = PushingEngine::start(sent.clone(), first, Some(store.clone())).await;
    let args = store.args();
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let listener = ListenProc::dialling(engine.addr, &args);
    let pushed = engine.finished().await;
    assert!(pushed.connections >= 2, "{pushed:?}");
    // Every message answered AA, each checked against the store when its answer came.
    let answered: BTreeSet<String> = pushed.answers.iter().map(|(id, _)| id.clone()).collect();
    assert_eq!(answered, ids(&sent));
    assert!(pushed.answers.iter().all(|(_, code)| code == "AA"));
    assert_eq!(ids(&store.messages()), ids(&sent));
    // The half frame was never stored: every stored message is whole.
    assert!(store.messages().iter().all(|m| sent.contains(m)));
    listener.wait_event(is("dialled"));
    listener.wait_event(is("dialled"));
}

#[tokio::test(flavor = "multi_thread")]
async fn a_refused_connect_is_said_with_its_class_and_dialling_goes_on() {
    let addr = std::net::SocketAddr::from(([127, 0, 0, 1], closed_port()));
    let root = tempfile::tempdir().unwrap();
    let store = Store::new("out-dir", root.path());
    let args = store.args();
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let listener = ListenProc::dialling(addr, &args);
    for attempt in 1..=2 {
        let failed = listener.wait_event(is("dial_failed"));
        assert_eq!(failed["cause"], "connection-refused", "{failed}");
        assert_eq!(failed["class"], "transient", "{failed}");
        assert_eq!(failed["attempt"], attempt, "{failed}");
    }
    // The engine comes up on that port: the next connect reaches it.
    let engine = tokio::net::TcpListener::bind(addr).await.unwrap();
    let (mut tcp, _) = tokio::time::timeout(std::time::Duration::from_secs(30), engine.accept())
        .await
        .expect("dialled again")
        .unwrap();
    use tokio::io::AsyncWriteExt;
    let payload = message("UP1", MARKER);
    tcp.write_all(&crate::support::peer_wire::frame(&payload))
        .await
        .unwrap();
    let done = listener.wait_event(is("message"));
    assert_eq!(done["ack_code"], "AA", "{done}");
    assert_eq!(ids(&store.messages()), ids(&[payload]));
}

#[tokio::test(flavor = "multi_thread")]
async fn release_2_on_a_dialled_connection_answers_with_commit_blocks() {
    let root = tempfile::tempdir().unwrap();
    let store = Store::new("sqlite", root.path());
    let sent = messages("T", 3);
    let engine =
        PushingEngine::start(sent.clone(), FirstConnection::Whole, Some(store.clone())).await;
    let mut args = store.args();
    args.push("--mllp2".into());
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let _listener = ListenProc::dialling(engine.addr, &args);
    let pushed = engine.finished().await;
    assert!(
        pushed.answers.iter().all(|(_, code)| code == "commit"),
        "{:?}",
        pushed.answers
    );
    assert_eq!(ids(&store.messages()), ids(&sent));
}

#[test]
fn flags_that_mean_nothing_for_one_dialled_connection_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().to_str().unwrap();
    for flag in [
        &["--max-connections", "5"][..],
        &["--max-connections-per-peer", "2"][..],
        &["--evict-idle-after", "5s"][..],
        &["--client-auth", "must"][..],
    ] {
        let output = crate::support::mllp()
            .args(["listen", "--dial", "127.0.0.1:9", "--out-dir", out])
            .args(flag)
            .timeout(std::time::Duration::from_secs(20))
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert_eq!(output.status.code(), Some(2), "{flag:?}: {stderr}");
        assert!(stderr.contains(flag[0]), "{flag:?}: {stderr}");
        assert!(!stderr.contains("--tls-cert"), "{flag:?}: {stderr}");
    }
}
