//! Byte-level reading for the splitter: a `BufRead` that tracks stream offset and line number and
//! hands out one line at a time into a bounded buffer.

use super::idle::is_idle;
use crate::framing::{CR, FS, LF, VT};
use bytes::BytesMut;
use std::io::{self, BufRead};

/// How a line ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Terminator {
    Cr,
    Lf,
    CrLf,
}

impl Terminator {
    pub(crate) fn bytes(self) -> &'static [u8] {
        match self {
            Terminator::Cr => b"\r",
            Terminator::Lf => b"\n",
            Terminator::CrLf => b"\r\n",
        }
    }
}

/// Why [`Tracked::read_line`] stopped. VT and FS are consumed; what they mean is the caller's.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Found {
    LineEnd(Terminator),
    Vt,
    Fs,
    Eof,
    /// The line is longer than the limit: its first `limit` bytes are in the buffer, and the
    /// reader is left mid-line.
    Limit,
    /// A streamed input paused at the start of a line: nothing was read.
    Idle,
}

pub(crate) struct Tracked<R> {
    inner: R,
    offset: u64,
    line: u64,
    /// How many bytes from the next one on are known to hold no VT or FS: the stream is
    /// searched for them once per buffer, not once per line.
    clean: usize,
    /// How many bytes from the next one on are known to hold no LF, VT or FS: whole lines the
    /// splitter takes at once (see [`Tracked::plain_head`]).
    plain: usize,
    /// A streamed input paused right after a CR: the next line start reports it.
    paused: bool,
}

impl<R: BufRead> Tracked<R> {
    pub(crate) fn new(inner: R) -> Self {
        Tracked {
            inner,
            offset: 0,
            line: 1,
            clean: 0,
            plain: 0,
            paused: false,
        }
    }

    /// 0-based offset of the next byte.
    pub(crate) fn offset(&self) -> u64 {
        self.offset
    }

    /// 1-based line of the next byte.
    pub(crate) fn line(&self) -> u64 {
        self.line
    }

    fn fill(&mut self) -> io::Result<&[u8]> {
        loop {
            match self.fill_or_idle()? {
                Some(_) => break,
                // Nothing held depends on the pause here: wait on.
                None => continue,
            }
        }
        self.inner.fill_buf()
    }

