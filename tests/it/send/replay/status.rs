//! `--status` chooses a relay store's rows by their upstream fate, so dead letters can be sent
//! again once the upstream is fixed; a receiver's store keeps no such fate.

use super::{hl7, receiver_store, relay_store, second};
use crate::send::{args, ids, path, send, to};
use crate::support::peer::{Behaviour, Peer, Script};

const ROWS: [(&str, &str); 5] = [
    ("A1", "accepted"),
    ("N1", "negative"),
    ("U1", "unknown-fate"),
    ("P1", "pending"),
    ("N2", "negative"),
];

/// The control IDs the peer got from replaying the relay store with `flags`.
async fn replayed(flags: &[&str]) -> Vec<String> {
    let dir = tempfile::tempdir().unwrap();
    let file = relay_store(dir.path(), &ROWS);
    let peer = Peer::start(Script::always(Behaviour::Ack("AA"))).await;
    let store = path(&file);
    let run = send(&to(
        peer.port(),
        &[&["--json", "--from-db", store.as_str()][..], flags].concat(),
    ))
    .await;
    assert_eq!(run.code, 0, "{}", run.stderr);
    ids(&peer.payloads())
}

#[tokio::test]
async fn the_dead_letters_of_a_relay_store_are_chosen_by_status() {
    assert_eq!(replayed(&["--status", "negative"]).await, ["N1", "N2"]);
    assert_eq!(
        replayed(&["--status", "negative", "--status", "unknown-fate"]).await,
        ["N1", "U1", "N2"]
    );
    assert_eq!(
        replayed(&["--status", "negative,unknown-fate"]).await,
        ["N1", "U1", "N2"]
    );
    assert_eq!(replayed(&[]).await, ["A1", "N1", "U1", "P1", "N2"]);
}

#[tokio::test]
async fn a_receivers_store_keeps_no_status_to_choose_by() {
    let dir = tempfile::tempdir().unwrap();
    let file = receiver_store(dir.path(), &[(&second(0), hl7("R1"))]);
    let run = send(&args(&[
        "--dry-run",
        "--from-db",
        &path(&file),
        "--status",
        "negative",
    ]))
    .await;
    assert_eq!(run.code, 2, "{}", run.stderr);
    assert!(run.stderr.contains("--status"), "{}", run.stderr);
    assert!(run.stderr.contains("rx.db"), "{}", run.stderr);
}

#[tokio::test]
async fn an_unknown_status_is_a_usage_error_naming_the_known_ones() {
    let dir = tempfile::tempdir().unwrap();
    let file = relay_store(dir.path(), &ROWS);
    let run = send(&args(&[
        "--dry-run",
        "--from-db",
        &path(&file),
        "--status",
        "dead",
    ]))
    .await;
    assert_eq!(run.code, 2, "{}", run.stderr);
    assert!(run.stderr.contains("unknown-fate"), "{}", run.stderr);
}
