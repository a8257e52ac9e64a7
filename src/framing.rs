//! The MLLP codec: `VT payload FS CR`. A strict writer and an incremental, tolerant reader whose
//! every tolerated deviation is a warning with a stable code and an absolute stream offset.

use crate::warning::{Warning, WarningCode};
use bytes::{Bytes, BytesMut};

pub const VT: u8 = 0x0B;
pub const FS: u8 = 0x1C;
pub const CR: u8 = 0x0D;
pub const LF: u8 = 0x0A;

/// 16 MiB, counted on payload bytes.
pub const DEFAULT_MAX_FRAME: usize = 16 * 1024 * 1024;

/// Which deviations the reader tolerates (with a warning). Each is off in a strict reader.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Tolerance {
    pub fs_without_cr: bool,
    pub lf_after_fs: bool,
    pub leading_whitespace: bool,
    pub missing_leading_vt: bool,
}

impl Tolerance {
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
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Frame {
    /// 0-based index of this frame on its stream; late terminator warnings name it.
    pub index: u64,
    /// Stream offset of the first payload byte.
    pub offset: u64,
    pub payload: Bytes,
    pub warnings: Vec<Warning>,
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
    Frame(Frame),
    /// A terminator warning found after its frame was already delivered (FS-only tolerance).
    LateWarning {
        frame_index: u64,
        warning: Warning,
    },
}

/// A fatal framing error: final for the stream, no resynchronisation.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum FramingError {
    #[error("{code} at byte {byte_offset}{}", .byte.map(|b| format!(" (byte 0x{b:02X})")).unwrap_or_default())]
    Fatal {
        code: WarningCode,
        byte_offset: u64,
        /// The single offending byte, never a run of payload.
        byte: Option<u8>,
    },
    #[error("i/o error: {0}")]
    Io(#[from] std::io::Error),
}

impl FramingError {
    pub fn code(&self) -> Option<WarningCode> {
        match self {
            FramingError::Fatal { code, .. } => Some(*code),
            FramingError::Io(_) => None,
        }
    }
}

/// The encoder refuses a payload that would break framing.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{code}: payload byte {position} is a framing byte")]
pub struct EncodeError {
    pub code: WarningCode,
    /// Position in the payload of the first offending byte.
    pub position: usize,
}

/// Append one canonical frame to `dst`, or refuse a payload containing VT or FS.
pub fn encode_frame(payload: &[u8], dst: &mut BytesMut) -> Result<(), EncodeError> {
    let _ = (payload, dst);
    todo!("framing::encode_frame")
}

/// The codec. Decoder items are [`Decoded`]; the encoder takes payload bytes.
#[derive(Debug)]
pub struct MllpCodec {
    tolerance: Tolerance,
    max_frame: usize,
}

impl MllpCodec {
    pub fn new(tolerance: Tolerance, max_frame: usize) -> Self {
        MllpCodec {
            tolerance,
            max_frame,
        }
    }

    pub fn tolerance(&self) -> Tolerance {
        self.tolerance
    }

    pub fn max_frame(&self) -> usize {
        self.max_frame
    }
}
