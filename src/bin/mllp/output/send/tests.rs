//! Each send record and event, pinned field by field: a renamed or dropped field fails here.

use super::*;
use crate::output::line;
use bytes::Bytes;
use mllp::cause::Class;
use mllp::client::{AckPayload, ClientEvent, FateCause, LinkFailure, Reason, State, Transition};
use mllp::delivery::{Ending, RunNote, Totals};
use mllp::transport::{HostTurn, Move};
use mllp::warning::{Warning, WarningCode};

fn item() -> Item {
    Item {
        source: "a.hl7".into(),
        index: 2,
        payload: Bytes::from_static(b"MSH|^~\\&|A|B|C|D|20240101||ADT^A01|C7|P|2.5\r"),
        seq: 2,
        writes: 2,
        original_control_id: None,
    }
}

#[test]
fn a_message_record_keeps_its_field_names() {
    let ack = AckPayload::new(Bytes::from_static(
        b"MSH|^~\\&|C|D|A|B|20240101||ACK|9|P|2.5\rMSA|AE|C7|bad PID\rERR|||207\r",
    ));
    let fate = Fate::Negative {
        code: AckCode::AE,
        ack,
        latency: Duration::from_micros(1_250),
    };
    let record = MessageRecord::new(&item(), &fate, None, false);
    assert_eq!(
        line(&record),
        concat!(
            r#"{"ack_code":"AE","ack_text":"bad PID","attempts":2,"bytes":44,"cause":null,"#,
            r#""cause_detail":null,"control_id":"C7","error_code":"207","latency_ms":1.3,"#,
            r#""outcome":"negative","source":"a.hl7#2","type":"message"}"#
        )
    );
    let never = Fate::NeverDelivered {
        cause: FateCause::Link(Cause::ConnectionRefused),
    };
    let record = MessageRecord::new(&item(), &never, Some(Cause::RunTimeout), true);
    let text = line(&record);
    assert!(text.contains(r#""ack":null"#), "{text}");
    assert!(text.contains(r#""cause":"run-timeout""#), "{text}");
    assert!(text.contains(r#""outcome":"never-delivered""#), "{text}");
}

#[test]
fn a_message_record_written_straight_is_its_sorted_line() {
    let ack = AckPayload::new(Bytes::from_static(
        b"MSH|^~\\&|C|D\rMSA|AR|C7|no\rERR|||207\r",
    ));
    let fate = Fate::Negative {
        code: AckCode::AR,
        ack,
        latency: Duration::from_millis(2),
    };
    for with_ack in [false, true] {
        let record = MessageRecord::new(&item(), &fate, None, with_ack);
        let mut written = Vec::new();
        record.write_line(&mut written).unwrap();
        assert_eq!(String::from_utf8(written).unwrap(), line(&record) + "\n");
    }
}

#[test]
fn the_summary_keeps_its_field_names_as_record_and_event() {
    let mut totals = Totals {
        read: 2,
        ..Default::default()
    };
    let accepted = Fate::Accepted {
        code: AckCode::AA,
        ack: AckPayload::new(Bytes::new()),
        latency: Duration::from_millis(1),
    };
    totals.record(&accepted);
    let run = RunSummary {
        totals,
        ending: Ending {
            last_failure: Some(Cause::PeerClosed),
            ..Default::default()
        },
        elapsed: Duration::from_millis(500),
    };
    let summary = SendSummary::new(&run, Exit::UnknownFate);
    let fields = concat!(
        r#""accepted":1,"accounting_ok":false,"by_code":{"AA":1},"committed_only":0,"#,
        r#""elapsed_ms":500.0,"#
    );
    // The hint is the human summary's for the last failure.
    let hint = summary.hint.as_deref().expect("a hint after a failure");
    assert!(hint.contains("peer"), "{hint}");
    let rest = format!(
        "{}{}{}",
        r#""exit_code":3,"gave_up":null,"#,
        format_args!(
            r#""hint":{},"interrupted":false,"last_failure":"peer-closed","#,
            line(&hint)
        ),
        concat!(
            r#""messages":2,"messages_per_second":2.0,"negative":0,"never_delivered":0,"#,
            r#""poison":[],"reconnects":0,"refused":0,"resent":0,"timed_out":false"#
        )
    );
    assert_eq!(
        line(&SummaryRecord { summary: &summary }),
        format!("{{{fields}{rest},\"type\":\"summary\",\"unknown_fate\":0,\"written\":1}}")
    );
    assert_eq!(
        line(&SendEvent::Summary(&summary)),
        format!("{{{fields}\"event\":\"summary\",{rest},\"unknown_fate\":0,\"written\":1}}")
    );
}

#[test]
fn the_dry_run_listing_keeps_its_field_names() {
    let message = Message {
        source: "a.hl7".into(),
        index: 1,
        line: 1,
        offset: 0,
        payload: item().payload,
        original_control_id: None,
    };
    assert_eq!(
        line(&DryRunRecord::Message(DryRunMessage::new(&message))),
        r#"{"bytes":44,"control_id":"C7","message_type":"ADT^A01","source":"a.hl7#1","type":"message"}"#
    );
    assert_eq!(
        line(&DryRunRecord::summary(1, 44)),
        r#"{"bytes":44,"dry_run":true,"exit_code":0,"messages":1,"type":"summary"}"#
    );
}

#[test]
fn each_event_keeps_its_field_names() {
    let failure = RunNote::GaveUp(LinkFailure {
        cause: Cause::TlsVerify,
        detail: "d".into(),
    });
    let note = |n: &RunNote| line(&SendEvent::note(n));
    assert_eq!(
        note(&failure),
        r#"{"cause":"tls-verify","detail":"d","event":"gave_up"}"#
    );
    assert_eq!(note(&RunNote::TimedOut), r#"{"event":"run_timeout"}"#);
    assert_eq!(
        note(&RunNote::Interrupted),
        r#"{"draining":true,"event":"interrupted","signal":null}"#
    );
    let failed_out = RunNote::FailedOutWrite {
        file: "f".into(),
        error: std::io::Error::other("e"),
    };
    assert_eq!(
        note(&failed_out),
        r#"{"error":"e","event":"failed_out_error","file":"f"}"#
    );
    let cases = [
        (
            SendEvent::InputError {
                message: "m".into(),
            },
            r#"{"event":"input_error","message":"m"}"#,
        ),
        (
            SendEvent::InternalError {
                read: 2,
                settled: 1,
            },
            r#"{"event":"internal_error","read":2,"settled":1}"#,
        ),
        (
            SendEvent::Connecting { endpoint: "h:1" },
            r#"{"endpoint":"h:1","event":"connecting"}"#,
        ),
        (
            SendEvent::Connected { endpoint: "h:1" },
            r#"{"endpoint":"h:1","event":"connected"}"#,
        ),
        (
            SendEvent::Ack {
                control_id: Some("C7"),
                ack_code: AckCode::AA,
                latency_ms: Some(1.5),
            },
            r#"{"ack_code":"AA","control_id":"C7","event":"ack","latency_ms":1.5}"#,
        ),
        (
            SendEvent::LinkFailure {
                endpoint: "h:1",
                cause: Cause::ConnectionRefused,
                class: Class::Transient,
                connected_before: false,
            },
            concat!(
                r#"{"cause":"connection-refused","class":"transient","connected_before":false,"#,
                r#""endpoint":"h:1","event":"link_failure"}"#
            ),
        ),
        (
            SendEvent::Written {
                control_id: None,
                bytes: 9,
            },
            r#"{"bytes":9,"control_id":null,"event":"written"}"#,
        ),
    ];
    for (event, expected) in cases {
        assert_eq!(line(&event), expected);
    }
    let client = |e: ClientEvent| line(&SendEvent::client(&e, "h:1"));
    let transition = Transition {
        from: State::Connecting,
        to: State::Connected,
        reason: Reason::Connected,
    };
    assert_eq!(
        client(ClientEvent::StateChange(transition)),
        format!(
            r#"{{"endpoint":"h:1","event":"state_change","from":"CONNECTING","reason":"{}","to":"CONNECTED"}}"#,
            Reason::Connected
        )
    );
    let reconnecting = ClientEvent::Reconnecting {
        attempt: 3,
        delay: Duration::from_millis(250),
    };
    assert_eq!(
        client(reconnecting),
        r#"{"attempt":3,"delay_ms":250,"endpoint":"h:1","event":"reconnecting"}"#
    );
    let error = ClientEvent::Error {
        cause: Cause::DeadPeer,
        class: Class::Transient,
    };
    assert_eq!(
        client(error),
        r#"{"cause":"dead-peer","class":"transient","endpoint":"h:1","event":"link_error"}"#
    );
    let warning = Warning::at(WarningCode::LfAfterFs, 12);
    assert_eq!(
        client(ClientEvent::Warning(warning)),
        r#"{"byte_offset":12,"code":"MLLP_LF_AFTER_FS","event":"warning"}"#
    );
    let turn = |moved| {
        ClientEvent::Host(HostTurn {
            endpoint: "b:2".into(),
            index: 1,
            moved,
        })
    };
    assert_eq!(
        client(turn(None)),
        r#"{"endpoint":"b:2","event":"connecting"}"#
    );
    let from = "a:1".to_string();
    assert_eq!(
        client(turn(Some(Move::Failover { from: from.clone() }))),
        r#"{"event":"failover","from":"a:1","to":"b:2"}"#
    );
    assert_eq!(
        client(turn(Some(Move::Failback { from }))),
        r#"{"event":"failback","from":"a:1","to":"b:2"}"#
    );
    let written = ClientEvent::Written {
        control_id: None,
        bytes: 1,
    };
    assert_eq!(client(written), r#"{"event":"client_event"}"#);
}

mod written_straight {
    use super::*;
    use proptest::prelude::*;

    /// Text that sometimes needs escapes: quotes, backslashes, control characters, non-ASCII.
    fn text() -> impl Strategy<Value = String> {
        prop::collection::vec(
            prop_oneof![
                6 => prop::char::range('a', 'z'),
                1 => prop::sample::select(vec!['"', '\\', '\n', '\r', '\u{1}', '\u{7f}', 'é', '/']),
            ],
            0..12,
        )
        .prop_map(|chars| chars.into_iter().collect())
    }

    fn cause() -> impl Strategy<Value = Option<&'static str>> {
        prop::option::of(prop::sample::select(vec![
            "run-timeout",
            "ack-timeout",
            "peer-closed",
        ]))
    }

    prop_compose! {
        fn record()(
            ack in prop::option::of(prop::option::of(text())),
            ack_code in prop::option::of(prop::sample::select(AckCode::ALL.to_vec())),
            ack_text in prop::option::of(text()),
            attempts in 0u32..5,
            bytes in 0usize..100_000,
            cause in cause(),
            cause_detail in cause(),
            control_id in prop::option::of(text()),
            error_code in prop::option::of(text()),
            latency in prop::option::of(0u64..10_000_000),
            link in prop::option::of(0usize..16),
            original_control_id in prop::option::of(text()),
            outcome in prop::sample::select(Population::ALL.to_vec()),
            source in text(),
        ) -> MessageRecord<'static> {
            MessageRecord {
                ack: ack.map(|a| a.map(Cow::Owned)),
                ack_code,
                ack_text: ack_text.map(Cow::Owned),
                attempts,
                bytes,
                cause,
                cause_detail,
                control_id,
                error_code: error_code.map(Cow::Owned),
                latency_ms: latency.map(|us| crate::output::tenth_ms(Duration::from_micros(us))),
                link,
                original_control_id,
                outcome,
                source,
                kind: RecordType::Message,
            }
        }
    }

    proptest! {
        /// The record written field by field is the line serde gives it, byte for byte.
        #[test]
        fn is_its_sorted_line(record in record()) {
            let mut written = Vec::new();
            record.write_line(&mut written).unwrap();
            prop_assert_eq!(String::from_utf8(written).unwrap(), line(&record) + "\n");
        }
    }
}
