//! What `send` reads: every input shape, and input that is refused before anything is sent.

use super::{ids, path, send, send_with, to, write};
use crate::support::no_payload::MARKER;
use crate::support::peer::{Behaviour, Peer, Script};
use crate::support::peer_wire::{frame, message, VT};
use crate::support::send_proc::messages;

#[tokio::test(flavor = "multi_thread")]
async fn sends_every_input_shape_and_accounts_for_each() {
    let peer = Peer::start(Script::always(Behaviour::Ack("AA"))).await;
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    write(d, "one.hl7", &message("ONE", MARKER));
    write(d, "multi.hl7", &messages("MULTI", 3));
    let lf = String::from_utf8(message("LF1", MARKER))
        .unwrap()
        .replace('\r', "\n");
    write(d, "lf.hl7", lf.as_bytes());
    let framed: Vec<u8> = [
        frame(&message("FR1", MARKER)),
        frame(&message("FR2", MARKER)),
    ]
    .concat();
    write(d, "framed.mllp", &framed);
    let batch = [
        b"FHS|^~\\&|A\rBHS|^~\\&|A\r".to_vec(),
        messages("BATCH", 2),
        b"BTS|2\rFTS|1\r".to_vec(),
    ]
    .concat();
    write(d, "tree/batch.hl7", &batch);
    write(d, "tree/deeper/x.hl7", &message("DEEP", MARKER));

    let mut a = to(peer.port(), &["--json", "--recursive"]);
    a.extend([
        path(&d.join("*.hl7")),
        path(&d.join("framed.mllp")),
        path(&d.join("tree")),
        "-".into(),
    ]);
    let run = send_with(&a, Some(message("STDIN", MARKER))).await;
    assert_eq!(run.code, 0, "{}", run.stderr);
    let got: Vec<String> = run
        .messages()
        .iter()
        .map(|r| r["control_id"].as_str().unwrap().to_string())
        .collect();
    let expected = [
        "LF1", "MULTI1", "MULTI2", "MULTI3", "ONE", "FR1", "FR2", "BATCH1", "BATCH2", "DEEP",
        "STDIN",
    ];
    assert_eq!(got, expected);
    assert_eq!(ids(&peer.payloads()), expected);
    // Segment ends normalised to CR, frames and envelopes removed.
    for p in peer.payloads() {
        assert!(!p.contains(&b'\n') && !p.contains(&VT) && !p.starts_with(b"FHS"));
    }
    let labels: Vec<String> = run
        .messages()
        .iter()
        .map(|r| r["source"].as_str().unwrap().to_string())
        .collect();
    assert!(labels[1].ends_with("multi.hl7#1") && labels[3].ends_with("multi.hl7#3"));
    assert_eq!(labels.last().unwrap(), "-#1");
    assert_eq!(run.summary()["messages"], 11);
    assert_eq!(run.summary()["accepted"], 11);
}

#[tokio::test(flavor = "multi_thread")]
async fn a_non_hl7_file_is_refused_before_anything_is_sent() {
    let peer = Peer::start(Script::always(Behaviour::Ack("AA"))).await;
    let dir = tempfile::tempdir().unwrap();
    let good = write(dir.path(), "good.hl7", &message("G1", MARKER));
    let bad = write(dir.path(), "notes.txt", b"hello\r\nMSH|not really\r\n");
    let run = send(&to(peer.port(), &[&path(&good), &path(&bad)])).await;
    assert_eq!(run.code, 2);
    assert!(run.stderr.contains("notes.txt line 1"), "{}", run.stderr);
    assert!(run.stderr.contains("nothing was sent"));
    assert_eq!(peer.connections(), 0);
    assert!(run.stdout.is_empty());
}
