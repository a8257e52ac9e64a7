//! The stdout sink: each message printed as HL7 text, JSON or re-framed MLLP, flushed before the
//! ACK. A connection writes and flushes its whole batch itself, under a lock that keeps batches
//! from different connections whole and in order; a closed stdout fails the commit (AE), it does
//! not end the process.

use super::{Inbound, Sink, SinkFuture, SinkResult};
use crate::server::clock::Utc;
use crate::warning::WarningCode;
use base64::Engine;
use serde::Serialize;
use std::io::Write;
use std::sync::{Arc, Mutex};

/// How a message is printed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum OutputFormat {
    /// The payload with segment terminators shown as newlines, a blank line after each message.
    #[default]
    Hl7,
    /// One JSON object per line.
    Json,
    /// Each message re-framed as MLLP (`VT payload FS CR`), byte for byte.
    Raw,
}

type Writer = Arc<Mutex<Box<dyn Write + Send>>>;

/// Prints messages to stdout (or any writer, for tests).
pub struct StdoutSink {
    format: OutputFormat,
    writer: Writer,
    /// Writes return at once (a regular file, `/dev/null`): done on the connection's task. A
    /// pipe, socket or terminal can stall, so those writes go to the blocking pool.
    prompt: bool,
    /// Taken before a batch is rendered for the blocking pool and held until it is written:
    /// batches waiting for a stalled stdout wait as they are, not as rendered copies.
    turn: Arc<tokio::sync::Mutex<()>>,
}

impl std::fmt::Debug for StdoutSink {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("StdoutSink")
            .field("format", &self.format)
            .field("prompt", &self.prompt)
            .finish()
    }
}

impl StdoutSink {
    /// Write to standard output in `format`.
    pub fn new(format: OutputFormat) -> std::io::Result<StdoutSink> {
        let mut sink = StdoutSink::with_writer(format, own_stdout())?;
        sink.prompt = stdout_is_prompt();
        Ok(sink)
    }

    /// Print to `writer`, which may block: its writes are moved off the runtime's workers.
    pub(crate) fn with_writer(
        format: OutputFormat,
        writer: Box<dyn Write + Send>,
    ) -> std::io::Result<StdoutSink> {
        Ok(StdoutSink {
            format,
            writer: Arc::new(Mutex::new(writer)),
            prompt: false,
            turn: Arc::default(),
        })
    }

    fn render(&self, message: &Inbound, out: &mut Vec<u8>) {
        match self.format {
            OutputFormat::Hl7 => render_hl7(&message.payload, out),
            OutputFormat::Raw => render_raw(&message.payload, out),
            OutputFormat::Json => {
                let record = JsonRecord::of(message);
                // Serialising plain strings and numbers into a Vec cannot fail.
                let _ = serde_json::to_writer(&mut *out, &record);
                out.push(b'\n');
            }
        }
    }

    fn render_batch(&self, messages: &[Inbound], out: &mut Vec<u8>) {
        if self.format == OutputFormat::Raw {
            // The format asked once per batch, and each frame written in the loop.
            for message in messages {
                render_raw(&message.payload, out);
            }
        } else {
            for message in messages {
                self.render(message, out);
            }
        }
    }

    /// This batch's turn to be rendered and written, when the writes go to the blocking pool.
    async fn turn(&self) -> Option<tokio::sync::MutexGuard<'_, ()>> {
        match self.prompt {
            true => None,
            false => Some(self.turn.lock().await),
        }
    }

    /// Write and flush `bytes` as one piece: committed, or failed with the write's error.
    async fn print(&self, bytes: Vec<u8>) -> SinkResult {
        let written = if self.prompt {
            write_flush(&self.writer, &bytes)
        } else {
            // Off the runtime's workers, and awaited so a stop can still cancel the commit: a
            // write stuck on a stalled pipe then holds one blocking thread, not the server.
            let writer = Arc::clone(&self.writer);
            tokio::task::spawn_blocking(move || write_flush(&writer, &bytes))
                .await
                .unwrap_or_else(|e| Err(format!("stdout: writer task: {e}")))
        };
        match written {
            Ok(()) => SinkResult::committed(),
            Err(e) => SinkResult::failed(e),
        }
    }
}

/// `payload` framed as it arrived.
#[inline]
fn render_raw(payload: &[u8], out: &mut Vec<u8>) {
    out.push(crate::framing::VT);
    out.extend_from_slice(payload);
    out.extend_from_slice(&[crate::framing::FS, crate::framing::CR]);
}

fn write_flush(writer: &Writer, bytes: &[u8]) -> Result<(), String> {
    // A panic inside a write leaves the writer usable: the next write reports its own error.
    let mut writer = writer.lock().unwrap_or_else(|p| p.into_inner());
    writer
        .write_all(bytes)
        .and_then(|()| writer.flush())
        .map_err(|e| format!("stdout: {e}"))
}

