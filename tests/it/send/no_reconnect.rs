//! `--no-reconnect` gives the answer the same peer behaviour gives with reconnects on: an
//! ACK timeout is unknown fate (3), a connection failure is transient (4).

use super::{path, send, to, write};
use crate::support::no_payload::MARKER;
use crate::support::peer::{Behaviour, Peer, Script};
use crate::support::peer_wire::message;
use crate::support::ports::closed_port;
use crate::support::send_proc::messages;

#[tokio::test(flavor = "multi_thread")]
async fn a_silent_peer_exits_3_with_or_without_reconnects() {
    let peer = Peer::start(Script::always(Behaviour::Stall)).await;
    let dir = tempfile::tempdir().unwrap();
    let file = write(dir.path(), "adt.hl7", &message("S1", MARKER));
    for extra in [&[][..], &["--no-reconnect"][..]] {
        let mut rest = vec!["--json", "--ack-timeout", "200ms"];
        rest.extend_from_slice(extra);
        let f = path(&file);
        rest.push(&f);
        let run = send(&to(peer.port(), &rest)).await;
        assert_eq!(run.code, 3, "{extra:?}: {}", run.stderr);
        let r = &run.messages()[0];
        assert_eq!(r["outcome"], "unknown-fate");
        assert_eq!(r["cause"], "ack-timeout");
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn messages_left_behind_an_ack_timeout_close_still_exit_3() {
    let peer = Peer::start(Script::always(Behaviour::Stall)).await;
    let dir = tempfile::tempdir().unwrap();
    let file = write(dir.path(), "adt.hl7", &messages("Q", 3));
    let run = send(&to(
        peer.port(),
        &[
            "--json",
            "--correlate",
            "fifo",
            "--no-pipeline",
            "--no-reconnect",
            "--ack-timeout",
            "200ms",
            &path(&file),
        ],
    ))
    .await;
    assert_eq!(run.code, 3, "{}", run.stderr);
    let s = run.summary();
    assert_eq!(s["unknown_fate"], 1, "{s}");
    assert_eq!(s["never_delivered"], 2, "{s}");
    // The close is still reported, under its own cause.
    assert_eq!(s["gave_up"], "ack-timeout", "{s}");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_reset_mid_stream_without_reconnects_exits_4() {
    let peer = Peer::start(Script::always(Behaviour::ResetAfter(1))).await;
    let dir = tempfile::tempdir().unwrap();
    let file = write(dir.path(), "adt.hl7", &messages("R", 4));
    let run = send(&to(
        peer.port(),
        &["--json", "--no-pipeline", "--no-reconnect", &path(&file)],
    ))
    .await;
    assert_eq!(run.code, 4, "{}", run.stderr);
    assert!(run.summary()["unknown_fate"].as_u64().unwrap() >= 1);
}

#[tokio::test(flavor = "multi_thread")]
async fn a_refused_port_without_reconnects_exits_4() {
    let port = closed_port();
    let dir = tempfile::tempdir().unwrap();
    let file = write(dir.path(), "adt.hl7", &messages("P", 2));
    let run = send(&to(port, &["--json", "--no-reconnect", &path(&file)])).await;
    assert_eq!(run.code, 4, "{}", run.stderr);
    assert_eq!(run.summary()["never_delivered"], 2);
}

#[tokio::test(flavor = "multi_thread")]
async fn sent_counts_only_what_was_written() {
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let dir = tempfile::tempdir().unwrap();
    let file = path(&write(dir.path(), "adt.hl7", &messages("W", 3)));
    let run = send(&to(port, &["--no-reconnect", &file])).await;
    assert_eq!(run.code, 4, "{}", run.stderr);
    assert!(
        run.stderr.contains("sent 0 of 3 messages in ") && run.stderr.contains("(0 msg/s)"),
        "{}",
        run.stderr
    );
    let json = send(&to(port, &["--no-reconnect", "--json", &file])).await;
    let summary = json.summary();
    assert_eq!(summary["messages"], 3, "{summary}");
    assert_eq!(summary["written"], 0, "{summary}");
    assert_eq!(summary["messages_per_second"], 0.0, "{summary}");
    // Written and answered: every message counts.
    let peer = Peer::start(Script::always(Behaviour::Ack("AA"))).await;
    let ok = send(&to(peer.port(), &["--json", &file])).await;
    assert_eq!(ok.summary()["written"], 3);
}
