//! The decoder's state machine: where in the `VT payload FS CR` grammar the stream stands, and
//! the one function that advances it over newly arrived bytes.
//!
//! Transitions (each consumes the bytes named, offsets count every consumed byte):
//!
//! | state    | input                                   | next     | yields                          |
//! |----------|-----------------------------------------|----------|---------------------------------|
//! | Idle     | VT                                      | Payload  |                                 |
//! | Idle     | SP HT CR LF (tolerated)                 | Idle     | (warning kept for next frame)   |
//! | Idle     | other byte (tolerated, not consumed)    | Payload  | (warning kept for next frame)   |
//! | Payload  | VT                                      | Payload  | (partial dropped, warning kept) |
//! | Payload  | FS, with FS-only tolerance              | AfterFs  | Frame                           |
//! | Payload  | FS CR, or FS LF (tolerated)             | Idle     | Frame                           |
//! | Payload  | more than `max_frame` payload bytes     | Failed   | Err                             |
//! | Payload  | the same, when discarding oversize      | Oversize | (head kept, the rest dropped)   |
//! | Oversize | bytes other than VT or FS               | Oversize | (dropped as they arrive)        |
//! | Oversize | VT, or FS and its terminator            | as above | Frame: head, `MLLP_FRAME_TOO_LARGE` |
//! | AfterFs  | CR                                      | Idle     |                                 |
//! | AfterFs  | LF (tolerated)                          | Idle     | LateWarning `MLLP_LF_AFTER_FS`  |
//! | AfterFs  | other byte (not consumed)               | Idle     | LateWarning `MLLP_FS_WITHOUT_CR`|
//! | any      | an untolerated deviation                | Failed   | Err                             |
//! | Failed   | anything                                | Failed   | the same Err again              |
//!
//! At end of stream (`finish`): Idle with a pending whitespace warning yields it late, naming
//! the last frame; AfterFs yields a late `MLLP_FS_WITHOUT_CR`; Payload is `Truncated` (or, at an
//! unterminated FS without FS-only tolerance, fatal `MLLP_FS_WITHOUT_CR`); then Ended.

use super::{Decoded, Frame, FramingError, MllpCodec, CR, FS, LF, VT};
use crate::warning::{Warning, WarningCode};
use bytes::{Buf, BytesMut};

const SP: u8 = b' ';
const HT: u8 = b'\t';