    /// The buffered bytes, or `None` when a streamed input paused (see [`super::idle`]).
    fn fill_or_idle(&mut self) -> io::Result<Option<&[u8]>> {
        loop {
            match self.inner.fill_buf() {
                Ok(_) => break,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) if is_idle(&e) => return Ok(None),
                Err(e) => return Err(e),
            }
        }
        self.inner.fill_buf().map(Some)
    }

    fn consume(&mut self, n: usize) {
        self.inner.consume(n);
        self.offset += n as u64;
        self.clean = self.clean.saturating_sub(n);
        self.plain = self.plain.saturating_sub(n);
    }

    /// The buffered bytes from the next one on, without waiting for more, and how many of them
    /// from the start hold no LF, VT or FS (searched once per buffer, not once per call).
    /// `None` when a streamed input paused, or a pause is still to be reported.
    pub(crate) fn plain_head(&mut self) -> io::Result<Option<(&[u8], usize)>> {
        if self.paused {
            return Ok(None);
        }
        // The pause is said once: kept for the next line read, which ends the message held.
        if self.fill_or_idle()?.is_none() {
            self.paused = true;
            return Ok(None);
        }
        let avail = self.inner.fill_buf()?;
        let mut known = self.plain.min(avail.len());
        if known < avail.len() {
            known += memchr::memchr3(LF, VT, FS, &avail[known..]).unwrap_or(avail.len() - known);
            self.plain = known;
        }
        Ok(Some((avail, known)))
    }

    /// Consume `n` bytes seen with [`Tracked::plain_head`], holding `lines` whole lines.
    pub(crate) fn skip(&mut self, n: usize, lines: u64) {
        self.consume(n);
        self.line += lines;
    }

    /// The bytes [`Tracked::plain_head`] just gave, again, without the checks for a pause.
    pub(crate) fn buffered(&mut self) -> io::Result<&[u8]> {
        self.inner.fill_buf()
    }

    /// The buffered bytes from the next one on (at least one unless at the end).
    pub(crate) fn head(&mut self) -> io::Result<&[u8]> {
        self.fill()
    }

    pub(crate) fn peek(&mut self) -> io::Result<Option<u8>> {
        Ok(self.fill()?.first().copied())
    }

    /// Consume one byte already seen with [`Tracked::peek`].
    pub(crate) fn bump(&mut self) {
        self.consume(1);
    }

    /// Consume SP, HT, CR and LF; stop at the first other byte or the end.
    pub(crate) fn skip_whitespace(&mut self) -> io::Result<()> {
        while let Some(b) = self.peek()? {
            match b {
                b' ' | b'\t' => self.consume(1),
                CR | LF => {
                    self.consume(1);
                    self.end_line(b)?;
                }
                _ => break,
            }
        }
        Ok(())
    }

    /// After a consumed CR or LF: take the LF of a CRLF and count one line.
    fn end_line(&mut self, first: u8) -> io::Result<Terminator> {
        self.line += 1;
        if first == LF {
            return Ok(Terminator::Lf);
        }
        // A pause right after a CR ends the line there: waiting for a possible LF would hold
        // the message the CR ends.
        let Some(next) = self.fill_or_idle()?.map(|b| b.first().copied()) else {
            self.paused = true;
            return Ok(Terminator::Cr);
        };
        if next == Some(LF) {
            self.consume(1);
            return Ok(Terminator::CrLf);
        }
        Ok(Terminator::Cr)
    }

    /// Append the bytes before the next CR, LF, VT or FS to `buf` (at most `limit` of them) and
    /// consume the stop byte, the whole CRLF for a CRLF.
    pub(crate) fn read_line(&mut self, buf: &mut BytesMut, limit: usize) -> io::Result<Found> {
        let mut taken = 0usize;
        if std::mem::take(&mut self.paused) {
            return Ok(Found::Idle);
        }
        loop {
            let (mut clean, mut plain) = (self.clean, self.plain);
            let avail = if taken == 0 {
                match self.fill_or_idle()? {
                    Some(avail) => avail,
                    None => return Ok(Found::Idle),
                }
            } else {
                // Mid-line a pause proves nothing: the rest of the line is still to come.
                self.fill()?
            };
            if avail.is_empty() {
                return Ok(Found::Eof);
            }
            let found = find_stop(avail, &mut clean, &mut plain);
            // The byte after the stop, when the buffer holds it: a line end is then told CR, LF
            // or CRLF at once, without a peek.
            let after = found.and_then(|at| avail.get(at + 1).copied());
            let n = avail.len();
            match found {
                Some(at) => {
                    if taken + at > limit {
                        buf.extend_from_slice(&avail[..limit - taken]);
                        self.clean = clean;
                        self.plain = plain;
                        return Ok(Found::Limit);
                    }
                    let stop = avail[at];
                    buf.extend_from_slice(&avail[..at]);
                    self.clean = clean;
                    self.plain = plain;
                    let known_end = match (stop, after) {
                        (LF, _) => Some(Terminator::Lf),
                        (CR, Some(LF)) => Some(Terminator::CrLf),
                        (CR, Some(_)) => Some(Terminator::Cr),
                        _ => None,
                    };
                    if let Some(end) = known_end {
                        self.consume(at + end.bytes().len());
                        self.line += 1;
                        return Ok(Found::LineEnd(end));
                    }
                    self.consume(at + 1);
                    return Ok(match stop {
                        VT => Found::Vt,
                        FS => Found::Fs,
                        _ => Found::LineEnd(self.end_line(stop)?),
                    });
                }
                None => {
                    if taken + n > limit {
                        buf.extend_from_slice(&avail[..limit - taken]);
                        self.clean = clean;
                        self.plain = plain;
                        return Ok(Found::Limit);
                    }
                    buf.extend_from_slice(avail);
                    self.clean = clean;
                    self.plain = plain;
                    self.consume(n);
                    taken += n;
                }
            }
        }
    }
}

/// Position of the first CR, LF, VT or FS. `clean` says how many leading bytes are known to
/// hold no VT or FS, `plain` how many no LF, VT or FS; when the line reaches past them, the rest
/// of `bytes` is searched at once and both updated, so a buffer of short lines is searched for
/// VT and FS once, and a buffer with no LF once for all three (what [`Tracked::plain_head`] needs
/// too).
fn find_stop(bytes: &[u8], clean: &mut usize, plain: &mut usize) -> Option<usize> {
    let line_end = memchr::memchr2(CR, LF, bytes);
    let scope = line_end.unwrap_or(bytes.len());
    let mut known = (*clean).max(*plain).min(bytes.len());
    if known < scope {
        if *plain == known {
            let stop = memchr::memchr3(LF, VT, FS, &bytes[known..]).map(|at| known + at);
            known = stop.unwrap_or(bytes.len());
            *plain = known;
            if stop.is_some_and(|at| bytes[at] == LF) {
                known += 1;
                known += memchr::memchr2(VT, FS, &bytes[known..]).unwrap_or(bytes.len() - known);
            }
        } else {
            known += memchr::memchr2(VT, FS, &bytes[known..]).unwrap_or(bytes.len() - known);
        }
        *clean = known;
    }
    if known < scope {
        Some(known)
    } else {
        line_end
    }
}
