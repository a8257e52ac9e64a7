//! Integration tests: `mllp listen` tells the truth as a real process. A negative answer keeps
//! nothing in any sink; `--dedupe` catches a repeat inside one pipelined group, survives a
//! SIGKILL between a file and its journal line, and keys on the sender too (SQLite files of the
//! earlier schema migrated); ACKs carry every required field; the application ACK follows only
//! an accept code.

use crate::support::listen_proc::{is, ListenProc};
use crate::support::mllp_client::{adt, frame, marked, MllpClient};
use std::path::Path;
use std::time::Duration;

/// Inbounds that cannot be acknowledged truthfully, and the code each is answered.
fn untruthful() -> Vec<(&'static str, Vec<u8>, &'static str)> {
    let batch = [
        &b"BHS|^~\\&|S||R||20240101\r"[..],
        &adt(b"B1", ""),
        &adt(b"B2", ""),
        b"BTS|2\r",
    ]
    .concat();
    let mut damaged = b"\x0bMSH|^~\\&|partial".to_vec();
    damaged.extend(frame(&adt(b"D1", "")));
    vec![
        ("empty MSH-10", frame(&adt(b"", "")), "AE"),
        ("no MSH", frame(b"PID|1||42\rOBX|1\r"), "AE"),
        ("batch", frame(&batch), "AR"),
        (
            "concatenated",
            frame(&[adt(b"C1", ""), adt(b"C2", "")].concat()),
            "AE",
        ),
        ("damaged", damaged, "AE"),
        ("empty MSH-10, MSH-15 AL", frame(&adt(b"", "AL")), "CE"),
    ]
}

fn entries(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    names.sort();
    names
}

#[tokio::test]
async fn a_negative_answer_keeps_nothing_in_any_sink() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("inbox");
    std::fs::create_dir(&out).unwrap();
    let db = dir.path().join("rx.db");
    let ran = dir.path().join("ran");
    let exec = format!("cat >> {}", ran.display());
    let sinks: Vec<Vec<&str>> = vec![
        vec!["--out-dir", out.to_str().unwrap()],
        vec!["--sqlite", db.to_str().unwrap()],
        vec!["--exec", &exec],
        vec!["--format", "raw"],
    ];
    for args in &sinks {
        let server = ListenProc::start(args);
        let mut client = MllpClient::connect(server.addr).await;
        for (what, bytes, code) in untruthful() {
            client.send_raw(&bytes).await;
            let ack = client.ack().await.unwrap();
            assert_eq!(ack.code, code, "{what} under {args:?}");
            let text = String::from_utf8_lossy(&ack.payload).into_owned();
            assert!(
                text.contains("\rERR|||10"),
                "{what}: MSA-3 and ERR: {text:?}"
            );
        }
        server.signal("TERM");
        drop(client);
        let (_, _, stdout) = server.wait();
        assert!(stdout.is_empty(), "stdout under {args:?}");
    }
    assert!(entries(&out).is_empty(), "{:?}", entries(&out));
    let rows: i64 = rusqlite::Connection::open(&db)
        .unwrap()
        .query_row("SELECT count(*) FROM messages", [], |r| r.get(0))
        .unwrap();
    assert_eq!(rows, 0);
    assert!(!ran.exists(), "the command never ran");
}

#[tokio::test]
async fn dedupe_catches_a_repeat_inside_one_pipelined_group() {
    let dir = tempfile::tempdir().unwrap();
    let server = ListenProc::start(&["--out-dir", dir.path().to_str().unwrap(), "--dedupe"]);
    let mut client = MllpClient::connect(server.addr).await;
    // a, b and an exact copy of a, in one write: committed together.
    let (a, b) = (marked("GA", ""), marked("GB", ""));
    client
        .send_raw(&[frame(&a), frame(&b), frame(&a)].concat())
        .await;
    for id in ["GA", "GB", "GA"] {
        let ack = client.ack().await.unwrap();
        assert_eq!(
            (ack.code.as_str(), &ack.control_id[..]),
            ("AA", id.as_bytes())
        );
    }
    let duplicates: Vec<bool> = (0..3)
        .map(|_| server.wait_event(is("message"))["duplicate"] == true)
        .collect();
    assert_eq!(duplicates, [false, false, true]);
    let files: Vec<String> = entries(dir.path())
        .into_iter()
        .filter(|n| n.ends_with(".hl7"))
        .collect();
    assert_eq!(files.len(), 2, "{files:?}");
}