/// What follows a frame's FS, as far as the buffer shows.
enum Terminator {
    /// The byte after it has not arrived.
    Incomplete,
    /// The FS alone ends it (tolerated).
    BareFs,
    /// FS CR: the canonical end.
    FsCr,
    /// FS LF (tolerated), with its warning.
    FsLf(Warning),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum State {
    /// Between frames, expecting a VT.
    Idle,
    /// Inside a payload that starts at `buf[0]`; `scanned` bytes are known to hold no VT or FS.
    Payload { scanned: usize },
    /// FS-only tolerance: the frame was delivered at its FS; the next byte says how it ended.
    AfterFs { fs_offset: u64, frame_index: u64 },
    /// A fatal error was returned; it is returned again on every later call.
    Failed {
        code: WarningCode,
        byte_offset: u64,
        byte: Option<u8>,
    },
    /// Past `max_frame` with oversize discarding on: the head is kept aside, everything else
    /// is dropped up to the frame's end.
    Oversize,
    /// End of stream was handled.
    Ended,
}

/// Of an oversize frame, at most this much of its start is kept: enough for its header, so
/// that its answer can name it.
pub(super) const OVERSIZE_HEAD: usize = 64 * 1024;

impl MllpCodec {
    /// Advance over `buf` until one item is ready, more bytes are needed, or a fatal error.
    /// One function for every state: with a function a state, 500-byte frames decoded about a
    /// fifth slower (`cargo bench --bench codec`, small_frames_500B/decode, 208-218 against
    /// 253-270 µs, interleaved).
    pub(super) fn step(&mut self, buf: &mut BytesMut) -> Result<Option<Decoded>, FramingError> {
        loop {
            match self.state {
                State::Failed {
                    code,
                    byte_offset,
                    byte,
                } => {
                    // Final: drop whatever else arrives so memory stays bounded.
                    buf.clear();
                    return Err(FramingError::Fatal {
                        code,
                        byte_offset,
                        byte,
                    });
                }
                State::Ended => {
                    buf.clear();
                    return Ok(None);
                }
                State::Idle => {
                    let Some(&byte) = buf.first() else {
                        return Ok(None);
                    };
                    match byte {
                        VT => {
                            self.consume(buf, 1);
                            self.payload_offset = self.offset;
                            self.state = State::Payload { scanned: 0 };
                        }
                        SP | HT | CR | LF => {
                            if !self.tolerance.leading_whitespace {
                                return self.fail(
                                    WarningCode::LeadingWhitespace,
                                    self.offset,
                                    byte,
                                );
                            }
                            // One warning per run: its first byte.
                            if !self.has_pending(WarningCode::LeadingWhitespace) {
                                let at = self.offset;
                                self.warn(WarningCode::LeadingWhitespace, at);
                            }
                            self.consume(buf, 1);
                        }
                        _ => {
                            if !self.tolerance.missing_leading_vt {
                                return self.fail(WarningCode::MissingLeadingVt, self.offset, byte);
                            }
                            let at = self.offset;
                            self.warn(WarningCode::MissingLeadingVt, at);
                            self.payload_offset = at;
                            self.state = State::Payload { scanned: 0 };
                        }
                    }
                }
                State::Payload { scanned } => {
                    // Never look past the cap: the byte after it is fatal whatever it is.
                    let limit = buf.len().min(self.max_frame.saturating_add(1));
                    let from = scanned.min(limit);
                    let Some(found) = memchr::memchr2(VT, FS, &buf[from..limit]) else {
                        if limit > self.max_frame {
                            let at = self.offset + self.max_frame as u64;
                            if self.discard_oversize {
                                // A copy: the head must not keep the buffer the rest of
                                // the frame is dropped from alive.
                                let take = self.max_frame.min(OVERSIZE_HEAD);
                                let mut head = BytesMut::from(&buf[..take]);
                                buf.advance(take);
                                self.offset += head.len() as u64;
                                // Whole segments only: a control ID cut short must not be
                                // echoed as if it were the message's.
                                head.truncate(memchr::memrchr(CR, &head).map_or(0, |i| i + 1));
                                self.oversize = Some(head);
                                self.warn(WarningCode::FrameTooLarge, at);
                                self.state = State::Oversize;
                                continue;
                            }
                            return self.fail(WarningCode::FrameTooLarge, at, buf[self.max_frame]);
                        }
                        self.state = State::Payload { scanned: limit };
                        return Ok(None);
                    };
                    let at = from + found;
                    if buf[at] == VT {
                        // A new frame began inside this one: keep only the remnant after the VT.
                        let vt_offset = self.offset + at as u64;
                        self.warn(WarningCode::TrailingBytes, vt_offset);
                        self.consume(buf, at + 1);
                        self.payload_offset = self.offset;
                        self.state = State::Payload { scanned: 0 };
                        continue;
                    }
                    return self.at_fs(buf, at);
                }
                State::Oversize => return self.oversize(buf),
                State::AfterFs {
                    fs_offset,
                    frame_index,
                } => {
                    let Some(&byte) = buf.first() else {
                        return Ok(None);
                    };
                    self.state = State::Idle;
                    let warning = match byte {
                        CR => {
                            self.consume(buf, 1);
                            continue;
                        }
                        LF if self.tolerance.lf_after_fs => {
                            let at = self.offset;
                            self.consume(buf, 1);
                            Warning::at(WarningCode::LfAfterFs, at)
                        }
                        // Left for Idle: the next VT, whitespace or a missing VT.
                        _ => Warning::at(WarningCode::FsWithoutCr, fs_offset),
                    };
                    return Ok(Some(Decoded::LateWarning {
                        frame_index,
                        warning,
                    }));
                }
            }
        }
    }

