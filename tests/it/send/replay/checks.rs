//! Rows are checked as files are, before the first byte: a payload that is not one HL7 message
//! (framing bytes inside, a second message, no header, no control ID, NULL, a number, too
//! large) is refused by its row, exit 2, and nothing reaches the peer, in a real run and in a
//! dry run alike.

use super::{hl7, receiver_store, second};
use crate::send::{args, path, send, to};
use crate::support::no_payload::MARKER;
use crate::support::peer::{Behaviour, Peer, Script};
use crate::support::peer_wire::message;
use rusqlite::types::Value;

/// A store whose row 1 is a good message and row 2 holds `bad`: the run and the dry run both
/// refuse row 2 by name before sending anything. The refusals' words.
async fn refused(bad: Value, extra: &[&str]) -> String {
    let dir = tempfile::tempdir().unwrap();
    let file = receiver_store(dir.path(), &[(&second(0), hl7("G1")), (&second(1), bad)]);
    let peer = Peer::start(Script::always(Behaviour::Ack("AA"))).await;
    let store = path(&file);
    let flags = [&["--from-db", store.as_str()][..], extra].concat();
    let run = send(&to(peer.port(), &flags)).await;
    assert_eq!(run.code, 2, "{}", run.stderr);
    assert!(run.stderr.contains("rx.db#2"), "{}", run.stderr);
    assert!(run.stderr.contains("nothing was sent"), "{}", run.stderr);
    assert!(peer.payloads().is_empty(), "nothing reaches the peer");
    let mut dry = args(&["--dry-run", "--from-db", &path(&file)]);
    dry.extend(args(extra));
    let listed = send(&dry).await;
    assert_eq!(listed.code, 2, "{}\n{}", listed.stdout, listed.stderr);
    assert!(listed.stderr.contains("rx.db#2"), "{}", listed.stderr);
    run.stderr
}

#[tokio::test]
async fn a_row_holding_a_frame_end_and_a_second_message_is_refused_not_injected() {
    // FS CR VT inside one row: sent as one frame, a receiver would take two messages from it.
    let mut payload = message("I1", MARKER);
    payload.extend_from_slice(b"\x1c\r\x0b");
    payload.extend_from_slice(&message("I2", MARKER));
    let words = refused(Value::Blob(payload), &[]).await;
    assert!(words.contains("FS byte"), "{words}");
}

#[tokio::test]
async fn a_row_holding_two_messages_is_refused() {
    let mut payload = message("D1", MARKER);
    payload.extend_from_slice(&message("D2", MARKER));
    let words = refused(Value::Blob(payload), &[]).await;
    assert!(words.contains("more than one message"), "{words}");
}

#[tokio::test]
async fn rows_that_hold_no_message_are_refused_by_row() {
    for (bad, says) in [
        (Value::Null, "NULL"),
        (Value::Integer(42), "an integer"),
        (Value::Real(4.2), "a real number"),
        (
            Value::Text("hello world".into()),
            "text before the first MSH",
        ),
        (Value::Blob(Vec::new()), "no HL7 message"),
    ] {
        let words = refused(bad, &[]).await;
        assert!(words.contains(says), "{says}: {words}");
    }
}

#[tokio::test]
async fn a_row_without_a_control_id_is_refused_with_the_flag_that_helps() {
    let payload = b"MSH|^~\\&|A|B|C|D|2024||ADT^A01||P|2.5\rPID|1\r".to_vec();
    let words = refused(Value::Blob(payload), &[]).await;
    assert!(words.contains("--fresh-control-ids"), "{words}");
}

#[tokio::test]
async fn a_row_over_the_largest_frame_is_refused_with_the_flag_that_helps() {
    let mut payload = message("L1", MARKER);
    payload.extend_from_slice(format!("OBX|1|TX|||{}\r", "x".repeat(4096)).as_bytes());
    let words = refused(Value::Blob(payload), &["--max-frame-size", "2K"]).await;
    assert!(words.contains("--max-frame-size"), "{words}");
}

#[tokio::test]
async fn rows_are_sent_as_a_file_of_their_bytes_would_be() {
    // LF line ends become CR, as for a file; the row is sent whole, named by its row.
    let dir = tempfile::tempdir().unwrap();
    let lf = String::from_utf8(message("N1", MARKER))
        .unwrap()
        .replace('\r', "\n");
    let file = receiver_store(dir.path(), &[(&second(0), Value::Text(lf))]);
    let peer = Peer::start(Script::always(Behaviour::Ack("AA"))).await;
    let run = send(&to(peer.port(), &["--json", "--from-db", &path(&file)])).await;
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(run.messages()[0]["source"], "rx.db#1");
    assert_eq!(peer.payloads(), [message("N1", MARKER)]);
}
