//! The MLLP codec: `VT payload FS CR`. A strict writer and an incremental, tolerant reader whose
//! every tolerated deviation is a warning with a stable code and an absolute stream offset.
//!
//! # Example
//!
//! Frame a message, read it back as a receiver does, and see a payload that holds a framing
//! byte refused:
//!
//! ```
//! use bytes::BytesMut;
//! use mllp::framing::{encode_frame, Decoded, MllpCodec, Tolerance, DEFAULT_MAX_FRAME, FS, VT};
//! use tokio_util::codec::Decoder;
//!
//! let message = b"MSH|^~\\&|A|B|C|D|20240101||ADT^A01|1|P|2.5\r";
//! let mut wire = BytesMut::new();
//! encode_frame(message, &mut wire)?;
//! assert_eq!((wire[0], wire[wire.len() - 2]), (VT, FS));
//!
//! let mut reader = MllpCodec::new(Tolerance::RECEIVER, DEFAULT_MAX_FRAME);
//! let Some(Decoded::Frame(frame)) = reader.decode(&mut wire)? else {
//!     panic!("one whole frame was given");
//! };
//! assert_eq!(&frame.payload[..], &message[..]);
//! assert!(frame.warnings.is_empty());
//!
//! // A payload holding a framing byte is refused before anything is written.
//! assert!(encode_frame(b"MSH|\x1c", &mut BytesMut::new()).is_err());
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use crate::warning::{Warning, WarningCode};
use bytes::{BufMut, Bytes, BytesMut};
use std::fmt;
use tokio_util::codec::{Decoder, Encoder};

mod decoder;
mod release2;

pub use release2::{Block, Release};

use decoder::State;

/// Vertical tab, the byte that opens a frame.
pub const VT: u8 = 0x0B;
/// File separator, the byte that ends a frame's payload.
pub const FS: u8 = 0x1C;
/// Carriage return, the byte that must follow FS; also HL7's segment terminator.
pub const CR: u8 = 0x0D;
/// Line feed, tolerated after FS in place of CR (see [`Tolerance::lf_after_fs`]).
pub const LF: u8 = 0x0A;

/// 16 MiB, counted on payload bytes.
pub const DEFAULT_MAX_FRAME: usize = 16 * 1024 * 1024;

/// Which deviations the reader tolerates (with a warning). Each is off in a strict reader.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Tolerance {
    /// FS not followed by CR: the frame is delivered at its FS, and the next byte decides whether a
    /// late [`WarningCode::FsWithoutCr`] follows.
    pub fs_without_cr: bool,
    /// LF in place of the CR after FS ([`WarningCode::LfAfterFs`]).
    pub lf_after_fs: bool,
    /// SP, HT, CR or LF between frames, before a VT ([`WarningCode::LeadingWhitespace`]).
    pub leading_whitespace: bool,
    /// A payload that starts without its VT ([`WarningCode::MissingLeadingVt`]).
    pub missing_leading_vt: bool,
}

impl Tolerance {
    /// Nothing tolerated: every deviation is fatal.
    pub const STRICT: Tolerance = Tolerance {
        fs_without_cr: false,
        lf_after_fs: false,
        leading_whitespace: false,
        missing_leading_vt: false,
    };
    /// What `listen` tolerates by default.
    pub const RECEIVER: Tolerance = Tolerance {
        fs_without_cr: true,
        lf_after_fs: true,
        leading_whitespace: true,
        missing_leading_vt: false,
    };
    /// What the client tolerates when reading ACKs.
    pub const ACK_READER: Tolerance = Tolerance {
        fs_without_cr: true,
        lf_after_fs: true,
        leading_whitespace: false,
        missing_leading_vt: false,
    };
}

/// One de-framed payload and the warnings found in it.
#[derive(Clone, PartialEq, Eq)]
pub struct Frame {
    /// 0-based index of this frame on its stream; late terminator warnings name it.
    pub index: u64,
    /// Stream offset of the first payload byte.
    pub offset: u64,
    /// The payload between VT and FS, framing bytes removed.
    pub payload: Bytes,
    /// Tolerated deviations of this frame, in stream order.
    pub warnings: Vec<Warning>,
}

/// Shows the payload's length, never its bytes.
impl fmt::Debug for Frame {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Frame")
            .field("index", &self.index)
            .field("offset", &self.offset)
            .field("payload_len", &self.payload.len())
            .field("warnings", &self.warnings)
            .finish()
    }
}

