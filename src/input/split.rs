//! The streaming splitter: one byte stream in, HL7 messages out, in memory bounded by the
//! maximum message size.
//!
//! The layout (plain or framed) is a small state machine in `layout`; turning lines into
//! messages is `assemble`; what a line is, `line`.

mod assemble;
mod fast;
mod layout;
mod line;

use super::control_id::lacks_control_id;
use super::error::InputError;
use super::header;
use super::message::{Message, SplitOptions};
use super::reader::{Found, Terminator, Tracked};
use crate::framing::VT;
use bytes::BytesMut;
use layout::{next_layout, Layout, LayoutEvent};
use line::Trailer;
use std::collections::VecDeque;
use std::io::{BufRead, BufReader, Read};
use std::sync::Arc;

/// Bytes `buf` is given at a time, as messages use it up.
const BLOCK: usize = 8 * 1024;

/// The message being assembled at the start of `buf`.
#[derive(Debug, Clone, Copy)]
struct Open {
    line: u64,
    offset: u64,
    /// End of the last segment that is not blank.
    content_end: usize,
    /// A kept batch ends at this trailer.
    closes_at: Option<Trailer>,
    /// The payload so far is the source's bytes from `offset` on, untouched: no terminator
    /// rewritten or added, no blank line left out between its segments.
    verbatim: bool,
    /// A blank line was left out since the last segment kept.
    skipped: bool,
}

/// How the line just read ended.
#[derive(Debug, Clone, Copy)]
enum LineEnd {
    Terminator(Terminator),
    FrameEnd,
    Eof,
}

/// Splits one byte stream into [`Message`]s. An iterator; after the first error it ends, and
/// every message completed before the error comes out before it.
///
/// Rules, in order of precedence:
/// - Layout is decided by the first byte that is not whitespace (SP, HT, CR, LF; a UTF-8 byte
///   order mark at the very start is skipped): VT means framed MLLP input, anything else plain.
///   Framed input is de-framed (VT ... FS, any whitespace between frames); each frame's payload
///   is then split by the rules below, so a frame holding one message gives one message.
/// - Lines end at CR, LF or CRLF. A message starts at a line beginning `MSH` plus a field
///   separator. Lines that are empty or hold only SP/HT are dropped. Any other line before the
///   first MSH (of the input, of a frame, or after a batch trailer) is an error.
/// - Batch envelope segments (FHS, BHS, BTS, FTS) end the message before them and are dropped;
///   with `batch` a batch (from FHS or BHS to its FTS or BTS, or to the end of the input or
///   frame) is kept whole as one message.
/// - Each segment of a message ends with exactly one CR, the last one included, unless `raw`:
///   then every byte of the message's lines passes untouched (blank lines inside a message
///   included), and only blank lines after its last segment are left out.
/// - VT or FS inside a message is an error, as is a message over `max_message` bytes.
pub struct Splitter<R> {
    reader: Tracked<R>,
    name: Arc<str>,
    options: SplitOptions,
    layout: Layout,
    buf: BytesMut,
    open: Option<Open>,
    /// Completed messages, each with whether its payload is verbatim (see [`Open::verbatim`]).
    ready: VecDeque<(Message, bool)>,
    /// The error that ended the input, given out after the messages completed before it.
    failed: Option<InputError>,
    index: u64,
    peak_capacity: usize,
    /// Whole lines and messages are taken from the reader's buffer at once where that gives
    /// what reading line by line would (see `fast`); off only to test the two against each other.
    fast: bool,
    /// Batch envelope segments (FHS, BHS, BTS, FTS) come out too, each on its own (see
    /// [`Splitter::keeping_envelope`]).
    envelope: bool,
    /// The message last given out by [`Splitter::next_record`] whole from the reader's buffer:
    /// its bytes and lines, consumed on the next call.
    pending: fast::Whole,
    /// The message last given out by [`Splitter::next_record`] from the line-by-line path.
    held: Option<Message>,
}

