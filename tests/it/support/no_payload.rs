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

#[test]
#[should_panic(expected = "leaks payload")]
fn a_planted_marker_is_found() {
    assert_no_marker("sample", &format!("error near {MARKER}"), MARKER);
}
