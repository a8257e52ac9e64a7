//! Integration tests: `mllp listen`'s storage as a real process: the SQLite sink (complete rows
//! after a SIGKILL right after the ACK, a file that is not a database) and de-duplication
//! across restarts on the same out-dir or SQLite file.

use crate::support::listen_proc::{is, ListenProc};
use crate::support::mllp_client::{marked, MllpClient};
use std::path::Path;

#[test]
fn a_file_that_is_not_a_database_is_a_usage_error() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("notes.db");
    std::fs::write(&file, vec![b'x'; 8192]).unwrap();
    let out = crate::support::mllp()
        .args(["listen", "--port", "0", "--sqlite", file.to_str().unwrap()])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("notes.db"));
}

fn rows(file: &Path) -> Vec<(String, String, String, i64, Vec<u8>)> {
    let db = rusqlite::Connection::open(file).unwrap();
    let mut q = db
        .prepare("SELECT control_id, msh7, message_type, bytes, payload FROM messages ORDER BY id")
        .unwrap();
    q.query_map([], |r| {
        Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?, r.get(4)?))
    })
    .unwrap()
    .collect::<Result<_, _>>()
    .unwrap()
}

#[tokio::test]
async fn sqlite_rows_are_complete_after_a_sigkill_right_after_the_ack() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("rx.db");
    let mut server = ListenProc::start(&["--sqlite", file.to_str().unwrap()]);
    let mut client = MllpClient::connect(server.addr).await;
    let sent: Vec<Vec<u8>> = (1..=3).map(|i| marked(&format!("S{i}"), "")).collect();
    for m in &sent {
        client.send(m).await;
    }
    for _ in &sent {
        assert_eq!(client.ack().await.unwrap().code, "AA");
    }
    server.kill();
    let got = rows(&file);
    assert_eq!(got.len(), 3);
    for (i, (id, msh7, kind, bytes, payload)) in got.iter().enumerate() {
        assert_eq!(id, &format!("S{}", i + 1));
        assert_eq!(
            (msh7.as_str(), kind.as_str()),
            ("20240101120000", "ADT^A01")
        );
        assert_eq!(*bytes as usize, sent[i].len());
        assert_eq!(payload, &sent[i]);
    }
}

/// Send `id` to a fresh `listen ARGS`, return its ACK code and whether it was a duplicate.
async fn once(args: &[&str], id: &str) -> (String, bool) {
    let server = ListenProc::start(args);
    let mut client = MllpClient::connect(server.addr).await;
    client.send(&marked(id, "")).await;
    let code = client.ack().await.unwrap().code;
    let event = server.wait_event(is("message"));
    (code, event["duplicate"] == true)
}

#[tokio::test]
async fn dedupe_survives_a_restart_on_the_same_out_dir_and_sqlite_file() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("inbox");
    std::fs::create_dir(&out).unwrap();
    let args = ["--out-dir", out.to_str().unwrap(), "--dedupe"];
    assert_eq!(once(&args, "D1").await, ("AA".into(), false));
    assert_eq!(once(&args, "D1").await, ("AA".into(), true));
    assert_eq!(once(&args, "D2").await, ("AA".into(), false));
    let files = std::fs::read_dir(&out)
        .unwrap()
        .filter(|e| {
            e.as_ref()
                .unwrap()
                .file_name()
                .to_string_lossy()
                .ends_with(".hl7")
        })
        .count();
    assert_eq!(files, 2, "the repeat was not committed again");

    let file = dir.path().join("rx.db");
    let args = ["--sqlite", file.to_str().unwrap(), "--dedupe"];
    assert_eq!(once(&args, "D1").await, ("AA".into(), false));
    assert_eq!(once(&args, "D1").await, ("AA".into(), true));
    assert_eq!(rows(&file).len(), 1);
}