/// One message as the check records it, borrowed from the splitter until the next one.
#[derive(Debug)]
pub(crate) struct Record<'a> {
    pub(crate) index: u64,
    pub(crate) line: u64,
    pub(crate) offset: u64,
    pub(crate) payload: &'a [u8],
    /// The payload is the source's bytes at `offset..offset + payload.len()`, untouched.
    pub(crate) verbatim: bool,
    /// Known when the message was taken whole: the payload's only segment that begins `MSH`
    /// is its first line, this long (each line ends in a lone CR, none is empty).
    pub(crate) header: Option<usize>,
}

impl Record<'_> {
    /// As [`lacks_control_id`] of the payload, reading only the header when that is the only one.
    pub(crate) fn lacks_control_id(&self) -> bool {
        match self.header {
            Some(len) => header::control_id_within(self.payload, len).is_none_or(<[u8]>::is_empty),
            None => lacks_control_id(self.payload),
        }
    }
}

impl<R: Read> Splitter<BufReader<R>> {
    /// Split any reader, buffered with 64 KiB.
    pub fn from_read(name: &str, reader: R, options: SplitOptions) -> Self {
        Splitter::new(name, BufReader::with_capacity(64 * 1024, reader), options)
    }
}

impl<R: BufRead> Splitter<R> {
    /// `name` is how errors and labels call the source (`-` for stdin).
    pub fn new(name: &str, reader: R, options: SplitOptions) -> Self {
        Splitter {
            reader: Tracked::new(reader),
            name: Arc::from(name),
            options,
            layout: Layout::Undecided,
            buf: BytesMut::new(),
            open: None,
            ready: VecDeque::new(),
            failed: None,
            index: 0,
            peak_capacity: 0,
            fast: true,
            envelope: false,
            pending: fast::Whole {
                len: 0,
                lines: 0,
                header: None,
            },
            held: None,
        }
    }

    /// Give out each batch envelope segment (FHS, BHS, BTS, FTS) outside a batch kept whole
    /// as an item of its own, between the messages it stands between, so a batch file can be
    /// written back whole: its payload is the segment and its terminator, its index the
    /// message's before it. Callers tell it by its name ([`crate::hl7::is_envelope_segment`]).
    pub fn keeping_envelope(mut self) -> Self {
        self.envelope = true;
        self
    }

    /// Read line by line only: what the whole-run paths are tested against.
    #[cfg(test)]
    pub(crate) fn line_by_line(mut self) -> Self {
        self.fast = false;
        self
    }

    /// The largest capacity the splitter's own message buffer has reached (the reader's buffer
    /// not included): what bounded memory is measured by.
    pub fn peak_buffer_capacity(&self) -> usize {
        self.peak_capacity
    }

    fn shift(&mut self, event: LayoutEvent) {
        // Every call site is one of the table's transitions; an illegal one ends the stream.
        self.layout = next_layout(self.layout, event).unwrap_or(Layout::Done);
    }

    /// Advance until at least one message is ready or the input ends.
    fn step(&mut self) -> Result<(), InputError> {
        match self.layout {
            Layout::Done => Ok(()),
            Layout::Undecided => self.decide(),
            Layout::BetweenFrames => {
                self.reader
                    .skip_whitespace()
                    .map_err(|e| self.read_error(e))?;
                match self.reader.peek().map_err(|e| self.read_error(e))? {
                    None => self.finish(),
                    // A DOS end-of-file mark (Ctrl-Z) after the last frame.
                    Some(CTRL_Z) if self.at_end_after_ctrl_z()? => self.finish(),
                    Some(VT) => {
                        let line = self.reader.line();
                        self.reader.bump();
                        self.shift(LayoutEvent::Vt { line });
                        Ok(())
                    }
                    Some(_) => Err(InputError::TextBetweenFrames {
                        name: self.name.to_string(),
                        line: self.reader.line(),
                    }),
                }
            }
            Layout::Plain | Layout::InFrame { .. } => {
                if self.extend()? {
                    return Ok(());
                }
                self.read_segment()
            }
        }
    }