#[tokio::test]
async fn out_dir_dedupe_survives_sigkill_under_a_sender() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().to_str().unwrap();
    let ids: Vec<String> = (0..300).map(|i| format!("K{i:03}")).collect();
    let mut pending: Vec<&String> = ids.iter().collect();
    for round in 0..4 {
        let mut server = ListenProc::start(&["--out-dir", out, "--dedupe"]);
        assert!(
            !entries(dir.path()).iter().any(|n| n.ends_with(".tmp")),
            "a crash's temporary files are removed on start"
        );
        let mut client = MllpClient::connect(server.addr).await;
        // Like a control-ID sender after a reconnect: everything not yet acknowledged again.
        let burst: Vec<u8> = pending
            .iter()
            .flat_map(|id| frame(&marked(id, "")))
            .collect();
        client.send_raw(&burst).await;
        let wanted = if round < 3 { 5 } else { pending.len() };
        let mut acked = Vec::new();
        while acked.len() < wanted {
            let ack = client.ack().await.expect("an ACK");
            assert_eq!(ack.code, "AA");
            acked.push(String::from_utf8(ack.control_id).unwrap());
        }
        if round < 3 {
            // In the middle of committing the rest.
            server.kill();
        }
        pending.retain(|id| !acked.contains(id));
    }
    assert!(pending.is_empty());
    let mut stored: Vec<String> = Vec::new();
    for name in entries(dir.path()).iter().filter(|n| n.ends_with(".hl7")) {
        let body = std::fs::read(dir.path().join(name)).unwrap();
        let msh = mllp::hl7::scan(&body).msh.unwrap();
        stored.push(String::from_utf8(msh.control_id().unwrap().to_vec()).unwrap());
    }
    stored.sort();
    let extra = stored.len() - ids.len();
    stored.dedup();
    assert_eq!(stored.len(), ids.len(), "every message stored");
    assert_eq!(extra, 0, "duplicate files after SIGKILL and restart");
}

/// An ADT^A01 from sending application `msh3`, with the same MSH-7 as every other.
fn from(msh3: &str, id: &str) -> Vec<u8> {
    format!("MSH|^~\\&|{msh3}|SF|RCV|RF|20240101120000||ADT^A01|{id}|P|2.5\rPID|1\r").into_bytes()
}

/// Send `payloads` in turn to `listen ARGS`; whether each was answered AA as a duplicate.
async fn duplicates(args: &[&str], payloads: &[Vec<u8>]) -> Vec<bool> {
    let server = ListenProc::start(args);
    let mut client = MllpClient::connect(server.addr).await;
    let mut seen = Vec::new();
    for p in payloads {
        client.send(p).await;
        assert_eq!(client.ack().await.unwrap().code, "AA");
        seen.push(server.wait_event(is("message"))["duplicate"] == true);
    }
    seen
}

/// The table and index the previous version of `--sqlite` created.
const OLD_SCHEMA: &str = "CREATE TABLE messages (id INTEGER PRIMARY KEY, received_at TEXT NOT NULL,
    peer TEXT NOT NULL, control_id TEXT, msh7 TEXT, message_type TEXT, bytes INTEGER NOT NULL,
    payload BLOB NOT NULL, dedupe INTEGER);
    CREATE UNIQUE INDEX messages_control_id_msh7 ON messages (control_id, msh7) WHERE dedupe = 1;";

