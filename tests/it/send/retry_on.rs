//! `send --retry-on CODE[:ERR-3]` against an engine whose `AE` with ERR-3 `206` (record locked)
//! means "try later": written again after the backoff while the budget lasts; other answers and
//! runs without a rule stay final.

use super::{marked_input as input, send, to};
use crate::support::engine::scripted;
use crate::support::peer_wire::{control_id, frame};
use std::sync::{Arc, Mutex};

/// An ACK with `code` for `payload`, with ERR-3 `err3` when given.
fn answer(payload: &[u8], code: &str, err3: Option<&str>) -> Vec<u8> {
    let id = control_id(payload).unwrap_or_default();
    let mut ack = format!("MSH|^~\\&|ENG|F|S|F|20240101000000||ACK|A{id}|P|2.5\rMSA|{code}|{id}\r");
    if let Some(err3) = err3 {
        ack.push_str(&format!("ERR|||{err3}^Record locked^HL70357|E\r"));
    }
    ack.into_bytes()
}

/// An engine answering the `n`-th copy (from 0) of each control ID with `script(id, n)`;
/// the control IDs in arrival order are kept.
async fn engine(
    script: impl Fn(&str, usize) -> (&'static str, Option<&'static str>) + Send + Sync + 'static,
) -> (u16, Arc<Mutex<Vec<String>>>) {
    let seen = Arc::new(Mutex::new(Vec::new()));
    let kept = seen.clone();
    let port = scripted(move |frames| {
        let mut reply = Vec::new();
        for payload in frames {
            let id = control_id(&payload).unwrap_or_default();
            let copy = {
                let mut s = kept.lock().unwrap();
                s.push(id.clone());
                s.iter().filter(|i| **i == id).count() - 1
            };
            let (code, err3) = script(&id, copy);
            reply.extend(frame(&answer(&payload, code, err3)));
        }
        reply
    })
    .await;
    (port, seen)
}

/// Locked twice, then accepted.
fn locked_twice(_: &str, copy: usize) -> (&'static str, Option<&'static str>) {
    match copy {
        0 | 1 => ("AE", Some("206")),
        _ => ("AA", None),
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_locked_record_is_written_again_until_it_is_accepted() {
    let (port, seen) = engine(locked_twice).await;
    let dir = tempfile::tempdir().unwrap();
    let file = input(dir.path(), &["K1", "K2"]);
    let run = send(&to(port, &["--retry-on", "AE:206", "--json", &file])).await;
    assert_eq!(run.code, 0, "{}{}", run.stdout, run.stderr);
    for r in run.messages() {
        assert_eq!(r["outcome"], "accepted", "{r}");
        assert_eq!(r["ack_code"], "AA", "{r}");
        assert_eq!(r["attempts"], 3, "{r}");
    }
    let seen = seen.lock().unwrap();
    assert_eq!(seen.iter().filter(|i| *i == "K1").count(), 3);
    assert_eq!(seen.iter().filter(|i| *i == "K2").count(), 3);
    // Order kept: K2 is never accepted before K1.
    assert_eq!(seen.last().map(String::as_str), Some("K2"));
}

#[tokio::test(flavor = "multi_thread")]
async fn without_a_rule_or_with_another_err3_the_negative_answer_is_final() {
    let dir = tempfile::tempdir().unwrap();
    let file = input(dir.path(), &["F1"]);
    for rule in [
        &[][..],
        &["--retry-on", "AE:207"][..],
        &["--retry-on", "AR"][..],
    ] {
        let (port, seen) = engine(locked_twice).await;
        let run = send(&to(port, &[rule, &["--json", &file]].concat())).await;
        let r = &run.messages()[0];
        assert_eq!(r["outcome"], "negative", "{rule:?}: {r}");
        assert_eq!(r["attempts"], 1, "{r}");
        assert_eq!(run.code, 1);
        assert_eq!(seen.lock().unwrap().len(), 1);
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_lasting_lock_ends_negative_with_the_last_answer_after_the_budget() {
    let (port, seen) = engine(|_, _| ("AE", Some("206"))).await;
    let dir = tempfile::tempdir().unwrap();
    let file = input(dir.path(), &["L1"]);
    let args = [
        "--retry-on",
        "AE:206",
        "--max-resends",
        "2",
        "--json",
        "--print-ack",
    ];
    let run = send(&to(port, &[&args[..], &[&file]].concat())).await;
    let r = &run.messages()[0];
    assert_eq!(r["outcome"], "negative", "{r}");
    assert_eq!(r["ack_code"], "AE", "{r}");
    assert_eq!(r["attempts"], 3, "{r}");
    assert!(r["ack"].as_str().unwrap().contains("ERR|||206"), "{r}");
    assert_eq!(run.code, 1);
    assert_eq!(seen.lock().unwrap().len(), 3);
}

#[tokio::test(flavor = "multi_thread")]
async fn a_rule_that_is_not_a_negative_code_is_refused_before_anything_is_sent() {
    let dir = tempfile::tempdir().unwrap();
    let file = input(dir.path(), &["U1"]);
    let run = send(&to(1, &["--retry-on", "AA", &file])).await;
    assert_eq!(run.code, 2, "{}", run.stderr);
    assert!(
        run.stderr.contains("not a negative acknowledgement code"),
        "{}",
        run.stderr
    );
}