    fn decide(&mut self) -> Result<(), InputError> {
        if self.reader.offset() == 0 {
            let utf16 = match self.reader.head() {
                Ok(head) => looks_utf16(head),
                Err(e) => return Err(self.read_error(e)),
            };
            if utf16 {
                return Err(InputError::Utf16 {
                    name: self.name.to_string(),
                });
            }
        }
        if self.reader.offset() == 0
            && self.reader.peek().map_err(|e| self.read_error(e))? == Some(0xEF)
        {
            self.skip_bom()?;
        }
        self.reader
            .skip_whitespace()
            .map_err(|e| self.read_error(e))?;
        match self.reader.peek().map_err(|e| self.read_error(e))? {
            None => self.finish(),
            Some(b) => {
                self.shift(LayoutEvent::FirstByte { vt: b == VT });
                Ok(())
            }
        }
    }

    /// A UTF-8 byte order mark; a lone 0xEF that starts something else is text before MSH.
    fn skip_bom(&mut self) -> Result<(), InputError> {
        for expected in [0xEF, 0xBB, 0xBF] {
            if self.reader.peek().map_err(|e| self.read_error(e))? != Some(expected) {
                return Err(InputError::TextBeforeMsh {
                    name: self.name.to_string(),
                    line: 1,
                });
            }
            self.reader.bump();
        }
        Ok(())
    }

    /// Consume a Ctrl-Z seen with `peek`: whether the input ends right after it.
    fn at_end_after_ctrl_z(&mut self) -> Result<bool, InputError> {
        self.reader.bump();
        Ok(self
            .reader
            .peek()
            .map_err(|e| self.read_error(e))?
            .is_none())
    }

    fn read_error(&self, error: std::io::Error) -> InputError {
        InputError::Read {
            name: self.name.to_string(),
            error,
        }
    }

    fn too_large(&self, line: u64) -> InputError {
        InputError::MessageTooLarge {
            name: self.name.to_string(),
            line: self.open.map_or(line, |o| o.line),
            max: self.options.max_message,
        }
    }

    /// Read one line and act on it.
    fn read_segment(&mut self) -> Result<(), InputError> {
        let start = self.buf.len();
        let line = self.reader.line();
        let offset = self.reader.offset();
        // One line alone may not pass the maximum; the message's total is checked as it grows,
        // so `buf` holds at most a message and the line that starts the next one.
        let limit = self.options.max_message + 1;
        // Room for many messages at once: each payload is split off the front of one block,
        // not grown line by line in an allocation of its own.
        let block = BLOCK.min(limit);
        if self.buf.capacity() - self.buf.len() < block / 8 {
            self.buf.reserve(block);
        }
        let stop = self
            .reader
            .read_line(&mut self.buf, limit)
            .map_err(|e| self.read_error(e))?;
        self.peak_capacity = self.peak_capacity.max(self.buf.capacity());
        if stop == Found::Eof {
            // A DOS end-of-file mark (Ctrl-Z) ends the text; it is no part of a segment.
            while self.buf.len() > start && self.buf.last() == Some(&CTRL_Z) {
                self.buf.truncate(self.buf.len() - 1);
            }
        }
        let framed = matches!(self.layout, Layout::InFrame { .. });
        let end = match stop {
            Found::LineEnd(t) => LineEnd::Terminator(t),
            Found::Eof => LineEnd::Eof,
            Found::Idle => {
                self.on_idle();
                return Ok(());
            }
            Found::Fs if framed => LineEnd::FrameEnd,
            Found::Vt | Found::Fs => {
                // A bad line that starts the next message leaves the one before it whole.
                self.close_before_bad_line(start);
                return Err(InputError::FramingByte {
                    name: self.name.to_string(),
                    line: self.reader.line(),
                    byte: if stop == Found::Vt {
                        VT
                    } else {
                        crate::framing::FS
                    },
                });
            }
            Found::Limit => {
                // A line too long to be part of any message: name the message it would start,
                // and leave the one before it whole.
                if self.close_before_bad_line(start) {
                    self.open = None;
                }
                return Err(self.too_large(line));
            }
        };
        self.on_line(start, line, offset, end)?;
        match end {
            LineEnd::Terminator(_) => Ok(()),
            LineEnd::FrameEnd => self.end_frame(),
            LineEnd::Eof => {
                if let Layout::InFrame { line, .. } = self.layout {
                    return Err(InputError::UnterminatedFrame {
                        name: self.name.to_string(),
                        line,
                    });
                }
                self.finish()
            }
        }
    }

