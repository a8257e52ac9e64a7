//! Assembling messages from lines: each line, by its kind, opens a message, joins the open one,
//! closes it, or is dropped; a completed message goes to the ready queue.

use super::line::{classify, LineKind, Trailer};
use super::{Layout, LineEnd, Open, Splitter, BLOCK};
use crate::framing::CR;
use crate::input::error::InputError;
use crate::input::message::Message;
use crate::input::reader::Terminator;
use bytes::Bytes;
use std::io::BufRead;

/// Messages up to this size share the blocks they were read into, several to a block (a block
/// lives until all of its messages are settled, so this bounds what each one keeps alive);
/// larger ones are copied out at their exact size.
const COPY_OUT: usize = BLOCK / 8;

impl<R: BufRead> Splitter<R> {
    /// A bad line (in `buf[start..]`, whole or cut short) that starts a message or a batch
    /// proves the open message complete: close it, so it comes out before the error. Inside a
    /// batch kept whole it proves nothing. True when the line starts one.
    pub(super) fn close_before_bad_line(&mut self, start: usize) -> bool {
        let kept_batch = self.open.is_some_and(|o| o.closes_at.is_some());
        let starts_one = matches!(
            classify(&self.buf[start..]),
            LineKind::Msh | LineKind::BatchHeader(_)
        );
        if starts_one && !kept_batch {
            self.close(start);
        }
        starts_one
    }

    /// Act on the line in `buf[start..]` by its kind.
    pub(super) fn on_line(
        &mut self,
        start: usize,
        line: u64,
        offset: u64,
        end: LineEnd,
    ) -> Result<(), InputError> {
        let kind = classify(&self.buf[start..]);
        let in_kept_batch = self.open.and_then(|o| o.closes_at);
        match kind {
            LineKind::Blank => {
                if self.options.raw && self.open.is_some() {
                    // Kept in case a segment follows; counts toward the size meanwhile.
                    self.append_end(end);
                    if self.buf.len() > self.options.max_message {
                        return Err(self.too_large(line));
                    }
                } else {
                    self.buf.truncate(start);
                    if let Some(open) = self.open.as_mut() {
                        open.skipped = true;
                    }
                }
            }
            LineKind::Msh | LineKind::BatchHeader(_) | LineKind::BatchTrailer(_)
                if in_kept_batch.is_some() =>
            {
                self.keep_segment(end, line)?;
                if kind == LineKind::BatchTrailer(in_kept_batch.unwrap_or(Trailer::Fts)) {
                    let len = self.buf.len();
                    self.close(len);
                }
            }
            LineKind::Msh => self.open_message(start, line, offset, None, end)?,
            LineKind::BatchHeader(trailer) if self.options.batch => {
                self.open_message(start, line, offset, Some(trailer), end)?
            }
            LineKind::BatchHeader(_) | LineKind::BatchTrailer(_) => {
                self.close(start);
                if self.envelope {
                    self.envelope_segment(line, offset, end);
                }
                self.buf.clear();
            }
            LineKind::Other => {
                if self.open.is_none() {
                    return Err(InputError::TextBeforeMsh {
                        name: self.name.to_string(),
                        line,
                    });
                }
                self.keep_segment(end, line)?;
            }
        }
        Ok(())
    }

    fn open_message(
        &mut self,
        start: usize,
        line: u64,
        offset: u64,
        closes_at: Option<Trailer>,
        end: LineEnd,
    ) -> Result<(), InputError> {
        self.close(start);
        self.open = Some(Open {
            line,
            offset,
            content_end: 0,
            closes_at,
            verbatim: true,
            skipped: false,
        });
        if let Layout::InFrame { line, messages } = self.layout {
            self.layout = Layout::InFrame {
                line,
                messages: messages + 1,
            };
        }
        self.keep_segment(end, line)
    }

    /// The line in `buf` belongs to the open message: terminate it and check the size.
    fn keep_segment(&mut self, end: LineEnd, line: u64) -> Result<(), InputError> {
        // Raw keeps every terminator as it was; otherwise only a CR stays what it was.
        let rewritten = !self.options.raw && !matches!(end, LineEnd::Terminator(Terminator::Cr));
        if let Some(open) = self.open.as_mut() {
            open.verbatim &= !open.skipped && !rewritten;
            open.skipped = false;
        }
        self.append_end(end);
        let len = self.buf.len();
        if len > self.options.max_message {
            return Err(self.too_large(line));
        }
        if let Some(open) = self.open.as_mut() {
            open.content_end = len;
        }
        Ok(())
    }

    fn append_end(&mut self, end: LineEnd) {
        match end {
            LineEnd::Terminator(t) if self.options.raw => self.buf.extend_from_slice(t.bytes()),
            LineEnd::Terminator(_) => self.buf.extend_from_slice(&[CR]),
            // The last segment gets its CR too (raw: left as it is).
            LineEnd::FrameEnd | LineEnd::Eof if self.options.raw => {}
            LineEnd::FrameEnd | LineEnd::Eof => self.buf.extend_from_slice(&[CR]),
        }
        self.peak_capacity = self.peak_capacity.max(self.buf.capacity());
    }

    /// The envelope segment now alone in `buf`, given out on its own with its terminator.
    fn envelope_segment(&mut self, line: u64, offset: u64, end: LineEnd) {
        let rewritten = !self.options.raw && !matches!(end, LineEnd::Terminator(Terminator::Cr));
        self.append_end(end);
        let segment = Message {
            source: self.name.clone(),
            index: self.index,
            line,
            offset,
            payload: Bytes::copy_from_slice(&self.buf),
            original_control_id: None,
        };
        self.ready.push_back((segment, !rewritten));
    }

    /// Complete the open message with `buf[..upto]`; bytes after `upto` stay in `buf`.
    pub(super) fn close(&mut self, upto: usize) {
        let Some(open) = self.open.take() else {
            return;
        };
        let payload = if upto > COPY_OUT {
            // `buf` grew for this message alone, doubling as it went: a payload split off it
            // would keep the whole allocation alive until the message is settled, about twice
            // its size for every message in flight. Copy it out at its exact size instead, and
            // keep `buf`'s room for the next one.
            let payload = Bytes::copy_from_slice(&self.buf[..open.content_end]);
            let len = self.buf.len();
            self.buf.copy_within(upto..len, 0);
            self.buf.truncate(len - upto);
            payload
        } else {
            let mut payload = self.buf.split_to(upto);
            payload.truncate(open.content_end);
            payload.freeze()
        };
        self.index += 1;
        let message = Message {
            source: self.name.clone(),
            index: self.index,
            line: open.line,
            offset: open.offset,
            payload,
            original_control_id: None,
        };
        self.ready.push_back((message, open.verbatim));
    }
}
