//! The listen renderer's lines, human and JSON, event by event.

use super::*;
use crate::global::LogFormat;
use mllp::ack::{AckCode, NackReason};
use mllp::cause::{Cause, Hint};
use mllp::server::NackWhy;
use mllp::server::StatsSnapshot;
use serde_json::Value;

fn line(format: LogFormat, event: &ServerEvent) -> String {
    let diag = Diag {
        format,
        verbose: 0,
        quiet: false,
        color: false,
        stdout_color: false,
    };
    let mut text = String::new();
    let stamp =
        Stamp::at(std::time::UNIX_EPOCH + std::time::Duration::from_millis(1_796_173_323_456));
    push(&diag, &stamp, event, Answers::Committed, &mut text);
    let text = text.trim_end();
    match format {
        LogFormat::Json => {
            let json: Value = serde_json::from_str(text).unwrap();
            assert_eq!(json["time"], stamp.as_str(), "{text}");
            text.to_string()
        }
        _ => text
            .strip_prefix(&format!("{} ", stamp.as_str()))
            .unwrap_or_else(|| panic!("no time on {text:?}"))
            .to_string(),
    }
}

#[test]
fn a_failed_commit_is_handler_rejected_in_both_formats() {
    let nack = |why| ServerEvent::Nack {
        connection: 7,
        ack_code: AckCode::AE,
        why,
    };
    let failed = nack(NackWhy::CommitFailed);
    assert_eq!(
        line(LogFormat::Human, &failed),
        "connection 7: answered AE (handler-rejected, commit-failed)"
    );
    let json: Value = serde_json::from_str(&line(LogFormat::Json, &failed)).unwrap();
    assert_eq!(json["reason"], "handler-rejected");
    assert_eq!(json["detail"], "commit-failed");
    let rejected = nack(NackWhy::Reason(NackReason::HandlerRejected));
    assert_eq!(
        line(LogFormat::Human, &rejected),
        "connection 7: answered AE (handler-rejected)"
    );
    let json: Value = serde_json::from_str(&line(LogFormat::Json, &rejected)).unwrap();
    assert_eq!(json["detail"], Value::Null);
}

#[test]
fn message_lines_in_both_formats() {
    let message = |ack_code, duplicate| ServerEvent::Message {
        connection: 3,
        bytes: 150,
        ack_code,
        duplicate,
        commit_ms: Some(0.1234),
        control_id: Some(bytes::Bytes::from_static(b"CTRL\x071")),
        message_type: Some(bytes::Bytes::from_static(b"ADT^A01")),
    };
    assert_eq!(
        line(LogFormat::Human, &message(Some(AckCode::AA), false)),
        "connection 3: message CTRL?1 ADT^A01, 150 bytes, answered AA, commit 0.12 ms"
    );
    assert_eq!(
        line(LogFormat::Human, &message(None, true)),
        "connection 3: message CTRL?1 ADT^A01, 150 bytes, no ACK, duplicate, commit 0.12 ms"
    );
    let anonymous = ServerEvent::Message {
        connection: 3,
        bytes: 9,
        ack_code: None,
        duplicate: false,
        commit_ms: None,
        control_id: None,
        message_type: None,
    };
    assert_eq!(
        line(LogFormat::Human, &anonymous),
        "connection 3: message (no MSH-10), 9 bytes, no ACK, refused (nothing kept)"
    );
    // The in-place line is the one `describe` gives.
    let diag = Diag {
        format: LogFormat::Human,
        verbose: 0,
        quiet: false,
        color: false,
        stdout_color: false,
    };
    for event in [message(Some(AckCode::AE), true), message(None, false)] {
        let (_, human, _) = describe(&diag, &event, Answers::Committed).unwrap();
        assert_eq!(line(LogFormat::Human, &event), human);
    }
    let json: Value =
        serde_json::from_str(&line(LogFormat::Json, &message(Some(AckCode::CA), true))).unwrap();
    assert_eq!(
        json,
        json!({
            "event": "message",
            "connection": 3,
            "bytes": 150,
            "ack_code": "CA",
            "duplicate": true,
            "commit_ms": 0.123,
            "control_id": "CTRL?1",
            "message_type": "ADT^A01",
            "time": "2026-12-02T01:02:03.456Z",
        })
    );
}

