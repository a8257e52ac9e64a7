//! What can be wrong with an input, named by file and line and saying what to do. Never payload.

use std::path::PathBuf;

/// An input problem. `name` is the source as shown to the user (`adt.hl7`, `-` for stdin); lines
/// are 1-based and count CR, LF and CRLF each as one line end.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum InputError {
    #[error(
        "{name} line {line}: text before the first MSH segment; each message must start with MSH"
    )]
    TextBeforeMsh { name: String, line: u64 },
    #[error(
        "{name} line {line}: {} byte (0x{byte:02X}) inside a message; a message must not contain \
         VT or FS (framed files must start with VT and hold whole frames)",
        framing_byte_name(*byte)
    )]
    FramingByte { name: String, line: u64, byte: u8 },
    #[error("{name} line {line}: text between MLLP frames; a framed file holds only frames (VT ... FS CR)")]
    TextBetweenFrames { name: String, line: u64 },
    #[error("{name} line {line}: MLLP frame has no closing FS before the end of the input; the file is truncated")]
    UnterminatedFrame { name: String, line: u64 },
    #[error("{name} line {line}: MLLP frame holds no message; remove the empty frame")]
    EmptyFrame { name: String, line: u64 },
    #[error(
        "{name} line {line}: message is larger than the maximum message size of {max} bytes; \
         split it or raise the maximum"
    )]
    MessageTooLarge { name: String, line: u64, max: usize },
    #[error(
        "{label}: its MSH-10 (message control ID) is empty, so no ACK could name it and its \
         fate could never be known"
    )]
    EmptyControlId { label: String },
    #[error("{name}: UTF-16 text: convert it to UTF-8 or an 8-bit charset (e.g. iconv -f UTF-16 -t UTF-8)")]
    Utf16 { name: String },
    #[error("{name}: no HL7 message found (the input is empty or only whitespace)")]
    NoMessages { name: String },
    #[error("{name}: cannot read: {error}")]
    Read {
        name: String,
        #[source]
        error: std::io::Error,
    },
    #[error("{}: no such file or directory", .path.display())]
    NotFound { path: PathBuf },
    #[error("{pattern}: no file matches this pattern")]
    NoMatch { pattern: String },
    #[error("{pattern}: not a valid glob pattern: {reason}")]
    BadPattern { pattern: String, reason: String },
    /// A directory named without asking to read directories recursively.
    #[error("{}: is a directory", .path.display())]
    IsDirectory { path: PathBuf },
    #[error("{}: directory holds no files to send", .path.display())]
    EmptyDirectory { path: PathBuf },
    #[error("-: standard input given more than once")]
    StdinTwice,
    /// Standard input is spooled for the check up to a limit; it held more.
    #[error("-: standard input holds more than {max} bytes")]
    StdinTooLarge { max: u64 },
}

fn framing_byte_name(byte: u8) -> &'static str {
    match byte {
        crate::framing::VT => "VT",
        crate::framing::FS => "FS",
        _ => "framing",
    }
}

impl InputError {
    /// The 1-based line the problem was found on, when it belongs to one.
    pub fn line(&self) -> Option<u64> {
        match self {
            InputError::TextBeforeMsh { line, .. }
            | InputError::FramingByte { line, .. }
            | InputError::TextBetweenFrames { line, .. }
            | InputError::UnterminatedFrame { line, .. }
            | InputError::EmptyFrame { line, .. }
            | InputError::MessageTooLarge { line, .. } => Some(*line),
            _ => None,
        }
    }
}