impl Frame {
    /// The payload was damaged in transit (a VT mid-payload discarded a partial payload).
    pub fn is_damaged(&self) -> bool {
        self.warnings
            .iter()
            .any(|w| w.code == WarningCode::TrailingBytes)
    }
}

/// What the decoder yields.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Decoded {
    /// A complete frame.
    Frame(Frame),
    /// A terminator warning found after its frame was already delivered (FS-only tolerance).
    LateWarning {
        /// [`Frame::index`] of the frame the warning belongs to.
        frame_index: u64,
        /// The deviation, with its stream offset.
        warning: Warning,
    },
}

/// A fatal framing error: final for the stream, no resynchronisation.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum FramingError {
    /// An untolerated deviation (or a frame over the size limit) at `byte_offset` in the stream.
    #[error("{code} at byte {byte_offset}{}", .byte.map(|b| format!(" (byte 0x{b:02X})")).unwrap_or_default())]
    Fatal {
        /// What was wrong.
        code: WarningCode,
        /// Stream offset of the offending byte.
        byte_offset: u64,
        /// The single offending byte, never a run of payload.
        byte: Option<u8>,
    },
    /// The stream ended inside a frame (after its VT, before its FS).
    #[error("stream ended inside a frame that began at byte {frame_offset} ({payload_bytes} payload bytes received)")]
    Truncated {
        /// Stream offset of the first payload byte of the unfinished frame.
        frame_offset: u64,
        /// Payload bytes received of it before the end.
        payload_bytes: usize,
    },
    /// The stream could not be read.
    #[error("i/o error: {0}")]
    Io(#[from] std::io::Error),
}

impl FramingError {
    /// The stable code of a [`FramingError::Fatal`]; `None` for truncation and I/O errors.
    pub fn code(&self) -> Option<WarningCode> {
        match self {
            FramingError::Fatal { code, .. } => Some(*code),
            FramingError::Truncated { .. } | FramingError::Io(_) => None,
        }
    }
}

/// The encoder refuses a payload that would break framing.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{code}: payload byte {position} is a framing byte")]
pub struct EncodeError {
    /// [`WarningCode::PayloadContainsVt`] or [`WarningCode::PayloadContainsFs`].
    pub code: WarningCode,
    /// Position in the payload of the first offending byte.
    pub position: usize,
}

