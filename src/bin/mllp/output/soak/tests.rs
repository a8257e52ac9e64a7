//! Each soak event pinned field by field: a renamed or dropped field fails here.

use super::*;
use crate::output::line;
use mllp::client::{Reason, State};
use mllp::soak::{ConnSample, RecentLatency, SoakTotals};
use std::time::Duration;

fn tally() -> SoakTotals {
    let mut t = SoakTotals {
        generated: 2,
        reconnects: 1,
        elapsed: Duration::from_secs(2),
        ..Default::default()
    };
    t.fates.accepted = 2;
    t.fates.by_code.insert("AA".into(), 2);
    t.errors_by_cause.insert("peer-closed".into(), 1);
    t
}

#[test]
fn progress_keeps_its_field_names() {
    let sample = Sample {
        elapsed: Duration::from_millis(1500),
        sent_per_s: 2.0,
        done_per_s: 1.0,
        latency: RecentLatency {
            p50_ms: 0.5,
            p99_ms: 0.75,
            max_ms: 1.0,
        },
        in_flight: 3,
        totals: tally(),
        connections: vec![ConnSample {
            state: State::Connected,
            reconnects: 1,
            in_flight: 3,
            generated: 2,
        }],
    };
    assert_eq!(
        line(&SoakEvent::progress(&sample)),
        concat!(
            r#"{"accepted":2,"by_code":{"AA":2},"committed_only":0,"done_per_s":1.0,"#,
            r#""elapsed_s":1.5,"errors_by_cause":{"peer-closed":1},"event":"progress","#,
            r#""generated":2,"in_flight":3,"latency_ms":{"max":1.0,"p50":0.5,"p99":0.75},"#,
            r#""negative":0,"never_delivered":0,"reconnects":1,"refused":0,"sent_per_s":2.0,"#,
            r#""states":{"CONNECTED":1},"unknown_fate":0}"#
        )
    );
}

#[test]
fn state_change_and_interrupted_keep_their_field_names() {
    let t = Transition {
        from: State::Connecting,
        to: State::Connected,
        reason: Reason::Connected,
    };
    assert_eq!(
        line(&SoakEvent::state_change(0, &t)),
        format!(
            r#"{{"connection":1,"event":"state_change","from":"CONNECTING","reason":"{}","to":"CONNECTED"}}"#,
            Reason::Connected
        )
    );
    let interrupted = SoakEvent::Interrupted { message: "m" };
    assert_eq!(
        line(&interrupted),
        r#"{"event":"interrupted","message":"m"}"#
    );
}

#[test]
fn the_report_event_is_the_report_less_its_bulk_plus_the_verdict() {
    let report = SoakReport::new(
        serde_json::json!({"seed": "1"}),
        &tally(),
        Default::default(),
    );
    let event = line(&SoakEvent::report(
        &report,
        Some("r.json".into()),
        Exit::Success,
    ));
    let event: serde_json::Value = serde_json::from_str(&event).unwrap();
    let keys: Vec<&str> = event
        .as_object()
        .unwrap()
        .keys()
        .map(|k| k.as_str())
        .collect();
    assert_eq!(
        keys,
        [
            "accepted",
            "accounting",
            "accounting_ok",
            "by_code",
            "bytes",
            "committed_only",
            "config",
            "elapsed_s",
            "errors_by_cause",
            "event",
            "exit_code",
            "generated",
            "latency_ms",
            "negative",
            "never_delivered",
            "outcomes_by_cause",
            "reconnects",
            "refused",
            "report_file",
            "runs",
            "state_changes",
            "thresholds",
            "thresholds_ok",
            "throughput",
            "unknown_fate",
            "warnings_by_code",
        ]
    );
    // Every field but the bulk is the report's own, value for value.
    let mut whole = serde_json::to_value(&report).unwrap();
    let whole = whole.as_object_mut().unwrap();
    whole.remove("histogram");
    whole.remove("per_second");
    for (key, value) in whole.iter() {
        assert_eq!(&event[key], value, "{key}");
    }
    assert_eq!(event["report_file"], "r.json");
    assert_eq!(event["exit_code"], 0);
}