    /// Inside an oversize frame: drop what arrives up to its end, then deliver its head.
    fn oversize(&mut self, buf: &mut BytesMut) -> Result<Option<Decoded>, FramingError> {
        let Some(found) = memchr::memchr2(VT, FS, buf) else {
            let all = buf.len();
            self.consume(buf, all);
            return Ok(None);
        };
        self.consume(buf, found);
        if buf[0] == VT {
            // The next frame began without this one's end: this one ends here, the VT opens it.
            self.state = State::Idle;
            return Ok(Some(Decoded::Frame(self.deliver_oversize(None))));
        }
        let fs_offset = self.offset;
        let (end, warning) = match self.terminator(buf, 0, fs_offset)? {
            Terminator::Incomplete => return Ok(None),
            Terminator::BareFs => {
                self.consume(buf, 1);
                let frame = self.deliver_oversize(None);
                self.after_bare_fs(buf, fs_offset, frame.index);
                return Ok(Some(Decoded::Frame(frame)));
            }
            Terminator::FsCr => (2, None),
            Terminator::FsLf(lf) => (2, Some(lf)),
        };
        self.consume(buf, end);
        self.state = State::Idle;
        Ok(Some(Decoded::Frame(self.deliver_oversize(warning))))
    }

    /// The oversize frame's head as a frame of its own, carrying `MLLP_FRAME_TOO_LARGE`.
    fn deliver_oversize(&mut self, terminator_warning: Option<Warning>) -> Frame {
        self.pending.extend(terminator_warning);
        let index = self.next_index;
        self.next_index += 1;
        Frame {
            index,
            offset: self.payload_offset,
            payload: self.oversize.take().unwrap_or_default().freeze(),
            warnings: std::mem::take(&mut self.pending),
        }
    }

    /// The payload ends at `buf[at]`, an FS.
    fn at_fs(&mut self, buf: &mut BytesMut, at: usize) -> Result<Option<Decoded>, FramingError> {
        let fs_offset = self.offset + at as u64;
        let warning = match self.terminator(buf, at, fs_offset)? {
            Terminator::Incomplete => {
                // Wait for the terminator; the next scan starts at this FS.
                self.state = State::Payload { scanned: at };
                return Ok(None);
            }
            Terminator::BareFs => {
                let frame = self.deliver(buf, at, 1, None);
                self.after_bare_fs(buf, fs_offset, frame.index);
                return Ok(Some(Decoded::Frame(frame)));
            }
            Terminator::FsCr => None,
            Terminator::FsLf(lf) => Some(lf),
        };
        let frame = self.deliver(buf, at, 2, warning);
        self.state = State::Idle;
        Ok(Some(Decoded::Frame(frame)))
    }

    /// How the FS at `buf[at]` ends its frame, by the byte after it and the tolerance: one rule
    /// for every frame, kept or discarded for its size.
    fn terminator(
        &mut self,
        buf: &[u8],
        at: usize,
        fs_offset: u64,
    ) -> Result<Terminator, FramingError> {
        if self.tolerance.fs_without_cr {
            return Ok(Terminator::BareFs);
        }
        match buf.get(at + 1) {
            None => Ok(Terminator::Incomplete),
            Some(&CR) => Ok(Terminator::FsCr),
            Some(&LF) if self.tolerance.lf_after_fs => Ok(Terminator::FsLf(Warning::at(
                WarningCode::LfAfterFs,
                fs_offset + 1,
            ))),
            Some(&LF) => Err(self.fatal(WarningCode::LfAfterFs, fs_offset + 1, LF)),
            Some(_) => Err(self.fatal(WarningCode::FsWithoutCr, fs_offset, FS)),
        }
    }

