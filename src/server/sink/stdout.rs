//! The stdout sink: each message printed as HL7 text, JSON or re-framed MLLP, flushed before the
//! ACK. One writer thread serves every connection, so messages that arrive together share one
//! write and one flush; a closed stdout fails the commit (AE), it does not end the process.

use super::{Inbound, Sink, SinkFuture, SinkResult};
use crate::server::clock::Utc;
use base64::Engine;
use serde::Serialize;
use std::io::Write;
use tokio::sync::{mpsc, oneshot};

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

/// Bounded: a stalled stdout slows the receivers down, it never buffers without limit.
const QUEUE: usize = 256;

struct Job {
    bytes: Vec<u8>,
    done: oneshot::Sender<Result<(), String>>,
}

/// Prints messages to stdout (or any writer, for tests).
pub struct StdoutSink {
    format: OutputFormat,
    jobs: mpsc::Sender<Job>,
}

impl std::fmt::Debug for StdoutSink {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("StdoutSink")
            .field("format", &self.format)
            .finish()
    }
}

impl StdoutSink {
    pub fn new(format: OutputFormat) -> std::io::Result<StdoutSink> {
        StdoutSink::with_writer(format, Box::new(std::io::stdout()))
    }

    /// Print to `writer` from a dedicated thread.
    pub fn with_writer(
        format: OutputFormat,
        mut writer: Box<dyn Write + Send>,
    ) -> std::io::Result<StdoutSink> {
        let (jobs, mut rx) = mpsc::channel::<Job>(QUEUE);
        std::thread::Builder::new()
            .name("mllp-stdout".into())
            .spawn(move || {
                let mut batch = Vec::new();
                while let Some(job) = rx.blocking_recv() {
                    batch.push(job);
                    while let Ok(more) = rx.try_recv() {
                        batch.push(more);
                    }
                    let mut result = Ok(());
                    for job in &batch {
                        if let Err(e) = writer.write_all(&job.bytes) {
                            result = Err(format!("stdout: {e}"));
                            break;
                        }
                    }
                    if result.is_ok() {
                        if let Err(e) = writer.flush() {
                            result = Err(format!("stdout: {e}"));
                        }
                    }
                    for job in batch.drain(..) {
                        let _ = job.done.send(result.clone());
                    }
                }
            })?;
        Ok(StdoutSink { format, jobs })
    }

    fn render(&self, message: &Inbound, out: &mut Vec<u8>) {
        match self.format {
            OutputFormat::Hl7 => render_hl7(&message.payload, out),
            OutputFormat::Raw => {
                out.push(crate::framing::VT);
                out.extend_from_slice(&message.payload);
                out.extend_from_slice(&[crate::framing::FS, crate::framing::CR]);
            }
            OutputFormat::Json => {
                let record = JsonRecord::of(message);
                // Serialising plain strings and numbers into a Vec cannot fail.
                let _ = serde_json::to_writer(&mut *out, &record);
                out.push(b'\n');
            }
        }
    }

    async fn print(&self, bytes: Vec<u8>) -> Result<(), String> {
        let (done, wait) = oneshot::channel();
        self.jobs
            .send(Job { bytes, done })
            .await
            .map_err(|_| "stdout writer stopped".to_string())?;
        wait.await
            .unwrap_or_else(|_| Err("stdout writer stopped".into()))
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
    #[serde(skip_serializing_if = "Option::is_none")]
    payload: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    payload_base64: Option<String>,
}

impl<'a> JsonRecord<'a> {
    fn of(m: &'a Inbound) -> Self {
        let text = std::str::from_utf8(&m.payload).ok();
        JsonRecord {
            received_at: Utc::from_system(m.received_at).rfc3339(),
            peer: &m.peer,
            connection: m.connection,
            seq: m.seq,
            control_id: m.control_id.as_ref().map(|_| m.control_id_lossy()),
            message_type: m.message_type.as_ref().map(|_| m.message_type_lossy()),
            bytes: m.payload.len(),
            payload: text,
            payload_base64: match text {
                Some(_) => None,
                None => Some(base64::engine::general_purpose::STANDARD.encode(&m.payload)),
            },
        }
    }
}

impl Sink for StdoutSink {
    fn commit<'a>(&'a self, message: &'a Inbound) -> SinkFuture<'a, SinkResult> {
        Box::pin(async move {
            let mut out = Vec::with_capacity(message.payload.len() + 64);
            self.render(message, &mut out);
            match self.print(out).await {
                Ok(()) => SinkResult::committed(),
                Err(e) => SinkResult::failed(e),
            }
        })
    }

    fn commit_batch<'a>(&'a self, messages: &'a [Inbound]) -> SinkFuture<'a, Vec<SinkResult>> {
        Box::pin(async move {
            let size: usize = messages.iter().map(|m| m.payload.len() + 64).sum();
            let mut out = Vec::with_capacity(size);
            for message in messages {
                self.render(message, &mut out);
            }
            // One write for the batch: all committed together or none.
            let result = match self.print(out).await {
                Ok(()) => SinkResult::committed(),
                Err(e) => SinkResult::failed(e),
            };
            vec![result; messages.len()]
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
