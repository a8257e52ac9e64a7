//! A command's answer in its own words: the first line it prints on stdout, made safe for an
//! ACK (no control bytes, no HL7 separators, at most [`WORDS_MAX`] bytes). The rest of its
//! output is read and dropped, so a talkative command never blocks on a full pipe.

use tokio::io::AsyncReadExt;
use tokio::process::ChildStdout;

/// The longest wording kept, in bytes.
pub(crate) const WORDS_MAX: usize = 80;
/// Of the first line, at most this much is looked at.
const LINE_MAX: usize = 1024;

/// Read `out` to its end; the start of its first line.
pub(super) async fn first_line(mut out: ChildStdout) -> Vec<u8> {
    let mut line = Vec::new();
    let mut done = false;
    let mut buf = [0u8; 4096];
    while let Ok(n @ 1..) = out.read(&mut buf).await {
        if done {
            continue;
        }
        let chunk = &buf[..n];
        let end = chunk.iter().position(|&b| b == b'\n');
        let take = end.unwrap_or(n).min(LINE_MAX - line.len());
        line.extend_from_slice(&chunk[..take]);
        done = end.is_some() || line.len() == LINE_MAX;
    }
    line
}

/// `line` without control bytes and HL7 separators, trimmed, cut to [`WORDS_MAX`] bytes on a
/// character boundary; `None` when nothing is left.
pub(super) fn made_safe(line: &[u8]) -> Option<String> {
    let text = String::from_utf8_lossy(line);
    let kept: String = text
        .chars()
        .filter(|c| !c.is_control() && !matches!(c, '|' | '^' | '~' | '\\' | '&'))
        .collect();
    let mut words = kept.trim();
    if words.len() > WORDS_MAX {
        let mut end = WORDS_MAX;
        while !words.is_char_boundary(end) {
            end -= 1;
        }
        words = words[..end].trim_end();
    }
    (!words.is_empty()).then(|| words.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn words_are_made_safe_and_short() {
        assert_eq!(made_safe(b"stored as 42"), Some("stored as 42".into()));
        assert_eq!(
            made_safe(b"a|b^c~d\\e&f\tg\rh\x1b"),
            Some("abcdefgh".into())
        );
        assert_eq!(made_safe(b"  \t\r"), None);
        let long = "\u{e9}".repeat(60);
        let cut = made_safe(long.as_bytes()).unwrap();
        assert!(cut.len() <= WORDS_MAX && cut.chars().all(|c| c == '\u{e9}'));
        assert_eq!(made_safe(&[0xff, b'o', b'k']), Some("\u{fffd}ok".into()));
    }
}