    /// After a frame ended by a bare FS (tolerated): its usual CR is swallowed now rather than
    /// on the next call; without one, a late terminator warning may still name the frame.
    fn after_bare_fs(&mut self, buf: &mut BytesMut, fs_offset: u64, frame_index: u64) {
        if buf.first() == Some(&CR) {
            self.consume(buf, 1);
            self.state = State::Idle;
        } else {
            self.state = State::AfterFs {
                fs_offset,
                frame_index,
            };
        }
    }

    /// Split off the payload (`len` bytes) and its terminator (`terminator` bytes).
    fn deliver(
        &mut self,
        buf: &mut BytesMut,
        len: usize,
        terminator: usize,
        terminator_warning: Option<Warning>,
    ) -> Frame {
        if len == 0 {
            let at = self.offset;
            self.warn(WarningCode::EmptyPayload, at);
        }
        self.pending.extend(terminator_warning);
        let payload = buf.split_to(len).freeze();
        self.offset += len as u64;
        self.consume(buf, terminator);
        let index = self.next_index;
        self.next_index += 1;
        Frame {
            index,
            offset: self.payload_offset,
            payload,
            warnings: std::mem::take(&mut self.pending),
        }
    }

    /// End of stream, once `step` has nothing more to yield.
    pub(super) fn finish(&mut self, buf: &mut BytesMut) -> Result<Option<Decoded>, FramingError> {
        match self.state {
            State::Failed { .. } | State::Ended => self.step(buf),
            State::Idle => {
                self.state = State::Ended;
                // Whitespace after the last frame: no frame follows to carry it.
                Ok(self.pending.pop().map(|warning| Decoded::LateWarning {
                    frame_index: self.next_index.saturating_sub(1),
                    warning,
                }))
            }
            State::AfterFs {
                fs_offset,
                frame_index,
            } => {
                self.state = State::Ended;
                Ok(Some(Decoded::LateWarning {
                    frame_index,
                    warning: Warning::at(WarningCode::FsWithoutCr, fs_offset),
                }))
            }
            State::Oversize => {
                self.state = State::Ended;
                let payload_bytes = self.oversize.take().map_or(0, |h| h.len()) + buf.len();
                buf.clear();
                Err(FramingError::Truncated {
                    frame_offset: self.payload_offset,
                    payload_bytes,
                })
            }
            State::Payload { scanned } => {
                if buf.get(scanned) == Some(&FS) {
                    let at = self.offset + scanned as u64;
                    return self.fail(WarningCode::FsWithoutCr, at, FS);
                }
                self.state = State::Ended;
                let payload_bytes = buf.len();
                buf.clear();
                Err(FramingError::Truncated {
                    frame_offset: self.payload_offset,
                    payload_bytes,
                })
            }
        }
    }

    fn consume(&mut self, buf: &mut BytesMut, n: usize) {
        buf.advance(n);
        self.offset += n as u64;
    }

    fn warn(&mut self, code: WarningCode, byte_offset: u64) {
        self.pending.push(Warning::at(code, byte_offset));
    }

    fn has_pending(&self, code: WarningCode) -> bool {
        self.pending.iter().any(|w| w.code == code)
    }

    fn fail(
        &mut self,
        code: WarningCode,
        byte_offset: u64,
        byte: u8,
    ) -> Result<Option<Decoded>, FramingError> {
        Err(self.fatal(code, byte_offset, byte))
    }

    /// The stream is over: the error, with the decoder left failed.
    fn fatal(&mut self, code: WarningCode, byte_offset: u64, byte: u8) -> FramingError {
        self.state = State::Failed {
            code,
            byte_offset,
            byte: Some(byte),
        };
        self.pending.clear();
        FramingError::Fatal {
            code,
            byte_offset,
            byte: Some(byte),
        }
    }
}