#[test]
fn a_tls_client_error_names_the_client() {
    let event = ServerEvent::AcceptFailed {
        connection: 3,
        peer: "10.0.0.9:4000".into(),
        cause: Cause::TlsHandshake,
        detail: "client did not present a certificate".into(),
        hint: Some(Hint::ClientMustPresentCertificate),
    };
    assert_eq!(
        line(LogFormat::Human, &event),
        "connection 3 from 10.0.0.9:4000: TLS handshake failed (tls-handshake): client did \
         not present a certificate; hint: the client must present a certificate, or the \
         listener accept none (--client-auth want)"
    );
    let json: Value = serde_json::from_str(&line(LogFormat::Json, &event)).unwrap();
    assert_eq!(json["event"], "tls_client_error");
    assert_eq!(json["detail"], "client did not present a certificate");
    assert_eq!(
        json["hint"],
        "the client must present a certificate, or the listener accept none (--client-auth want)"
    );
}

#[test]
fn the_in_place_message_line_matches_the_formatted_fields() {
    for ms in [0.0, 0.004, 0.0051, 0.1234, 0.999, 1.0, 12.345_6, 1234.5] {
        let mut text = String::new();
        push_millis(&mut text, ms);
        assert_eq!(text, format!("{ms:.2}"), "{ms}");
    }
    for field in [
        &b"ADT^A01"[..],
        b"CTRL\x071",
        &[b'x'; 80],
        "caf\u{e9}".as_bytes(),
        "A\u{202E}B\u{2066}C".as_bytes(),
        b"\xff\xfe",
    ] {
        let mut text = String::new();
        push_header_text(&mut text, field);
        let slow: String = String::from_utf8_lossy(field)
            .chars()
            .take(64)
            .map(|c| if unsafe_on_terminal(c) { '?' } else { c })
            .collect();
        assert_eq!(text, slow, "{field:?}");
    }
}

#[test]
fn only_dev_null_counts_as_unread() {
    let null = std::fs::File::open("/dev/null").unwrap();
    assert!(is_dev_null(&null));
    let zero = std::fs::File::open("/dev/zero").unwrap();
    assert!(!is_dev_null(&zero));
    let file = tempfile::tempfile().unwrap();
    assert!(!is_dev_null(&file));
}

#[test]
fn the_store_link_lost_and_back_in_both_formats_and_under_quiet() {
    let lost = ServerEvent::StoreLost {
        detail: "connection refused".into(),
    };
    let back = ServerEvent::StoreRestored {
        down_ms: 3250,
        refused: 2,
    };
    assert_eq!(
        line(LogFormat::Human, &lost),
        "warning: the database link is lost (connection refused): messages are answered AE until it is back; reconnecting"
    );
    assert_eq!(
        line(LogFormat::Human, &back),
        "the database link is back after 3.2 s; 2 messages answered AE meanwhile"
    );
    let json: Value = serde_json::from_str(&line(LogFormat::Json, &lost)).unwrap();
    assert_eq!(
        (&json["event"], &json["detail"]),
        (&json!("store_lost"), &json!("connection refused"))
    );
    let json: Value = serde_json::from_str(&line(LogFormat::Json, &back)).unwrap();
    assert_eq!(json["event"], "store_restored");
    assert_eq!(
        (&json["down_ms"], &json["refused"]),
        (&json!(3250), &json!(2))
    );
    let quiet = Diag {
        format: LogFormat::Human,
        verbose: 0,
        quiet: true,
        color: false,
        stdout_color: false,
    };
    for event in [&lost, &back] {
        assert!(
            describe(&quiet, event, Answers::Committed).is_some(),
            "kept under --quiet"
        );
    }
}

#[test]
fn commit_groups_are_one_stats_line() {
    let stats = StatsSnapshot {
        commit_groups: Some(mllp::server::CommitGroups {
            groups: 3,
            rows: 9,
            sizes: [1, 0, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0],
        }),
        ..StatsSnapshot::default()
    };
    let lines = stats_lines(&stats, None, Answers::Committed);
    assert!(
        lines.contains("  commit groups: 3 of 3.0 rows on average (rows per group 1: 1, 4-7: 2)"),
        "{lines}"
    );
}

#[test]
fn an_exec_commands_stderr_line_is_labelled_as_its_own_and_made_safe() {
    let event = |line: &str, truncated| ServerEvent::ExecStderr {
        connection: 3,
        pid: 4242,
        line: line.into(),
        truncated,
    };
    assert_eq!(
        line(LogFormat::Human, &event("disk full", false)),
        "exec[4242] (connection 3): disk full"
    );
    assert_eq!(
        line(LogFormat::Human, &event("a\u{1b}[2Jb\u{202e}c", true)),
        "exec[4242] (connection 3): a?[2Jb?c [cut at 1000 bytes]"
    );
    let json: Value = serde_json::from_str(&line(LogFormat::Json, &event("x", true))).unwrap();
    assert_eq!(
        (
            &json["event"],
            &json["pid"],
            &json["line"],
            &json["truncated"]
        ),
        (
            &json!("exec_stderr"),
            &json!(4242),
            &json!("x"),
            &json!(true)
        )
    );
}