    /// A streamed input paused at a line end: the plain message held is complete as far as
    /// anyone can tell, so it goes now instead of when the next `MSH` comes. A frame or a batch
    /// kept whole waits for its own end.
    fn on_idle(&mut self) {
        let held = self.open.is_some_and(|o| o.closes_at.is_none());
        if self.layout == Layout::Plain && held {
            let len = self.buf.len();
            self.close(len);
        }
    }

    fn end_frame(&mut self) -> Result<(), InputError> {
        let len = self.buf.len();
        self.close(len);
        self.buf.clear();
        if let Layout::InFrame { line, messages: 0 } = self.layout {
            return Err(InputError::EmptyFrame {
                name: self.name.to_string(),
                line,
            });
        }
        self.shift(LayoutEvent::Fs);
        Ok(())
    }

    fn finish(&mut self) -> Result<(), InputError> {
        let len = self.buf.len();
        self.close(len);
        self.buf.clear();
        self.shift(LayoutEvent::Eof);
        if self.index == 0 {
            return Err(InputError::NoMessages {
                name: self.name.to_string(),
            });
        }
        Ok(())
    }
}

/// DOS's end-of-file mark, which old editors and tools leave after the last line.
const CTRL_Z: u8 = 0x1A;

/// A byte order mark of UTF-16, or ASCII text with a zero byte beside every character.
fn looks_utf16(head: &[u8]) -> bool {
    match head {
        [0xFF, 0xFE, ..] | [0xFE, 0xFF, ..] => true,
        [a, 0, b, 0, ..] | [0, a, 0, b, ..] => *a != 0 && *b != 0,
        _ => false,
    }
}

impl<R: BufRead> Splitter<R> {
    /// The next message with whether its payload is the source's bytes at
    /// `offset..offset + len` untouched, so a later pass can take it from there.
    pub(crate) fn next_verbatim(&mut self) -> Option<Result<(Message, bool), InputError>> {
        loop {
            if let Some(ready) = self.ready.pop_front() {
                return Some(Ok(ready));
            }
            if let Some(error) = self.failed.take() {
                return Some(Err(error));
            }
            if self.layout == Layout::Done {
                return None;
            }
            if let Err(e) = self.step() {
                // Messages completed before the problem come out first, then the error.
                self.layout = Layout::Done;
                self.failed = Some(e);
            }
        }
    }
}

impl<R: BufRead> Splitter<R> {
    /// As [`Splitter::next_verbatim`], but a message found whole in the reader's buffer is
    /// given out from there, not copied; it is borrowed until the next call.
    pub(crate) fn next_record(&mut self) -> Option<Result<Record<'_>, InputError>> {
        let done = std::mem::replace(
            &mut self.pending,
            fast::Whole {
                len: 0,
                lines: 0,
                header: None,
            },
        );
        self.reader.skip(done.len, done.lines);
        self.held = None;
        if self.at_boundary() {
            let (line, offset) = (self.reader.line(), self.reader.offset());
            match self.whole_message() {
                Ok(Some(whole)) => {
                    self.pending = whole;
                    self.index += 1;
                    let (index, name) = (self.index, &self.name);
                    let head = self.reader.buffered();
                    return Some(
                        head.map_err(|error| fast::read_error(name, error))
                            .map(|head| Record {
                                index,
                                line,
                                offset,
                                payload: &head[..whole.len],
                                verbatim: true,
                                header: whole.header,
                            }),
                    );
                }
                Ok(None) => {}
                Err(e) => {
                    self.layout = Layout::Done;
                    self.failed = Some(e);
                }
            }
        }
        let (message, verbatim) = match self.next_verbatim()? {
            Ok(next) => next,
            Err(e) => return Some(Err(e)),
        };
        let message = self.held.insert(message);
        Some(Ok(Record {
            index: message.index,
            line: message.line,
            offset: message.offset,
            payload: &message.payload,
            verbatim,
            header: None,
        }))
    }
}

impl<R: BufRead> Iterator for Splitter<R> {
    type Item = Result<Message, InputError>;

    fn next(&mut self) -> Option<Self::Item> {
        self.next_verbatim().map(|r| r.map(|(message, _)| message))
    }
}

#[cfg(test)]
mod tests;
