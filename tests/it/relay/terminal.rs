//! The relay's live status in an 80-column pseudo-terminal: the figures drawn at the foot, every
//! event line whole above them, nothing past the right edge.

use crate::support::listen_proc::ListenProc;
use crate::support::mllp_bin;
use crate::support::ports::closed_port;
use crate::support::screen::{in_terminal, Screen};

const COLS: usize = 80;

/// Runs a relay from 127.0.0.1 to `to` in a terminal, `mllp send`s `count` messages through it
/// (each send waits for the relay to listen by reconnecting), stops it with SIGINT; returns the
/// relay's exit code and the screen it left.
fn relay_in_terminal(to: &str, relay_args: &str, count: usize) -> (i32, Screen, String, String) {
    let dir = tempfile::tempdir().unwrap();
    for i in 1..=count {
        let message = format!("MSH|^~\\&|A|B|C|D|20240101000000||ADT^A01|RLY{i:03}|P|2.5\rPID|1\r");
        std::fs::write(dir.path().join(format!("m{i:02}.hl7")), message).unwrap();
    }
    let port = {
        let free = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        free.local_addr().unwrap().port()
    };
    let bin = mllp_bin().display().to_string();
    let script = format!(
        "{bin} relay --listen 127.0.0.1:{port} --to {to} {relay_args} & relay=$!; \
         {bin} send {dir} --recursive --host 127.0.0.1 --port {port} --give-up-after 20s \
           >/dev/null 2>&1; \
         kill -INT $relay; wait $relay",
        dir = dir.path().display()
    );
    let (code, bytes) = in_terminal(&format!("sh -c '{script}'"), COLS);
    let screen = Screen::replay(&bytes, COLS);
    let text = screen.lines().join("\n");
    (
        code,
        screen,
        text,
        String::from_utf8_lossy(&bytes).into_owned(),
    )
}

/// The screen's checks for any run: one status left (two lines, each inside the width), and
/// every event line whole. Some event lines (a downstream message line with its timestamp) are
/// longer than 80 columns: the terminal wraps them onto the next row, and that is the only wrap.
fn assert_clean(screen: &Screen, text: &str, messages: usize) -> (String, String) {
    let lines = screen.lines();
    let status: Vec<usize> = (0..lines.len())
        .filter(|&i| lines[i].starts_with("in: "))
        .collect();
    assert_eq!(
        status.len(),
        1,
        "one status left on the screen:
{text}"
    );
    let (first, second) = (&lines[status[0]], &lines[status[0] + 1]);
    assert!(second.starts_with("ack p50 "), "{text}");
    let mut whole = 0;
    for (i, line) in lines.iter().enumerate() {
        if line.contains(": message RLY") {
            let joined = format!("{line}{}", lines[i + 1]);
            assert!(
                line.starts_with("20") && line.chars().count() == COLS,
                "{line:?}\n{text}"
            );
            assert!(
                joined.contains(", upstream "),
                "a message line torn: {joined:?}\n{text}"
            );
            whole += 1;
        }
        if line.contains("listening on") || line.contains(" opened from ") {
            assert!(
                line.starts_with("20"),
                "not at the left edge: {line:?}\n{text}"
            );
        }
        if i != status[0] && i != status[0] + 1 {
            assert!(
                !line.contains("in: ") && !line.contains("ack p50"),
                "a status ran into a line: {line:?}\n{text}"
            );
        }
    }
    assert_eq!(whole, messages, "{text}");
    assert!(
        first.chars().count() < COLS && second.chars().count() < COLS,
        "{text}"
    );
    let full_rows = lines.iter().filter(|l| l.chars().count() == COLS).count();
    assert_eq!(
        screen.wraps, full_rows,
        "a line ran past {COLS} columns other than by wrapping an event line:\n{text}"
    );
    (first.clone(), second.clone())
}

#[test]
fn the_relay_status_shows_both_sides_and_the_event_lines_stay_whole() {
    let upstream = ListenProc::start(&["--format", "raw"]);
    let (code, screen, text, _) =
        relay_in_terminal(&upstream.addr.to_string(), "--connect-timeout 5s", 3);
    assert_eq!(code, 0, "{text}");
    let (first, second) = assert_clean(&screen, &text, 3);
    // The sender has closed by the stop, but the relay may stop before it has seen the close.
    assert!(
        first.starts_with("in: 0 conn ") || first.starts_with("in: 1 conn "),
        "{first:?}"
    );
    for field in ["/s  out: connected ", "reconnects 0"] {
        assert!(first.contains(field), "{field:?} not in {first:?}");
    }
    // Three answered messages: the percentiles are figures, not `-`.
    assert!(
        second.contains("ms p99 ") && second.ends_with("ms  no failure"),
        "{second}"
    );
    assert!(text.contains("CONNECTING -> CONNECTED"), "{text}");
    let last = screen.lines().pop().unwrap_or_default();
    assert!(
        last.starts_with("  "),
        "the stop summary comes last:\n{text}"
    );
}

#[test]
fn the_relay_status_names_the_last_failure_and_its_class() {
    let closed = format!("127.0.0.1:{}", closed_port());
    let (code, screen, text, _) = relay_in_terminal(&closed, "--connect-timeout 300ms", 1);
    assert_eq!(code, 0, "{text}");
    let (first, second) = assert_clean(&screen, &text, 1);
    assert!(!first.contains("reconnects 0"), "{first}");
    assert_eq!(
        second, "ack p50 - p99 -  last failure connection-refused (transient)",
        "{text}"
    );
}