/// A handle of its own on standard output. std's stdout is line-buffered, so it searches every
/// write for a newline (raw frames hold none, and a batch is flushed whole anyway): about a
/// tenth of the receiver's work per message. Where fd 1 cannot be duplicated, std's stdout.
fn own_stdout() -> Box<dyn Write + Send> {
    use std::os::fd::AsFd;
    match std::io::stdout().as_fd().try_clone_to_owned() {
        Ok(fd) => Box::new(std::fs::File::from(fd)),
        Err(_) => Box::new(std::io::stdout()),
    }
}

/// Whether stdout is a regular file or a character device other than a terminal
/// (`/dev/null`): writes that never wait on a reader.
fn stdout_is_prompt() -> bool {
    use std::io::IsTerminal;
    use std::os::fd::AsFd;
    use std::os::unix::fs::FileTypeExt;
    let stdout = std::io::stdout();
    if stdout.is_terminal() {
        return false;
    }
    let Ok(fd) = stdout.as_fd().try_clone_to_owned() else {
        return false;
    };
    match std::fs::File::from(fd).metadata() {
        Ok(meta) => meta.file_type().is_file() || meta.file_type().is_char_device(),
        Err(_) => false,
    }
}

fn render_hl7(payload: &[u8], out: &mut Vec<u8>) {
    // Copy whole segments at a time: segment terminators are sparse.
    let mut rest = payload;
    while let Some(at) = memchr::memchr(b'\r', rest) {
        out.extend_from_slice(&rest[..at]);
        out.push(b'\n');
        let skip = if rest.get(at + 1) == Some(&b'\n') {
            2
        } else {
            1
        };
        rest = &rest[at + skip..];
    }
    out.extend_from_slice(rest);
    if out.last() != Some(&b'\n') {
        out.push(b'\n');
    }
    out.push(b'\n');
}

#[derive(Serialize)]
struct JsonRecord<'a> {
    received_at: String,
    peer: &'a str,
    connection: u64,
    seq: u64,
    control_id: Option<String>,
    message_type: Option<String>,
    bytes: usize,
    /// The text, read in the character set MSH-18 names (undecodable bytes as `\Xhh\`).
    payload: std::borrow::Cow<'a, str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    payload_base64: Option<String>,
    /// `MLLP_TEXT_NOT_IN_CHARSET` or `MLLP_CHARSET_UNKNOWN`, when the text is not all of it.
    #[serde(skip_serializing_if = "Option::is_none")]
    warning: Option<&'static str>,
}

impl<'a> JsonRecord<'a> {
    fn of(m: &'a Inbound) -> Self {
        let utf8 = std::str::from_utf8(&m.payload).is_ok();
        let message = crate::hl7::Message::new(&m.payload);
        let (charset, mut warning) = match crate::hl7::Charset::for_message(&message, None) {
            Ok(charset) => (charset, None),
            Err(_) => (
                crate::hl7::Charset::UTF_8,
                Some(WarningCode::CharsetUnknown.as_str()),
            ),
        };
        let text = charset.decode(&m.payload);
        if text.undecodable() > 0 {
            warning = warning.or(Some(WarningCode::TextNotInCharset.as_str()));
        }
        JsonRecord {
            received_at: Utc::from_system(m.received_at).rfc3339(),
            peer: &m.peer,
            connection: m.connection,
            seq: m.seq,
            control_id: m.control_id().map(|_| m.control_id_lossy()),
            message_type: m.message_type().map(|_| m.message_type_lossy()),
            bytes: m.payload.len(),
            payload: text.into_cow(),
            payload_base64: match utf8 {
                true => None,
                false => Some(base64::engine::general_purpose::STANDARD.encode(&m.payload)),
            },
            warning,
        }
    }
}

impl Sink for StdoutSink {
    /// Where writes return at once: one write and flush for the batch, the same commit as
    /// `commit_batch`'s without a future or a list of results.
    fn commit_now(&self, messages: &[Inbound]) -> Option<SinkResult> {
        if !self.prompt {
            return None;
        }
        let size: usize = messages.iter().map(|m| m.payload.len() + 64).sum();
        let mut out = Vec::with_capacity(size);
        self.render_batch(messages, &mut out);
        Some(match write_flush(&self.writer, &out) {
            Ok(()) => SinkResult::committed(),
            Err(e) => SinkResult::failed(e),
        })
    }

    fn commit<'a>(&'a self, message: &'a Inbound) -> SinkFuture<'a, SinkResult> {
        Box::pin(async move {
            let _turn = self.turn().await;
            let size = message.payload.len() + 64;
            let mut out = Vec::with_capacity(size);
            self.render(message, &mut out);
            self.print(out).await
        })
    }

