//! Integration tests: what a person sees in an 80-column terminal. The binary runs in a
//! pseudo-terminal (`script`), and its output is replayed on a small terminal model: result
//! lines must sit alone at the left edge with no bar left behind, and nothing may run past the
//! right edge (a wrapped line breaks mid-word).

use crate::support::listen_proc::ListenProc;
use crate::support::mllp_bin;
use crate::support::screen::{in_terminal, Screen};

const COLS: usize = 80;

/// Every `.../s` figure in `text` shows at most one decimal and no thousands separator.
fn assert_rates_rounded(text: &str) {
    for word in text.split(|c: char| c.is_whitespace() || c == '(' || c == ')') {
        let Some(number) = word.strip_suffix("/s") else {
            continue;
        };
        assert!(!number.contains(','), "rate with a separator: {word}");
        let decimals = number.split_once('.').map_or(0, |(_, d)| d.len());
        assert!(decimals <= 1, "unrounded rate: {word}");
    }
}

#[test]
fn send_results_and_the_progress_bar_share_a_terminal_cleanly() {
    let listen = ListenProc::start(&["--ack-delay", "20ms", "--format", "raw"]);
    let dir = tempfile::tempdir().unwrap();
    for i in 1..=25 {
        let message =
            format!("MSH|^~\\&|A|B|C|D|20240101000000||ADT^A01|TERM{i:04}|P|2.5\rPID|1\r");
        std::fs::write(dir.path().join(format!("m{i:02}.hl7")), message).unwrap();
    }
    let command = format!(
        "{} send {} --recursive --host 127.0.0.1 --port {} --no-pipeline",
        mllp_bin().display(),
        dir.path().display(),
        listen.addr.port()
    );
    let (code, bytes) = in_terminal(&command, COLS);
    let text = String::from_utf8_lossy(&bytes);
    assert_eq!(code, 0, "{text}");
    assert!(text.contains('\u{2588}'), "no bar was drawn: {text:?}");
    assert_rates_rounded(&text);
    let screen = Screen::replay(&bytes, COLS);
    let lines = screen.lines();
    assert_eq!(
        screen.wraps,
        0,
        "a line ran past {COLS} columns:\n{}",
        lines.join("\n")
    );
    let prefix = dir.path().display().to_string();
    let results: Vec<&String> = lines.iter().filter(|l| l.contains("TERM0")).collect();
    assert_eq!(results.len(), 25, "{}", lines.join("\n"));
    for line in &results {
        assert!(
            line.starts_with(&prefix),
            "a result line not at the left edge: {line:?}"
        );
        assert!(line.contains(" AA "), "{line}");
    }
    for line in &lines {
        assert!(
            !line.contains('\u{2588}') && !line.contains('\u{2591}') && !line.contains("in flight"),
            "a stale bar is left on the screen: {line:?}\n{}",
            lines.join("\n")
        );
    }
    assert!(
        lines.iter().any(|l| l.starts_with("sent 25 messages")),
        "{}",
        lines.join("\n")
    );
}

#[test]
fn the_soak_live_view_fits_the_terminal() {
    let command = format!(
        "{} soak --duration 1500ms --rate 400 --connections 2 --live always",
        mllp_bin().display()
    );
    let (code, bytes) = in_terminal(&command, COLS);
    let screen = Screen::replay(&bytes, COLS);
    let lines = screen.lines();
    assert_eq!(code, 0, "{}", lines.join("\n"));
    assert!(
        String::from_utf8_lossy(&bytes).contains("#2"),
        "no live view was drawn"
    );
    assert_eq!(
        screen.wraps,
        0,
        "a line ran past {COLS} columns:\n{}",
        lines.join("\n")
    );
    assert!(
        lines.iter().any(|l| l.starts_with("soak: ")),
        "{}",
        lines.join("\n")
    );
}