#[tokio::test]
async fn the_duplicate_key_includes_the_sender_and_old_databases_are_migrated() {
    let dir = tempfile::tempdir().unwrap();
    let (lab, adt_app) = (from("LAB", "7"), from("ADT", "7"));
    let out = dir.path().join("inbox");
    std::fs::create_dir(&out).unwrap();
    let args = ["--out-dir", out.to_str().unwrap(), "--dedupe"];
    let seen = duplicates(&args, &[lab.clone(), adt_app.clone(), lab.clone()]).await;
    assert_eq!(seen, [false, false, true]);
    assert_eq!(
        entries(&out).iter().filter(|n| n.ends_with(".hl7")).count(),
        2
    );

    let file = dir.path().join("old.db");
    {
        let db = rusqlite::Connection::open(&file).unwrap();
        db.execute_batch(OLD_SCHEMA).unwrap();
        db.execute(
            "INSERT INTO messages (received_at, peer, control_id, msh7, message_type, bytes,
             payload, dedupe) VALUES ('t', 'p', '7', '20240101120000', 'ADT^A01', ?1, ?2, 1)",
            rusqlite::params![lab.len() as i64, &lab[..]],
        )
        .unwrap();
    }
    let args = ["--sqlite", file.to_str().unwrap(), "--dedupe"];
    assert_eq!(duplicates(&args, &[lab, adt_app]).await, [true, false]);
    let db = rusqlite::Connection::open(&file).unwrap();
    let senders: Vec<String> = db
        .prepare("SELECT msh3 FROM messages ORDER BY id")
        .unwrap()
        .query_map([], |r| r.get(0))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    assert_eq!(senders, ["LAB", "ADT"]);
}

/// MSH-1, MSH-2 and MSH-7, 9, 10, 11, 12 of an ACK, as a strict reader splits them.
fn header_fields(ack: &[u8]) -> (u8, Vec<u8>, Vec<Vec<u8>>) {
    let msh = ack.split(|&b| b == b'\r').next().unwrap();
    let sep = msh[3];
    let fields: Vec<&[u8]> = msh[4..].split(|&b| b == sep).collect();
    let required =
        [7, 9, 10, 11, 12].map(|n| fields.get(n - 2).copied().unwrap_or_default().to_vec());
    (sep, fields[0].to_vec(), required.to_vec())
}

#[tokio::test]
async fn acks_never_have_empty_required_fields() {
    let server = ListenProc::start(&["--format", "json"]);
    let mut client = MllpClient::connect(server.addr).await;
    let inbounds: [&[u8]; 4] = [
        b"MSH^^S^^R^^20240101^^ADT^K1\rPID^1\r",
        b"MSH|^~\\&|S||R||20240101||ADT^A01|K2\rPID|1\r",
        b"PID|1||no header\r",
        b"MSH|^^\\&|S||R||20240101||ADT^A01|K4|||||\"\"\rPID|1\r",
    ];
    for inbound in inbounds {
        client.send(inbound).await;
        let ack = client.ack().await.unwrap();
        let (sep, msh2, required) = header_fields(&ack.payload);
        let mut all = msh2.clone();
        all.push(sep);
        let distinct = all.iter().enumerate().all(|(i, b)| !all[..i].contains(b));
        let text = String::from_utf8_lossy(&ack.payload).into_owned();
        assert!(msh2.len() >= 4 && distinct, "MSH-1/MSH-2 in {text:?}");
        assert!(required.iter().all(|f| !f.is_empty()), "{text:?}");
    }
    // MSH-15 "" is null: no unknown-accept-type warning.
    server.signal("TERM");
    drop(client);
    let (_, events, _) = server.wait();
    assert!(
        !events
            .iter()
            .any(|e| e["code"] == "MLLP_UNKNOWN_ACCEPT_ACK_TYPE"),
        "{events:?}"
    );
}

#[tokio::test]
async fn the_application_ack_follows_only_an_accept_code() {
    // (MSH-15|MSH-16, extra args) -> the codes a client reads.
    let cases: [(&str, &[&str], &[&str]); 4] = [
        ("ER|AL", &[], &["AA"]),
        ("SU|AL", &["--nack-rate", "1"], &["AE"]),
        ("AL|ER", &["--nack-rate", "1"], &["CE", "AE"]),
        ("AL|SU", &[], &["CA", "AA"]),
    ];
    for (headers, args, want) in cases {
        let server = ListenProc::start(args);
        let mut client = MllpClient::connect(server.addr).await;
        client.send(&marked("E1", headers)).await;
        let mut got = Vec::new();
        for _ in want {
            got.push(client.ack().await.unwrap().code);
        }
        assert!(
            client.silent_for(Duration::from_millis(300)).await,
            "{headers}: one more ACK"
        );
        assert_eq!(got, want, "{headers}");
    }
}
