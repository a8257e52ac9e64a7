//! Every sink of the listener stalled, or slower than its peers, while 1,000 connections each
//! push 32 messages of 64 KiB: what waits for the sink counts in the budget, so the listener
//! stops reading instead of holding more.

use crate::load::{flood, Load};
use crate::proc::{Proc, ONE_AT_A_TIME};

/// Flood `listener` with the crowd and hold it to the limit.
async fn crowd(listener: &Proc, case: &str) {
    let flooded = flood(listener.addr, Load::CROWD).await;
    eprintln!(
        "{case}: {} MiB sent, {} answers",
        flooded.sent >> 20,
        flooded.answers
    );
    listener.assert_peak_within(case);
    drop(flooded);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "long: run with --ignored"]
async fn a_stdout_nobody_reads() {
    let _alone = ONE_AT_A_TIME.lock().await;
    let listener = Proc::listen_stalled_stdout(&[]);
    crowd(&listener, "listen, stdout not read").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_out_dir_slower_than_its_peers() {
    let _alone = ONE_AT_A_TIME.lock().await;
    let dir = tempfile::tempdir().unwrap();
    let listener = Proc::listen(&["--out-dir", dir.path().to_str().unwrap()]);
    crowd(&listener, "listen --out-dir").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_sqlite_file_slower_than_its_peers() {
    let _alone = ONE_AT_A_TIME.lock().await;
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("rx.db");
    let listener = Proc::listen(&["--sqlite", file.to_str().unwrap()]);
    crowd(&listener, "listen --sqlite").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_postgres_database_slower_than_its_peers() {
    let Ok(url) = std::env::var("MLLP_TEST_PG") else {
        assert!(
            std::env::var_os("CI").is_none(),
            "MLLP_TEST_PG is not set: under CI this test needs a real PostgreSQL"
        );
        eprintln!("skipped: MLLP_TEST_PG is not set (start a server with .ci/pg-cluster)");
        return;
    };
    let _alone = ONE_AT_A_TIME.lock().await;
    let (admin, connection) = tokio_postgres::connect(&url, tokio_postgres::NoTls)
        .await
        .unwrap();
    tokio::spawn(connection);
    let name = format!("mllp_memory_{}", std::process::id());
    for statement in [
        format!("DROP DATABASE IF EXISTS {name}"),
        format!("CREATE DATABASE {name}"),
    ] {
        admin.batch_execute(&statement).await.unwrap();
    }
    let base = url.split('?').next().unwrap();
    let (scheme, rest) = base.split_once("://").unwrap();
    let server = rest.split('/').next().unwrap();
    let database = format!("{scheme}://{server}/{name}?sslmode=disable");
    let listener = Proc::listen(&["--postgres", &database]);
    crowd(&listener, "listen --postgres").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "long: run with --ignored"]
async fn an_exec_command_that_does_not_read() {
    let _alone = ONE_AT_A_TIME.lock().await;
    let listener = Proc::listen(&["--exec", "sleep 60; cat >/dev/null"]);
    crowd(&listener, "listen --exec").await;
}
