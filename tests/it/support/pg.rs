//! A real PostgreSQL for the tests, found through the environment `.ci/run` sets up (see
//! `.ci/pg-cluster`): `MLLP_TEST_PG` (a server URL), `MLLP_TEST_PG_OUTAGE` and
//! `MLLP_TEST_PG_OUTAGE_CTL` (a second cluster and its stop/start script, for the outage tests).
//! Without them a test is skipped with one line saying why; under CI (`CI` set) it fails.

use std::time::Duration;
use tokio_postgres::{Client, NoTls};

/// The variable's value, or `None` after one line saying the test is skipped (a failure in CI).
pub fn required(var: &str) -> Option<String> {
    if let Ok(value) = std::env::var(var) {
        return Some(value);
    }
    assert!(
        std::env::var_os("CI").is_none(),
        "{var} is not set: under CI this test needs a real PostgreSQL (.ci/run starts one with .ci/pg-cluster)"
    );
    eprintln!("skipped: {var} is not set (start a throw-away server with .ci/pg-cluster, as .ci/run does)");
    None
}

/// host and port of a server URL.
pub fn host_port(url: &str) -> (String, u16) {
    let config: tokio_postgres::Config = url.parse().unwrap();
    let host = match &config.get_hosts()[0] {
        tokio_postgres::config::Host::Tcp(h) => h.clone(),
        other => panic!("not a TCP host: {other:?}"),
    };
    (host, config.get_ports()[0])
}

/// Connect to `url`, waiting (bounded) for a server on its way back up from a crash.
pub async fn connect(url: &str) -> Client {
    for _ in 0..100 {
        match tokio_postgres::connect(url, NoTls).await {
            Ok((client, connection)) => {
                tokio::spawn(connection);
                return client;
            }
            // Starting up, recovering, or a session cut as the server restarts.
            Err(e) if e.code().is_none_or(|c| c.code().starts_with("57P")) => {
                tokio::time::sleep(Duration::from_millis(100)).await;
            }
            Err(e) => panic!("connecting to PostgreSQL: {e}"),
        }
    }
    panic!("PostgreSQL did not come back");
}

/// A new, empty database on the server of `url`, named after the test (or benchmark) and this
/// process; the URL to it.
pub async fn fresh_database(url: &str, test: &str) -> String {
    let admin = connect(url).await;
    let name = format!("mllp_{test}_{}", std::process::id());
    admin
        .batch_execute(&format!("DROP DATABASE IF EXISTS {name}"))
        .await
        .unwrap();
    admin
        .batch_execute(&format!("CREATE DATABASE {name}"))
        .await
        .unwrap();
    with_database(url, &name)
}

/// `url` naming the database `name` instead of its own; its user, host and port are kept.
fn with_database(url: &str, name: &str) -> String {
    let base = url.split('?').next().unwrap_or(url);
    let (scheme, rest) = base.split_once("://").expect("a postgres:// URL");
    let server = rest.split('/').next().unwrap_or(rest);
    format!("{scheme}://{server}/{name}?sslmode=disable")
}

/// Every stored row: control ID and payload, in insertion order.
pub async fn rows(url: &str) -> Vec<(String, Vec<u8>)> {
    // The server may be on its way back up.
    for _ in 0..100 {
        if let Ok((client, connection)) = tokio_postgres::connect(url, NoTls).await {
            tokio::spawn(connection);
            return client
                .query("SELECT control_id, payload FROM messages ORDER BY id", &[])
                .await
                .unwrap()
                .iter()
                .map(|r| (r.get(0), r.get(1)))
                .collect();
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    panic!("PostgreSQL did not come back");
}

/// Run the outage cluster's control script: `stop` or `start`.
pub fn ctl(script: &str, action: &str) {
    let status = std::process::Command::new(script)
        .arg(action)
        .stdout(std::process::Stdio::null())
        .status()
        .unwrap();
    assert!(status.success(), "{script} {action}: {status}");
}
