//! Integration tests: what `mllp send` prints around the per-message results: the summary's
//! wording, the progress display under each `--progress` choice, `--log-format json` on stderr,
//! and the accounting when reading stops part way through a stream.

use crate::support::mllp_bin;
use crate::support::no_payload::MARKER;
use crate::support::peer::{Behaviour, Peer, Script};
use crate::support::peer_wire::{message, VT};
use crate::support::send_proc::{finish, messages, Run};
use serde_json::Value;

/// `mllp [GLOBAL] send --host 127.0.0.1 --port PORT ARGS`, `stdin` piped in (then closed).
async fn send(global: &[&str], port: u16, args: &[&str], stdin: Vec<u8>) -> Run {
    let mut cmd = tokio::process::Command::new(mllp_bin());
    cmd.args(global)
        .args(["send", "--host", "127.0.0.1", "--port", &port.to_string()])
        .args(args);
    finish(cmd, Some(stdin)).await
}

fn json_lines(text: &str) -> Vec<Value> {
    text.lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|_| panic!("not one JSON object: {l:?}")))
        .collect()
}

#[tokio::test(flavor = "multi_thread")]
async fn the_summary_counts_one_message_in_the_singular() {
    let peer = Peer::start(Script::always(Behaviour::Ack("AA"))).await;
    let one = send(&[], peer.port(), &[], messages("P", 1)).await;
    assert_eq!(one.code, 0, "{}", one.stderr);
    assert!(one.stderr.contains("sent 1 message in "), "{}", one.stderr);
    let two = send(&[], peer.port(), &[], messages("P", 2)).await;
    assert!(two.stderr.contains("sent 2 messages in "), "{}", two.stderr);
}

#[tokio::test(flavor = "multi_thread")]
async fn progress_always_draws_off_a_terminal_auto_and_never_do_not() {
    let peer = Peer::start(Script::always(Behaviour::Ack("AA"))).await;
    // The bar's own message; nothing else on stderr says "in flight".
    let drawn = |run: &Run| run.stderr.contains("in flight ");
    let always = send(
        &[],
        peer.port(),
        &["--progress", "always"],
        messages("B", 5),
    )
    .await;
    assert_eq!(always.code, 0, "{}", always.stderr);
    assert!(drawn(&always), "{:?}", always.stderr);
    assert!(
        always.stderr.contains("sent 5 messages"),
        "{}",
        always.stderr
    );
    for choice in ["auto", "never"] {
        let run = send(&[], peer.port(), &["--progress", choice], messages("B", 5)).await;
        assert_eq!(run.code, 0, "{}", run.stderr);
        assert!(!drawn(&run), "--progress {choice}: {:?}", run.stderr);
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn json_log_format_ends_with_one_summary_event() {
    let peer = Peer::start(Script::always(Behaviour::Ack("AE"))).await;
    let json_log = ["--log-format", "json"];
    let run = send(&json_log, peer.port(), &[], messages("J", 3)).await;
    assert_eq!(run.code, 1, "{}", run.stderr);
    let events = json_lines(&run.stderr);
    let summary = events.last().expect("a summary event");
    assert_eq!(summary["event"], "summary", "{}", run.stderr);
    assert_eq!(events.iter().filter(|e| e["event"] == "summary").count(), 1);
    for (field, want) in [
        ("messages", 3),
        ("accepted", 0),
        ("negative", 3),
        ("committed_only", 0),
        ("unknown_fate", 0),
        ("never_delivered", 0),
        ("refused", 0),
        ("reconnects", 0),
        ("exit_code", 1),
    ] {
        assert_eq!(summary[field], want, "{field}: {summary}");
    }
    assert_eq!(summary["by_code"]["AE"], 3);
    assert!(summary["elapsed_ms"].is_number() && summary["messages_per_second"].is_number());

    // With --json the summary is the stdout record, as before, and not repeated on stderr.
    let run = send(&json_log, peer.port(), &["--json"], messages("K", 3)).await;
    let records = json_lines(&run.stdout);
    let record = records.last().unwrap();
    assert_eq!(record["type"], "summary");
    assert_eq!(record["messages"], 3);
    assert!(json_lines(&run.stderr)
        .iter()
        .all(|e| e["event"] != "summary"));
}

#[tokio::test(flavor = "multi_thread")]
async fn a_broken_stream_stops_reading_and_reports_every_message_read() {
    let peer = Peer::start(Script::always(Behaviour::Ack("AA"))).await;
    // 40 good messages, then one holding a VT: reading stops there.
    let mut input = messages("S", 40);
    let mut bad = message("BAD", MARKER);
    bad[20] = VT;
    input.extend(bad);
    input.extend(messages("AFTER", 5));
    let run = send(&[], peer.port(), &["--stream", "--json"], input).await;
    assert_eq!(run.code, 2, "{}", run.stderr);
    assert!(
        run.stderr.contains("no more messages are read"),
        "{}",
        run.stderr
    );
    let mut records = json_lines(&run.stdout);
    let summary = records.pop().unwrap();
    assert_eq!(summary["messages"], 40, "{summary}");
    assert_eq!(summary["accepted"], 40, "{summary}");
    assert_eq!(summary["accounting_ok"], true);
    let labels: Vec<&str> = records
        .iter()
        .map(|r| r["source"].as_str().unwrap())
        .collect();
    let want: Vec<String> = (1..=40).map(|i| format!("-#{i}")).collect();
    assert_eq!(labels, want);
    assert!(records.iter().all(|r| r["outcome"] == "accepted"));
}

#[tokio::test(flavor = "multi_thread")]
async fn messages_handed_over_in_chunks_each_get_one_record_in_input_order() {
    let peer = Peer::start(Script::always(Behaviour::Ack("AA"))).await;
    // Not a multiple of the reader's chunk, so the last chunk is a short one.
    let n = 101;
    let run = send(&[], peer.port(), &["--json"], messages("C", n)).await;
    assert_eq!(run.code, 0, "{}", run.stderr);
    let mut records = json_lines(&run.stdout);
    let summary = records.pop().unwrap();
    assert_eq!(summary["messages"], n);
    assert_eq!(summary["accepted"], n);
    let ids: Vec<&str> = records
        .iter()
        .map(|r| r["control_id"].as_str().unwrap())
        .collect();
    let want: Vec<String> = (1..=n).map(|i| format!("C{i}")).collect();
    assert_eq!(ids, want);
}
