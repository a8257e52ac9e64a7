//! A command's stderr, read while it runs and reported line by line as the command's own
//! events: each line cut at [`EXEC_STDERR_LINE_MAX`] bytes, so a command writing without
//! newlines cannot make one huge line.

use crate::server::{ConnectionId, ServerEvent, StoreReports};
use tokio::io::AsyncReadExt;
use tokio::process::ChildStderr;

/// The longest stderr line reported whole; the rest of a longer one is dropped and the line
/// marked truncated.
pub const EXEC_STDERR_LINE_MAX: usize = 1000;

/// Bytes to lines of at most [`EXEC_STDERR_LINE_MAX`] bytes, without a trailing CR.
#[derive(Debug, Default)]
pub(crate) struct Lines {
    line: Vec<u8>,
    truncated: bool,
}

impl Lines {
    /// Take `chunk`, calling `out(line, truncated)` for each line it completes.
    pub(crate) fn feed(&mut self, chunk: &[u8], mut out: impl FnMut(String, bool)) {
        let mut rest = chunk;
        while let Some(end) = memchr::memchr(b'\n', rest) {
            self.take(&rest[..end]);
            self.emit(&mut out);
            rest = &rest[end + 1..];
        }
        self.take(rest);
    }

    /// The last line, when the stream ended without a newline.
    pub(crate) fn finish(&mut self, mut out: impl FnMut(String, bool)) {
        if !self.line.is_empty() || self.truncated {
            self.emit(&mut out);
        }
    }

    fn take(&mut self, bytes: &[u8]) {
        let room = EXEC_STDERR_LINE_MAX - self.line.len();
        if bytes.len() > room {
            self.line.extend_from_slice(&bytes[..room]);
            self.truncated = true;
        } else {
            self.line.extend_from_slice(bytes);
        }
    }

    fn emit(&mut self, out: &mut impl FnMut(String, bool)) {
        let mut line = &self.line[..];
        if let [head @ .., b'\r'] = line {
            line = head;
        }
        if self.truncated {
            // A cut inside a character drops its first bytes rather than showing them as junk.
            if let Err(e) = std::str::from_utf8(line) {
                if e.error_len().is_none() {
                    line = &line[..e.valid_up_to()];
                }
            }
        }
        out(String::from_utf8_lossy(line).into_owned(), self.truncated);
        self.line.clear();
        self.truncated = false;
    }
}

/// Read `stderr` to its end, reporting each line as an [`ServerEvent::ExecStderr`].
pub(super) async fn report(
    mut stderr: ChildStderr,
    connection: ConnectionId,
    pid: u32,
    reports: StoreReports,
) {
    let mut buf = vec![0; 8192];
    let mut lines = Lines::default();
    let mut ready = Vec::new();
    let event = |line, truncated| ServerEvent::ExecStderr {
        connection,
        pid,
        line,
        truncated,
    };
    loop {
        let n = match stderr.read(&mut buf).await {
            Ok(0) | Err(_) => break,
            Ok(n) => n,
        };
        lines.feed(&buf[..n], |line, truncated| {
            ready.push(event(line, truncated))
        });
        for e in ready.drain(..) {
            reports.send(e).await;
        }
    }
    lines.finish(|line, truncated| ready.push(event(line, truncated)));
    for e in ready.drain(..) {
        reports.send(e).await;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn split(chunks: &[Vec<u8>]) -> Vec<(String, bool)> {
        let mut lines = Lines::default();
        let mut out = Vec::new();
        for chunk in chunks {
            lines.feed(chunk, |l, t| out.push((l, t)));
        }
        lines.finish(|l, t| out.push((l, t)));
        out
    }

    /// The reference: the whole stream split on newlines, each line cut at the bound (marked
    /// when it was longer), then one trailing CR dropped.
    fn model(stream: &[u8]) -> Vec<(String, bool)> {
        let mut parts: Vec<&[u8]> = stream.split(|b| *b == b'\n').collect();
        if parts.last().is_some_and(|p| p.is_empty()) {
            parts.pop();
        }
        parts
            .into_iter()
            .map(|p| {
                let truncated = p.len() > EXEC_STDERR_LINE_MAX;
                let p = &p[..p.len().min(EXEC_STDERR_LINE_MAX)];
                let p = p.strip_suffix(b"\r").unwrap_or(p);
                (String::from_utf8_lossy(p).into_owned(), truncated)
            })
            .collect()
    }

    #[test]
    fn a_long_line_is_cut_and_marked() {
        let mut stream = vec![b'x'; 5000];
        stream.extend_from_slice(b"\nshort\r\n");
        let out = split(&[stream]);
        assert_eq!(out.len(), 2);
        assert_eq!(out[0].0.len(), EXEC_STDERR_LINE_MAX);
        assert!(out[0].1);
        assert_eq!(out[1], ("short".to_string(), false));
    }

    #[test]
    fn a_cut_inside_a_character_drops_the_character() {
        let mut stream = vec![b'x'; EXEC_STDERR_LINE_MAX - 1];
        stream.extend_from_slice("é and more".as_bytes());
        let out = split(&[stream]);
        assert_eq!(out, vec![("x".repeat(EXEC_STDERR_LINE_MAX - 1), true)]);
    }

    proptest! {
        /// Lines (short, long, with CRs) come out as the model says however the stream is cut.
        #[test]
        fn lines_are_cut_the_same_however_the_stream_arrives(
            lines in proptest::collection::vec("[a-z \r]{0,40}|[a-z\r]{990,1010}|x{0,2500}", 0..12),
            cuts in proptest::collection::vec(0usize..20_000, 0..10),
        ) {
            let stream: Vec<u8> = lines.iter().flat_map(|l| format!("{l}\n").into_bytes()).collect();
            let mut cuts: Vec<usize> = cuts.into_iter().map(|c| c.min(stream.len())).collect();
            cuts.sort();
            let mut chunks = Vec::new();
            let mut at = 0;
            for cut in cuts.into_iter().chain([stream.len()]) {
                chunks.push(stream[at..cut].to_vec());
                at = cut;
            }
            let expected: Vec<(String, bool)> = model(&stream);
            prop_assert_eq!(split(&chunks), expected);
        }
    }
}
