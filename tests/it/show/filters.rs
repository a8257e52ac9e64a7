//! `--where` on `show`, `check` and `send` (files, stdin, `--from-db`): only the messages every
//! filter admits; the others counted, never an error.

use super::{adt, three};
use crate::support::mllp;
use crate::support::peer::{Behaviour, Peer, Script};
use crate::support::peer_wire::control_id;
use crate::support::send_proc::finish;

fn ids(stdout: &[u8]) -> Vec<String> {
    String::from_utf8_lossy(stdout)
        .lines()
        .map(|l| l.split('\t').nth(1).unwrap_or_default().to_string())
        .collect()
}

#[test]
fn show_keeps_what_every_filter_admits_and_counts_the_rest() {
    let dir = tempfile::tempdir().unwrap();
    let file = three(dir.path());
    let show = |filters: &[&str]| {
        let mut cmd = mllp();
        cmd.args(["show", "--get", "MSH-10"]).arg(&file);
        for f in filters {
            cmd.args(["--where", f]);
        }
        cmd.output().unwrap()
    };
    let out = show(&["PID-3.1=100002"]);
    assert!(out.status.success());
    assert_eq!(ids(&out.stdout), ["C2"]);
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert!(stderr.contains("--where left out 2"), "{stderr}");
    assert_eq!(ids(&show(&["PID-3.1!=100002"]).stdout), ["C1", "C3"]);
    assert_eq!(ids(&show(&["PID-5.1~^(DOE|ROE)$"]).stdout), ["C1", "C3"]);
    assert_eq!(ids(&show(&["PID-3(*).1=77", "MSH-10~3"]).stdout), ["C3"]);
    assert_eq!(ids(&show(&["PV1-2"]).stdout), Vec::<String>::new());
    assert_eq!(ids(&show(&["OBX(2)-5"]).stdout), ["C1", "C2", "C3"]);
    // From stdin alike.
    let out = mllp()
        .args(["show", "--get", "MSH-10", "--where", "PID-3.1=100003"])
        .write_stdin(std::fs::read(&file).unwrap())
        .output()
        .unwrap();
    assert_eq!(ids(&out.stdout), ["C3"]);
}

#[test]
fn a_malformed_filter_is_a_usage_error() {
    for (filter, said) in [
        ("PID-3.x=1", "`x` at character 7"),
        ("PID-3!1", "`!` at character 6"),
        ("PID-3~(", "not a regular expression"),
    ] {
        let out = mllp()
            .args(["check", "-", "--where", filter])
            .write_stdin("")
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{filter}");
        let stderr = String::from_utf8(out.stderr).unwrap();
        assert!(stderr.contains(said), "{filter}: {stderr}");
    }
}

#[test]
fn check_checks_only_what_the_filters_admit() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("mixed.hl7");
    let bad = adt("B1", "9", "DOE").replace("20240101120000|", "2024130112|");
    std::fs::write(&file, [adt("G1", "1", "DOE"), bad].concat()).unwrap();
    let out = mllp().arg("check").arg(&file).output().unwrap();
    assert_eq!(out.status.code(), Some(1));
    let out = mllp()
        .arg("check")
        .arg(&file)
        .args(["--where", "MSH-10=G1"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert!(
        stderr.contains("checked 1 message") && stderr.contains("left out 1"),
        "{stderr}"
    );
}

#[tokio::test]
async fn send_sends_only_what_the_filters_admit() {
    let dir = tempfile::tempdir().unwrap();
    let file = three(dir.path());
    // The dry run lists what would go, and says how many were left out.
    let out = mllp()
        .args(["send", "--dry-run", "--where", "PID-3.1!=100002"])
        .arg(&file)
        .output()
        .unwrap();
    assert!(out.status.success());
    let listed = String::from_utf8(out.stdout).unwrap();
    assert_eq!(listed.lines().count(), 3, "{listed}");
    assert!(listed.contains("#1 ") && listed.contains("#3 ") && !listed.contains("#2 "));
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert!(
        stderr.contains("--where left out 1 message of 3"),
        "{stderr}"
    );

    let peer = Peer::start(Script::always(Behaviour::Ack("AA"))).await;
    let mut send = tokio::process::Command::new(crate::support::mllp_bin());
    send.args(["send", "--json", "--where", "PID-3.1!=100002", "--host"])
        .arg(peer.addr().to_string())
        .arg(&file);
    let run = finish(send, None).await;
    assert_eq!(run.code, 0, "{}", run.stderr);
    let got: Vec<String> = peer
        .payloads()
        .iter()
        .map(|p| control_id(p).unwrap_or_default())
        .collect();
    assert_eq!(got, ["C1", "C3"]);
    // Each message keeps its place in the file.
    let sources: Vec<String> = run
        .records()
        .iter()
        .filter_map(|r| r["source"].as_str().map(str::to_string))
        .collect();
    assert!(
        sources.iter().any(|s| s.ends_with("adt.hl7#3")),
        "{sources:?}"
    );
}

#[tokio::test]
async fn send_from_a_store_replays_only_what_the_filters_admit() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("rx.db");
    let db = rusqlite::Connection::open(&file).unwrap();
    db.execute_batch(
        "CREATE TABLE messages (id INTEGER PRIMARY KEY, received_at TEXT NOT NULL,
         peer TEXT NOT NULL, msh3 TEXT, msh4 TEXT, control_id TEXT, msh7 TEXT,
         message_type TEXT, bytes INTEGER NOT NULL, payload BLOB NOT NULL, dedupe INTEGER)",
    )
    .unwrap();
    for (id, mrn) in [("S1", "100001"), ("S2", "100002"), ("S3", "100002")] {
        let payload = adt(id, mrn, "DOE");
        db.execute(
            "INSERT INTO messages (received_at, peer, control_id, message_type, bytes, payload)
             VALUES ('2024-01-31T08:00:00Z', 'p', ?1, 'ADT^A01', ?2, ?3)",
            rusqlite::params![id, payload.len() as i64, payload.as_bytes()],
        )
        .unwrap();
    }
    drop(db);
    let out = mllp()
        .args([
            "show",
            "--get",
            "MSH-10",
            "--where",
            "PID-3.1=100002",
            "--from-db",
        ])
        .arg(&file)
        .output()
        .unwrap();
    assert!(out.status.success());
    assert_eq!(ids(&out.stdout), ["S2", "S3"]);

    let peer = Peer::start(Script::always(Behaviour::Ack("AA"))).await;
    let mut send = tokio::process::Command::new(crate::support::mllp_bin());
    send.args(["send", "--json", "--where", "PID-3.1=100002", "--from-db"])
        .arg(&file)
        .arg("--host")
        .arg(peer.addr().to_string());
    let run = finish(send, None).await;
    assert_eq!(run.code, 0, "{}", run.stderr);
    let got: Vec<String> = peer
        .payloads()
        .iter()
        .map(|p| control_id(p).unwrap_or_default())
        .collect();
    assert_eq!(got, ["S2", "S3"]);
}