/// What the [`Encoder`] impls of [`MllpCodec`] fail with: a refused payload, or the sink's I/O
/// error (the `Encoder` trait requires `From<io::Error>`).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum EncoderError {
    /// The payload contains VT or FS.
    #[error(transparent)]
    Refused(#[from] EncodeError),
    /// The sink could not be written.
    #[error("i/o error: {0}")]
    Io(#[from] std::io::Error),
}

/// Append one canonical frame to `dst`, or refuse a payload containing VT or FS.
pub fn encode_frame(payload: &[u8], dst: &mut BytesMut) -> Result<(), EncodeError> {
    if let Some(e) = refusal(payload) {
        return Err(e);
    }
    dst.reserve(payload.len() + 3);
    dst.put_u8(VT);
    dst.put_slice(payload);
    dst.put_slice(&[FS, CR]);
    Ok(())
}

/// Why `payload` cannot be framed, if it cannot: its first VT or FS.
fn refusal(payload: &[u8]) -> Option<EncodeError> {
    let position = memchr::memchr2(VT, FS, payload)?;
    let code = if payload[position] == VT {
        WarningCode::PayloadContainsVt
    } else {
        WarningCode::PayloadContainsFs
    };
    Some(EncodeError { code, position })
}

/// [`encode_frame`] into a `Vec`.
pub(crate) fn encode_frame_vec(payload: &[u8], dst: &mut Vec<u8>) -> Result<(), EncodeError> {
    if let Some(e) = refusal(payload) {
        return Err(e);
    }
    dst.reserve(payload.len() + 3);
    dst.push(VT);
    dst.extend_from_slice(payload);
    dst.extend_from_slice(&[FS, CR]);
    Ok(())
}

/// Close the frame opened at `dst[start]` (its VT, the payload written after it) with FS CR, or
/// take it back out when the payload holds VT or FS, as [`encode_frame`] refuses it. `checked`:
/// the payload is known to hold neither, so there is no search.
pub(crate) fn close_frame(
    dst: &mut Vec<u8>,
    start: usize,
    checked: bool,
) -> Result<(), EncodeError> {
    debug_assert_eq!(dst.get(start), Some(&VT));
    if !checked {
        if let Some(e) = refusal(&dst[start + 1..]) {
            dst.truncate(start);
            return Err(e);
        }
    }
    debug_assert!(refusal(&dst[start + 1..]).is_none());
    dst.extend_from_slice(&[FS, CR]);
    Ok(())
}

/// `bytes` holds VT or FS. One block compare for the short fields an ACK echoes (a search
/// costs more to start than such a field takes to read), [`memchr::memchr2`] past 16 bytes.
pub(crate) fn holds_framing_byte(bytes: &[u8]) -> bool {
    if bytes.len() > 16 {
        return memchr::memchr2(VT, FS, bytes).is_some();
    }
    // Zero bytes pad a short field: zero is neither VT nor FS.
    let mut block = [0u8; 16];
    block[..bytes.len()].copy_from_slice(bytes);
    crate::hl7::mask::either16(&block, VT, FS) != 0
}

/// The codec. Decoder items are [`Decoded`]; the encoder takes payload bytes.
///
/// One codec per connection direction: the decoder's offsets count every byte it was given.
#[derive(Debug)]
pub struct MllpCodec {
    tolerance: Tolerance,
    max_frame: usize,
    state: State,
    /// Stream offset of the first byte of the decoder's buffer.
    offset: u64,
    /// Stream offset of the first payload byte of the frame being read.
    payload_offset: u64,
    /// Index the next delivered frame gets.
    next_index: u64,
    /// Warnings for the frame being read, in stream order.
    pending: Vec<Warning>,
    /// Answer frames past `max_frame` instead of failing the stream: see
    /// [`MllpCodec::discarding_oversize`].
    discard_oversize: bool,
    /// The kept head of the oversize frame being dropped.
    oversize: Option<BytesMut>,
}

impl MllpCodec {
    /// A codec with an empty stream behind it; `max_frame` bounds a payload, in bytes (see
    /// [`DEFAULT_MAX_FRAME`]).
    pub fn new(tolerance: Tolerance, max_frame: usize) -> Self {
        MllpCodec {
            tolerance,
            max_frame,
            state: State::Idle,
            offset: 0,
            payload_offset: 0,
            next_index: 0,
            pending: Vec::new(),
            discard_oversize: false,
            oversize: None,
        }
    }

    /// A frame longer than `max_frame` no longer fails the stream: its bytes past the first
    /// (up to 64 KiB, at most `max_frame`) are dropped as they arrive, and at its end it is
    /// delivered as that head with an `MLLP_FRAME_TOO_LARGE` warning, so it can be answered
    /// and the stream goes on.
    pub fn discarding_oversize(mut self) -> Self {
        self.discard_oversize = true;
        self
    }

    /// Nothing of a next frame has been consumed: not a VT, not even whitespace, since the
    /// last frame ended (or since the start).
    pub(crate) fn between_frames(&self) -> bool {
        matches!(
            self.state,
            State::Idle | State::AfterFs { .. } | State::Ended
        ) && self.pending.is_empty()
    }

    /// The deviations this codec's reader tolerates.
    pub fn tolerance(&self) -> Tolerance {
        self.tolerance
    }

    /// The payload size limit, in bytes.
    pub fn max_frame(&self) -> usize {
        self.max_frame
    }
}

impl Decoder for MllpCodec {
    type Item = Decoded;
    type Error = FramingError;

    fn decode(&mut self, buf: &mut BytesMut) -> Result<Option<Decoded>, FramingError> {
        self.step(buf)
    }

    fn decode_eof(&mut self, buf: &mut BytesMut) -> Result<Option<Decoded>, FramingError> {
        if let Some(item) = self.step(buf)? {
            return Ok(Some(item));
        }
        self.finish(buf)
    }
}

impl Encoder<Bytes> for MllpCodec {
    type Error = EncoderError;

    fn encode(&mut self, payload: Bytes, dst: &mut BytesMut) -> Result<(), EncoderError> {
        Ok(encode_frame(&payload, dst)?)
    }
}

impl Encoder<&[u8]> for MllpCodec {
    type Error = EncoderError;

    fn encode(&mut self, payload: &[u8], dst: &mut BytesMut) -> Result<(), EncoderError> {
        Ok(encode_frame(payload, dst)?)
    }
}

#[cfg(test)]
mod tests;
