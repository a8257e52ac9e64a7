//! The no-payload check: a marker planted in payloads must never show in diagnostics.

/// A marker to plant in payloads; distinctive enough never to occur by chance.
pub const MARKER: &str = "PAYLOADMARKER7Q3";

/// Panics when `marker` appears in `text`, naming what was being checked.
pub fn assert_no_marker(what: &str, text: &str, marker: &str) {
    assert!(
        !text.contains(marker),
        "{what} leaks payload: marker {marker:?} found in {text:?}"
    );
}

/// Checks an error or event both ways it can be shown: `Display` and `Debug`.
pub fn assert_clean<T: std::fmt::Display + std::fmt::Debug>(what: &str, value: &T, marker: &str) {
    assert_no_marker(what, &value.to_string(), marker);
    assert_no_marker(what, &format!("{value:?}"), marker);
    assert_no_marker(what, &format!("{value:#?}"), marker);
}

/// As [`assert_clean`] for values that only have `Debug`.
pub fn assert_clean_debug<T: std::fmt::Debug>(what: &str, value: &T, marker: &str) {
    assert_no_marker(what, &format!("{value:?}"), marker);
    assert_no_marker(what, &format!("{value:#?}"), marker);
}

/// A finished run's diagnostics: all of stderr, and every JSON record on stdout but the fields
/// that hold data the user asked for (`ack`, `--print-ack`'s ACK; `show --json`'s `values` and
/// `fields`; `check -v --json`'s `value`).
pub fn assert_output_clean(what: &str, out: &std::process::Output) {
    assert_no_marker(
        &format!("{what} stderr"),
        &String::from_utf8_lossy(&out.stderr),
        MARKER,
    );
    assert_records_clean(
        &format!("{what} stdout"),
        &String::from_utf8_lossy(&out.stdout),
    );
}

/// The JSON records among `stdout`'s lines (results, summaries, reports), without the data
/// asked for.
pub fn assert_records_clean(what: &str, stdout: &str) {
    for line in stdout.lines() {
        let Ok(serde_json::Value::Object(mut record)) = serde_json::from_str(line) else {
            continue;
        };
        for data in ["ack", "values", "fields", "value"] {
            record.remove(data);
        }
        assert_no_marker(what, &serde_json::Value::Object(record).to_string(), MARKER);
    }
}

#[test]
#[should_panic(expected = "leaks payload")]
fn a_planted_marker_is_found() {
    assert_no_marker("sample", &format!("error near {MARKER}"), MARKER);
}

#[test]
fn an_acks_payload_is_data_but_a_records_other_fields_are_not() {
    assert_records_clean(
        "ack",
        &format!("{{\"ack\":\"MSA|AA|{MARKER}\"}}\nnot json {MARKER}"),
    );
    let leak = std::panic::catch_unwind(|| {
        assert_records_clean("cause", &format!("{{\"cause\":\"near {MARKER}\"}}"))
    });
    assert!(leak.is_err(), "a marker in a record's cause is a leak");
}

/// The sweep is wired into the listener helper: a command that copies each message to stderr
/// (the user's own choice) is caught.
#[tokio::test]
#[should_panic(expected = "leaks payload")]
async fn listen_stderr_is_swept_on_every_event() {
    use super::listen_proc::{is, ListenProc};
    use super::mllp_client::{marked, MllpClient};
    let server = ListenProc::start(&["--exec", "cat >&2"]);
    let mut client = MllpClient::connect(server.addr).await;
    client.send(&marked("SWEEP1", "")).await;
    let _ = client.ack().await;
    server.wait_event(is("message"));
    drop(server);
}
