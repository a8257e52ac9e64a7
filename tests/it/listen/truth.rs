//! Integration tests: `mllp listen` tells the truth as a real process. A negative answer keeps
//! nothing in any sink; `--dedupe` catches a repeat inside one pipelined group, survives a
//! SIGKILL between a file and its journal line, and keys on the sender too (SQLite files of the
//! earlier schema migrated); ACKs carry every required field; the application ACK follows only
//! an accept code.

use crate::support::listen_proc::{is, ListenProc};
use crate::support::mllp_client::{adt, marked, MllpClient};
use crate::support::peer_wire::frame;
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
    // Checked after what was kept: that is the point.
    let mut answers = Vec::new();
    for args in &sinks {
        let server = ListenProc::start(args);
        let mut client = MllpClient::connect(server.addr).await;
        for (what, bytes, code) in untruthful() {
            client.send_raw(&bytes).await;
            let ack = client.ack().await.unwrap();
            let text = String::from_utf8_lossy(&ack.payload).into_owned();
            let explained = text.contains("\rERR|||10");
            answers.push((what, ack.code, code, explained, text));
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
    for (what, got, want, explained, text) in answers {
        assert_eq!(got, want, "{what}");
        assert!(explained, "{what}: MSA-3 and ERR: {text:?}");
    }
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

fn stored_files(dir: &Path) -> usize {
    entries(dir).iter().filter(|n| n.ends_with(".hl7")).count()
}

/// Write `count` messages (`burst`) from a task of its own and read their ACKs; the MSA-2 of
/// each. With `kill_at`, the server is killed once the directory holds that many files, and the
/// ACKs are those read before the connection ended.
async fn deliver(
    server: &mut ListenProc,
    (burst, count): (Vec<u8>, usize),
    dir: &Path,
    kill_at: Option<usize>,
) -> Vec<String> {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let stream = tokio::net::TcpStream::connect(server.addr).await.unwrap();
    let (mut rx, mut tx) = stream.into_split();
    tokio::spawn(async move {
        let _ = tx.write_all(&burst).await;
        // Keep the write half open: closing it could end the connection before the ACKs.
        tokio::time::sleep(Duration::from_secs(30)).await;
    });
    if let Some(at) = kill_at {
        // Files appear one by one while a group of messages is committed: stop the process
        // in the middle of one.
        let deadline = std::time::Instant::now() + Duration::from_secs(10);
        while stored_files(dir) < at && std::time::Instant::now() < deadline {
            tokio::time::sleep(Duration::from_micros(200)).await;
        }
        server.kill();
    }
    let mut bytes = Vec::new();
    let read = tokio::time::timeout(Duration::from_secs(10), async {
        let mut chunk = vec![0; 64 * 1024];
        loop {
            match rx.read(&mut chunk).await {
                Ok(0) | Err(_) => break,
                Ok(n) => bytes.extend_from_slice(&chunk[..n]),
            }
            if bytes.iter().filter(|&&b| b == 0x1c).count() == count {
                break;
            }
        }
    });
    let _ = read.await;
    let mut acked = Vec::new();
    for payload in bytes.split(|&b| b == 0x1c) {
        let payload = payload.strip_prefix(b"\r").unwrap_or(payload);
        let payload = payload.strip_prefix(b"\x0b").unwrap_or(payload);
        if let Some(view) = mllp::hl7::scan_ack(payload) {
            assert_eq!(view.code, b"AA");
            acked.push(String::from_utf8(view.control_id.to_vec()).unwrap());
        }
    }
    acked
}

#[tokio::test]
async fn out_dir_dedupe_survives_sigkill_under_a_sender() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().to_str().unwrap();
    let ids: Vec<String> = (0..400).map(|i| format!("K{i:03}")).collect();
    let mut pending: Vec<&String> = ids.iter().collect();
    // Temporary files found right after a start: a crash's, which must be gone by then.
    let mut leftovers = 0;
    for round in 0..4 {
        let mut server = ListenProc::start(&["--out-dir", out, "--dedupe"]);
        leftovers += entries(dir.path())
            .iter()
            .filter(|n| n.ends_with(".tmp"))
            .count();
        // Like a control-ID sender after a reconnect: everything not yet acknowledged again.
        let burst: Vec<u8> = pending
            .iter()
            .flat_map(|id| frame(&marked(id, "")))
            .collect();
        let kill_at = (round < 3).then(|| stored_files(dir.path()) + 40);
        let sent = (burst, pending.len());
        let acked = deliver(&mut server, sent, dir.path(), kill_at).await;
        pending.retain(|id| !acked.contains(id));
        if round == 3 {
            assert!(pending.is_empty(), "{} never acknowledged", pending.len());
        }
    }
    let mut stored: Vec<String> = Vec::new();
    for name in entries(dir.path()).iter().filter(|n| n.ends_with(".hl7")) {
        let body = std::fs::read(dir.path().join(name)).unwrap();
        let msh = mllp::hl7::scan(&body).msh.unwrap();
        stored.push(String::from_utf8(msh.control_id().unwrap().to_vec()).unwrap());
    }
    stored.sort();
    let extra = stored.len() - ids.len().min(stored.len());
    stored.dedup();
    assert_eq!(stored.len(), ids.len(), "every message stored");
    assert_eq!(extra, 0, "duplicate files after SIGKILL and restart");
    assert_eq!(
        leftovers, 0,
        "a crash's temporary files are removed on start"
    );
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

/// A table with an AFTER INSERT trigger deleting the rows whose control ID ends in 3: SQLite
/// then gives a deleted row's id to the next INSERT of the same group.
#[tokio::test]
async fn rows_an_after_trigger_deletes_within_one_group_are_answered_negatively() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("rx.db");
    let server = ListenProc::start(&["--sqlite", file.to_str().unwrap()]);
    rusqlite::Connection::open(&file)
        .unwrap()
        .execute_batch(
            "CREATE TRIGGER gone AFTER INSERT ON messages WHEN NEW.control_id LIKE '%3'
               BEGIN DELETE FROM messages WHERE id = NEW.id; END",
        )
        .unwrap();
    let mut client = MllpClient::connect(server.addr).await;
    let ids: Vec<String> = (0..6).map(|i| format!("G{i}")).collect();
    // Sent at once, so they are committed together.
    for id in &ids {
        client.send(&marked(id, "")).await;
    }
    let mut codes = Vec::new();
    for _ in &ids {
        codes.push(client.ack().await.expect("an answer").code);
    }
    let db = rusqlite::Connection::open(&file).unwrap();
    let stored: Vec<String> = db
        .prepare("SELECT control_id FROM messages")
        .unwrap()
        .query_map([], |r| r.get(0))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    for (id, code) in ids.iter().zip(&codes) {
        assert_eq!(
            code == "AA",
            stored.contains(id),
            "{id} answered {code}: {stored:?}"
        );
    }
    assert_eq!(codes[3], "AE", "{codes:?}");
}