    fn commit_batch<'a>(&'a self, messages: &'a [Inbound]) -> SinkFuture<'a, Vec<SinkResult>> {
        Box::pin(async move {
            let _turn = self.turn().await;
            let size: usize = messages.iter().map(|m| m.payload.len() + 64).sum();
            let mut out = Vec::with_capacity(size);
            self.render_batch(messages, &mut out);
            // One write for the batch: all committed together or none.
            let result = self.print(out).await;
            if result == SinkResult::committed() {
                // Made for each message rather than cloned: nothing in it to copy.
                return messages.iter().map(|_| SinkResult::committed()).collect();
            }
            vec![result; messages.len()]
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A writer whose bytes the test can read back.
    #[derive(Clone, Default)]
    struct Captured(Arc<Mutex<Vec<u8>>>);

    impl Write for Captured {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            self.0.lock().unwrap().extend_from_slice(buf);
            Ok(buf.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    /// Messages of connection 1 from peer `p`, numbered from 1.
    fn batch(payloads: &[&'static str]) -> Vec<Inbound> {
        let peer: Arc<str> = Arc::from("p");
        let inbound = |(i, p): (usize, &&'static str)| {
            Inbound::new(1, i as u64 + 1, peer.clone(), (*p).into(), false)
        };
        payloads.iter().enumerate().map(inbound).collect()
    }

    #[tokio::test]
    async fn batches_are_written_whole_on_either_path() {
        let batch = batch(&["MSH|1\r", "MSH|2\r"]);
        for prompt in [false, true] {
            let out = Captured::default();
            let mut sink =
                StdoutSink::with_writer(OutputFormat::Raw, Box::new(out.clone())).unwrap();
            sink.prompt = prompt;
            let results = sink.commit_batch(&batch).await;
            assert_eq!(results, vec![SinkResult::committed(); 2]);
            assert_eq!(
                &*out.0.lock().unwrap(),
                b"\x0bMSH|1\r\x1c\r\x0bMSH|2\r\x1c\r",
                "prompt {prompt}"
            );
        }
    }

    /// A writer that refuses every write.
    struct Closed;

    impl Write for Closed {
        fn write(&mut self, _: &[u8]) -> std::io::Result<usize> {
            Err(std::io::ErrorKind::BrokenPipe.into())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    #[tokio::test]
    async fn a_failed_write_fails_every_message_of_the_batch() {
        let batch = batch(&["MSH|1\r", "MSH|2\r", "MSH|3\r"]);
        let mut sink = StdoutSink::with_writer(OutputFormat::Raw, Box::new(Closed)).unwrap();
        sink.prompt = true;
        let results = sink.commit_batch(&batch).await;
        assert_eq!(results.len(), 3);
        for result in &results {
            assert_eq!(result.disposition, crate::ack::Disposition::CommitFailed);
            assert!(result.detail.is_some());
        }
        assert!(results.iter().all(|r| *r == results[0]));
    }

    #[test]
    fn a_commit_now_writes_the_batch_whole_only_where_writes_return_at_once() {
        let batch = batch(&["MSH|1\r", "MSH|2\r"]);
        let out = Captured::default();
        let mut sink = StdoutSink::with_writer(OutputFormat::Raw, Box::new(out.clone())).unwrap();
        assert_eq!(sink.commit_now(&batch), None, "a writer that may block");
        assert!(out.0.lock().unwrap().is_empty());
        sink.prompt = true;
        assert_eq!(sink.commit_now(&batch), Some(SinkResult::committed()));
        assert_eq!(
            &*out.0.lock().unwrap(),
            b"\x0bMSH|1\r\x1c\r\x0bMSH|2\r\x1c\r"
        );
        let mut closed = StdoutSink::with_writer(OutputFormat::Raw, Box::new(Closed)).unwrap();
        closed.prompt = true;
        let failed = closed.commit_now(&batch).unwrap();
        assert_eq!(failed.disposition, crate::ack::Disposition::CommitFailed);
        assert!(failed.detail.is_some());
    }

    #[test]
    fn hl7_format_shows_segments_as_lines() {
        let mut out = Vec::new();
        render_hl7(b"MSH|a\rPID|b\r\nOBX|c", &mut out);
        assert_eq!(out, b"MSH|a\nPID|b\nOBX|c\n\n");
        for (payload, want) in [
            (&b"MSH|a\r"[..], &b"MSH|a\n\n"[..]),
            (b"\r\r\n\n", b"\n\n\n\n"),
            (b"", b"\n\n"),
            (b"A\nB", b"A\nB\n\n"),
        ] {
            out.clear();
            render_hl7(payload, &mut out);
            assert_eq!(out, want, "{payload:?}");
        }
    }
}
