//! Whole runs of lines at once, where reading them one by one could only append them to the
//! message: each ends in a lone CR and holds no LF, VT or FS, none is blank or a batch segment,
//! and the message stays within the maximum. A line that starts a message ends the run; any
//! other line is left to the line-by-line path, which gives its outcome and its errors.
//!
//! A message found whole in the reader's buffer (see [`Splitter::next_record`]) is not copied
//! at all; otherwise a run is appended to the open message in one copy.

use super::line::{classify, LineKind};
use super::{Layout, Splitter, BLOCK};
use crate::framing::CR;
use crate::hl7::mask;
use crate::input::error::InputError;
use std::io::BufRead;

/// Lines at the start of a buffer the line-by-line path would only append.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Lines {
    /// Bytes of the lines, their CRs included.
    pub(super) len: usize,
    pub(super) lines: u64,
    /// The line after them starts a message.
    pub(super) at_msh: bool,
    /// Bytes of the first line, its CR not included.
    pub(super) first: usize,
    /// A line after the first begins `MSH` (whether or not it starts a message): the first
    /// line is then not the only header to look at.
    pub(super) more_headers: bool,
}

/// The run at the start of `head`, whose first `plain` bytes hold no LF, VT or FS; at most
/// `room` bytes. With `opens`, the first line must start a message and belongs to the run.
pub(super) fn scan(head: &[u8], plain: usize, room: usize, opens: bool) -> Lines {
    let clean = &head[..plain];
    let mut run = Lines {
        len: 0,
        lines: 0,
        at_msh: false,
        first: 0,
        more_headers: false,
    };
    // The line from `run.len` on is known to be an ordinary segment (told by its first byte
    // when the line before it was taken): it is taken at its CR without a look at it.
    let mut ordinary = false;
    let mut base = 0;
    // A line is taken only when the byte after its CR is seen (and clean: not the LF of a
    // CRLF), so the line-by-line path would have read it without waiting either.
    // Each CR is the end of the line from `run.len` on: they are taken in order.
    while let Some(block) = clean.get(base..).filter(|b| !b.is_empty()) {
        let mut crs = mask::one64(block, CR);
        while crs != 0 {
            let cr = base + crs.trailing_zeros() as usize;
            crs &= crs - 1;
            let Some(&next) = clean.get(cr + 1) else {
                return run;
            };
            let line = &clean[run.len..cr];
            if opens && run.lines == 0 && starts_message(line) {
                // The header that opens the message, as `look` would take it.
                run.first = cr;
            } else if !ordinary && !look(&mut run, line, cr, opens) {
                return run;
            }
            if cr + 1 > room {
                return run;
            }
            run.len = cr + 1;
            run.lines += 1;
            // The next line by its first bytes: most are told by the first alone (no blank,
            // MSH or batch line starts so), and one that starts a message ends the run here.
            ordinary = !matches!(next, b' ' | b'\t' | b'M' | b'F' | b'B' | CR);
            if next == b'M' && starts_message(&clean[cr + 1..]) {
                run.at_msh = true;
                return run;
            }
        }
        base += mask::BLOCK;
    }
    run
}

/// Whether `rest` (clean bytes, or a line) begins with a line that starts a message, told by
/// its first four bytes as [`classify`] would tell the whole line: `MSH` and a separator.
fn starts_message(rest: &[u8]) -> bool {
    matches!(rest, [b'M', b'S', b'H', sep, ..] if *sep != CR && !sep.is_ascii_alphanumeric())
}

/// The line `line` ending at `cr`, by its kind: whether it joins the run.
#[inline(never)]
fn look(run: &mut Lines, line: &[u8], cr: usize, opens: bool) -> bool {
    match classify(line) {
        LineKind::Msh if opens && run.lines == 0 => {}
        LineKind::Msh => {
            run.at_msh = true;
            return false;
        }
        LineKind::Other if !opens || run.lines > 0 => {}
        _ => return false,
    }
    if run.lines == 0 {
        run.first = cr;
    } else {
        run.more_headers |= line.starts_with(b"MSH");
    }
    true
}

/// A message found whole in the reader's buffer, not yet consumed.
#[derive(Debug, Clone, Copy)]
pub(super) struct Whole {
    pub(super) len: usize,
    pub(super) lines: u64,
    /// The payload's only segment that begins `MSH` is its first line, this long.
    pub(super) header: Option<usize>,
}

impl<R: BufRead> Splitter<R> {
    /// Whether the next message can be looked for whole in the reader's buffer: plain input,
    /// between messages, nothing held.
    pub(super) fn at_boundary(&self) -> bool {
        self.fast
            && self.layout == Layout::Plain
            && self.open.is_none()
            && self.buf.is_empty()
            && self.ready.is_empty()
            && self.failed.is_none()
    }

    /// The message at the start of the reader's buffer, when it is there whole and the line
    /// after it starts the next one.
    pub(super) fn whole_message(&mut self) -> Result<Option<Whole>, InputError> {
        let name = &self.name;
        let Some((head, plain)) = self
            .reader
            .plain_head()
            .map_err(|error| read_error(name, error))?
        else {
            return Ok(None);
        };
        let run = scan(head, plain, self.options.max_message, true);
        Ok((run.at_msh && run.lines > 0).then_some(Whole {
            len: run.len,
            lines: run.lines,
            header: (!run.more_headers).then_some(run.first),
        }))
    }

    /// Append the run at the start of the reader's buffer to the open message, and close it
    /// when the next line starts another. Whether anything was done.
    pub(super) fn extend(&mut self) -> Result<bool, InputError> {
        let Some(open) = self.open else {
            return Ok(false);
        };
        // A batch kept whole takes the line-by-line path: its segments do not end it.
        if !self.fast || open.closes_at.is_some() {
            return Ok(false);
        }
        let room = self.options.max_message.saturating_sub(self.buf.len());
        let name = &self.name;
        let Some((head, plain)) = self
            .reader
            .plain_head()
            .map_err(|error| read_error(name, error))?
        else {
            return Ok(false);
        };
        let run = scan(head, plain, room, false);
        if run.len > 0 {
            // As the line-by-line path reserves: room for several messages at once.
            let block = BLOCK.min(self.options.max_message + 1);
            if self.buf.capacity() - self.buf.len() < run.len.max(block / 8) {
                self.buf.reserve(run.len.max(block));
            }
            self.buf.extend_from_slice(&head[..run.len]);
            self.peak_capacity = self.peak_capacity.max(self.buf.capacity());
            self.reader.skip(run.len, run.lines);
            if let Some(open) = self.open.as_mut() {
                open.verbatim &= !open.skipped;
                open.skipped = false;
                open.content_end = self.buf.len();
            }
        }
        if run.at_msh {
            let len = self.buf.len();
            self.close(len);
            return Ok(true);
        }
        Ok(run.len > 0)
    }
}

pub(super) fn read_error(name: &str, error: std::io::Error) -> InputError {
    InputError::Read {
        name: name.to_string(),
        error,
    }
}
