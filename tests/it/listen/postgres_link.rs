//! Integration tests: what `mllp listen --postgres` says about its database link. At start, a
//! database it cannot use stops it with the exit code of the failure's class (no `listening`);
//! while running, a link lost is one `store_lost` event (even with no message waiting) and its
//! return one `store_restored`, with the messages refused meanwhile.

use crate::support::listen_proc::{is, ListenProc};
use crate::support::mllp_client::{marked, MllpClient};
use crate::support::ports::closed_port;
use crate::support::{mllp, pg};
use serde_json::Value;
use std::time::Duration;

/// The outage cluster is stopped and started by more than one test: one at a time.
pub static OUTAGE: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

/// Run `mllp --log-format json listen --port 0 --postgres URL`; exit code and its error event.
fn start_failure(url: &str) -> (i32, Value) {
    let out = mllp()
        .args([
            "--log-format",
            "json",
            "listen",
            "--port",
            "0",
            "--postgres",
            url,
        ])
        .timeout(Duration::from_secs(30))
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    let events: Vec<Value> = stderr
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|_| panic!("not JSON: {l}")))
        .collect();
    assert!(
        !events.iter().any(|e| e["event"] == "listening"),
        "it must not listen without its store: {stderr}"
    );
    let error = events
        .iter()
        .find(|e| e["event"] == "error")
        .unwrap_or_else(|| panic!("no error event: {stderr}"))
        .clone();
    (out.status.code().unwrap(), error)
}

#[test]
fn start_up_with_the_database_unreachable_exits_4_naming_it_without_the_password() {
    let port = closed_port();
    let (code, error) = start_failure(&format!("postgres://mllp:s3cret@127.0.0.1:{port}/hl7"));
    assert_eq!(code, 4, "{error}");
    assert_eq!(error["exit_code"], 4);
    assert_eq!(error["cause"], "connection-refused", "{error}");
    let message = error["message"].as_str().unwrap();
    assert!(
        message.contains(&format!(
            "cannot reach the database mllp@127.0.0.1:{port}/hl7"
        )),
        "{message}"
    );
    assert!(message.contains("refused"), "the reason is said: {message}");
    assert!(!message.contains("s3cret"), "{message}");
}

#[test]
fn a_connection_string_that_is_not_one_is_a_usage_error() {
    let (code, error) = start_failure("postgres://mllp@db:notaport/hl7");
    assert_eq!(code, 2, "{error}");
    assert!(error["message"].as_str().unwrap().contains("--postgres"));
}

#[tokio::test(flavor = "multi_thread")]
async fn start_up_refused_by_the_database_exits_5_saying_why() {
    let Some(server) = pg::required("MLLP_TEST_PG") else {
        return;
    };
    let (host, port) = pg::host_port(&server);
    let url = format!("postgres://postgres@{host}:{port}/mllp_no_such_database?sslmode=disable");
    let (code, error) = tokio::task::spawn_blocking(move || start_failure(&url))
        .await
        .unwrap();
    assert_eq!(code, 5, "{error}");
    let message = error["message"].as_str().unwrap();
    assert!(message.contains("refused the listener"), "{message}");
    assert!(message.contains("3D000 invalid_catalog_name"), "{message}");
}

/// Kill the listener's database sessions from the server side, as an administrator would.
async fn terminate_sessions(url: &str) -> u64 {
    let db = url.rsplit('/').next().unwrap().split('?').next().unwrap();
    let client = pg::connect(url).await;
    let rows = client
        .query(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity
             WHERE datname = $1 AND pid <> pg_backend_pid() AND application_name = 'mllp listen'",
            &[&db],
        )
        .await
        .unwrap();
    rows.len() as u64
}

#[tokio::test(flavor = "multi_thread")]
async fn a_link_cut_while_idle_is_reported_lost_at_once_then_back() {
    let Some(server) = pg::required("MLLP_TEST_PG") else {
        return;
    };
    let url = pg::fresh_database(&server, "idle_cut").await;
    let listener = ListenProc::start(&["--postgres", &url]);
    let mut client = MllpClient::connect(listener.addr).await;
    client.send(&marked("BEFORE", "")).await;
    assert_eq!(client.ack().await.unwrap().code, "AA");
    assert_eq!(terminate_sessions(&url).await, 1);
    // No message is waiting: the loss is seen on the link itself.
    let lost = tokio::task::block_in_place(|| listener.wait_event(is("store_lost")));
    let detail = lost["detail"].as_str().unwrap();
    assert!(detail.contains("57P01"), "the server's reason: {detail}");
    let back = tokio::task::block_in_place(|| listener.wait_event(is("store_restored")));
    assert_eq!(back["refused"], 0, "{back}");
    assert!(back["down_ms"].is_u64(), "{back}");
    client.send(&marked("AFTER", "")).await;
    assert_eq!(client.ack().await.unwrap().code, "AA");
    let ids: Vec<String> = pg::rows(&url).await.into_iter().map(|(id, _)| id).collect();
    assert_eq!(ids, ["BEFORE", "AFTER"]);
}

/// Starts the stopped outage cluster again, also when the test fails before it does.
struct StartOnDrop(Option<String>);

impl StartOnDrop {
    fn start(mut self) {
        if let Some(ctl) = self.0.take() {
            pg::ctl(&ctl, "start");
        }
    }
}

impl Drop for StartOnDrop {
    fn drop(&mut self) {
        if let Some(ctl) = self.0.take() {
            let _ = std::process::Command::new(ctl).arg("start").status();
        }
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_database_away_is_reported_lost_and_back_with_the_messages_refused_meanwhile() {
    let (Some(server), Some(ctl)) = (
        pg::required("MLLP_TEST_PG_OUTAGE"),
        pg::required("MLLP_TEST_PG_OUTAGE_CTL"),
    ) else {
        return;
    };
    let _one_at_a_time = OUTAGE.lock().await;
    let url = pg::fresh_database(&server, "away").await;
    let listener = ListenProc::start(&["--postgres", &url]);
    let stop = ctl.clone();
    tokio::task::spawn_blocking(move || pg::ctl(&stop, "stop"))
        .await
        .unwrap();
    let restart = StartOnDrop(Some(ctl.clone()));
    let lost = tokio::task::block_in_place(|| listener.wait_event(is("store_lost")));
    assert!(lost["detail"].is_string(), "{lost}");
    let mut client = MllpClient::connect(listener.addr).await;
    for id in ["AWAY1", "AWAY2"] {
        client.send(&marked(id, "")).await;
        assert_eq!(
            client.ack().await.unwrap().code,
            "AE",
            "nothing can be kept"
        );
    }
    tokio::task::spawn_blocking(move || restart.start())
        .await
        .unwrap();
    // Back without a message to carry it: the writer reconnects on its own.
    let back = tokio::task::block_in_place(|| listener.wait_event(is("store_restored")));
    assert_eq!(back["refused"], 2, "{back}");
    client.send(&marked("BACK", "")).await;
    assert_eq!(client.ack().await.unwrap().code, "AA");
    let ids: Vec<String> = pg::rows(&url).await.into_iter().map(|(id, _)| id).collect();
    assert_eq!(ids, ["BACK"]);
    listener.assert_no_payload();
}
