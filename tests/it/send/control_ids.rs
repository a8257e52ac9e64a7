//! Control IDs and sizes checked before anything is sent: an empty MSH-10 is refused naming the
//! message, `--fresh-control-ids` gives each message its own (the record keeps the original),
//! `--dry-run` warns about IDs several messages share, and `--max-frame-size` bounds a message.

use super::{ids, path, send, to, write};
use crate::support::no_payload::MARKER;
use crate::support::peer::{Behaviour, Peer, Script};
use crate::support::peer_wire::message;

#[tokio::test(flavor = "multi_thread")]
async fn an_empty_msh_10_is_refused_at_the_check_naming_the_message_and_the_flag() {
    let peer = Peer::start(Script::always(Behaviour::Ack("AA"))).await;
    let dir = tempfile::tempdir().unwrap();
    let good = write(dir.path(), "a.hl7", &message("A1", MARKER));
    let bad = write(
        dir.path(),
        "b.hl7",
        &[message("B1", MARKER), message("", MARKER)].concat(),
    );
    for extra in [&[][..], &["--dry-run"][..]] {
        let mut a = to(peer.port(), extra);
        a.extend([path(&good), path(&bad)]);
        let run = send(&a).await;
        assert_eq!(run.code, 2, "{}", run.stderr);
        assert!(run.stderr.contains("b.hl7#2"), "{}", run.stderr);
        assert!(run.stderr.contains("MSH-10"), "{}", run.stderr);
        assert!(run.stderr.contains("--fresh-control-ids"), "{}", run.stderr);
        assert!(run.stderr.contains("nothing was sent"), "{}", run.stderr);
        assert!(run.stdout.is_empty(), "{}", run.stdout);
    }
    assert_eq!(peer.connections(), 0);
}

#[tokio::test(flavor = "multi_thread")]
async fn fresh_control_ids_are_unique_and_each_record_keeps_the_original() {
    let peer = Peer::start(Script::always(Behaviour::Ack("AA"))).await;
    let dir = tempfile::tempdir().unwrap();
    let input = [
        message("DUP", MARKER),
        message("", MARKER),
        message("DUP", MARKER),
    ]
    .concat();
    let file = write(dir.path(), "samples.hl7", &input);
    let run = send(&to(
        peer.port(),
        &["--json", "--fresh-control-ids", &path(&file)],
    ))
    .await;
    assert_eq!(run.code, 0, "{}", run.stderr);
    let sent = ids(&peer.payloads());
    assert_eq!(sent.len(), 3);
    let mut unique = sent.clone();
    unique.sort();
    unique.dedup();
    assert_eq!(unique.len(), 3, "{sent:?}");
    assert!(
        sent.iter().all(|id| !id.is_empty() && id.len() <= 20),
        "{sent:?}"
    );
    let records = run.messages();
    let recorded: Vec<&str> = records
        .iter()
        .map(|r| r["control_id"].as_str().unwrap())
        .collect();
    assert_eq!(recorded, sent);
    let originals: Vec<&str> = records
        .iter()
        .map(|r| r["original_control_id"].as_str().unwrap())
        .collect();
    assert_eq!(originals, ["DUP", "", "DUP"]);
    assert!(records.iter().all(|r| r["outcome"] == "accepted"));
    // Only the ID changed.
    let first = String::from_utf8(peer.payloads()[0].clone()).unwrap();
    let expected = String::from_utf8(message(&sent[0], MARKER)).unwrap();
    assert_eq!(first, expected);
}

#[tokio::test(flavor = "multi_thread")]
async fn a_dry_run_warns_about_control_ids_shared_by_several_messages() {
    let dir = tempfile::tempdir().unwrap();
    let input = [
        message("DUP", MARKER),
        message("ONE", MARKER),
        message("DUP", MARKER),
        message("DUP", MARKER),
    ]
    .concat();
    let file = write(dir.path(), "samples.hl7", &input);
    let run = send(&super::args(&["--dry-run", &path(&file)])).await;
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(
        run.stderr
            .contains("control ID DUP is shared by 3 messages (")
            && run.stderr.contains("samples.hl7#1")
            && run.stderr.contains("samples.hl7#4"),
        "{}",
        run.stderr
    );
    assert!(run.stderr.contains("--fresh-control-ids"), "{}", run.stderr);
    assert!(!run.stderr.contains("ONE"), "{}", run.stderr);
    let json = send(&super::args(&[
        "--dry-run",
        "--log-format",
        "json",
        &path(&file),
    ]))
    .await;
    let warning: serde_json::Value = json
        .stderr
        .lines()
        .find_map(|l| serde_json::from_str(l).ok())
        .expect("a JSON warning");
    assert_eq!(warning["code"], "MLLP_SHARED_CONTROL_ID");
    assert_eq!(warning["control_id"], "DUP");
    assert_eq!(warning["messages"], 3);
    // Fresh IDs share nothing.
    let fresh = send(&super::args(&[
        "--dry-run",
        "--fresh-control-ids",
        &path(&file),
    ]))
    .await;
    assert_eq!(fresh.code, 0);
    assert!(!fresh.stderr.contains("shared"), "{}", fresh.stderr);
}

#[tokio::test(flavor = "multi_thread")]
async fn a_message_over_max_frame_size_is_refused_before_anything_is_sent() {
    let peer = Peer::start(Script::always(Behaviour::Ack("AA"))).await;
    let dir = tempfile::tempdir().unwrap();
    let big = format!("OBX|1|TX|||{}\r", "x".repeat(2000));
    let input = [
        message("SMALL", MARKER),
        [message("BIG", MARKER), big.into_bytes()].concat(),
    ]
    .concat();
    let file = write(dir.path(), "big.hl7", &input);
    let run = send(&to(peer.port(), &["--max-frame-size", "1K", &path(&file)])).await;
    assert_eq!(run.code, 2, "{}", run.stderr);
    assert!(run.stderr.contains("big.hl7 line 3"), "{}", run.stderr);
    assert!(run.stderr.contains("1024 bytes"), "{}", run.stderr);
    assert!(run.stderr.contains("--max-frame-size"), "{}", run.stderr);
    assert!(run.stderr.contains("nothing was sent"), "{}", run.stderr);
    assert_eq!(peer.connections(), 0);
    // Under the limit it goes.
    let run = send(&to(peer.port(), &["--max-frame-size", "4K", &path(&file)])).await;
    assert_eq!(run.code, 0, "{}", run.stderr);
}
