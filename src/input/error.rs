//! What can be wrong with an input, named by file and line and saying what to do. Never payload.

use std::path::PathBuf;

/// An input problem. `name` is the source as shown to the user (`adt.hl7`, `-` for stdin); lines
/// are 1-based and count CR, LF and CRLF each as one line end.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum InputError {
    /// Text where a message should start: before the first MSH segment, or after a batch trailer.
    #[error(
        "{name} line {line}: text before the first MSH segment; each message must start with MSH"
    )]
    TextBeforeMsh {
        /// The source, as shown to the user.
        name: String,
        /// The 1-based line of the stray text.
        line: u64,
    },
    /// A VT or FS byte inside a message's content.
    #[error(
        "{name} line {line}: {} byte (0x{byte:02X}) inside a message; a message must not contain \
         VT or FS (framed files must start with VT and hold whole frames)",
        framing_byte_name(*byte)
    )]
    FramingByte {
        /// The source, as shown to the user.
        name: String,
        /// The 1-based line the byte is on.
        line: u64,
        /// The byte found (VT, 0x0B, or FS, 0x1C).
        byte: u8,
    },
    /// Text outside the frames of a framed input.
    #[error("{name} line {line}: text between MLLP frames; a framed file holds only frames (VT ... FS CR)")]
    TextBetweenFrames {
        /// The source, as shown to the user.
        name: String,
        /// The 1-based line of the stray text.
        line: u64,
    },
    /// A framed input ends inside a frame: the input is truncated.
    #[error("{name} line {line}: MLLP frame has no closing FS before the end of the input; the file is truncated")]
    UnterminatedFrame {
        /// The source, as shown to the user.
        name: String,
        /// The 1-based line where the unfinished frame starts.
        line: u64,
    },
    /// A frame of a framed input is empty.
    #[error("{name} line {line}: MLLP frame holds no message; remove the empty frame")]
    EmptyFrame {
        /// The source, as shown to the user.
        name: String,
        /// The 1-based line of the empty frame.
        line: u64,
    },
    /// A message is larger than the maximum message size of the split options.
    #[error(
        "{name} line {line}: message is larger than the maximum message size of {max} bytes; \
         split it or raise the maximum"
    )]
    MessageTooLarge {
        /// The source, as shown to the user.
        name: String,
        /// The 1-based line where the message starts.
        line: u64,
        /// The maximum message size, in bytes.
        max: usize,
    },
    /// A message has an empty or absent MSH-10 while the run keeps the control IDs as given.
    #[error(
        "{label}: its MSH-10 (message control ID) is empty, so no ACK could name it and its \
         fate could never be known"
    )]
    EmptyControlId {
        /// The message, as results name it (`adt.hl7#2`).
        label: String,
    },
    /// The input is UTF-16 text, which HL7 v2 over MLLP does not carry.
    #[error("{name}: UTF-16 text: convert it to UTF-8 or an 8-bit charset (e.g. iconv -f UTF-16 -t UTF-8)")]
    Utf16 {
        /// The source, as shown to the user.
        name: String,
    },
    /// A source holds no message at all.
    #[error("{name}: no HL7 message found (the input is empty or only whitespace)")]
    NoMessages {
        /// The source, as shown to the user.
        name: String,
    },
    /// A stored row whose payload is no text or bytes at all (NULL, a number).
    #[error("{name}: the stored payload is {value}, not an HL7 message")]
    NotAMessage {
        /// The row, as results name it (`rx.db#17`).
        name: String,
        /// What the payload is instead: `NULL`, `an integer`, `a real number`.
        value: &'static str,
    },
    /// A stored row holds more than one message; a row is replayed as the one message it was.
    #[error("{name}: holds more than one message, and a stored row is replayed as one message")]
    SeveralMessages {
        /// The row, as results name it (`rx.db#17`).
        name: String,
    },
    /// A source, directory or store could not be read.
    #[error("{name}: cannot read: {error}")]
    Read {
        /// The source, as shown to the user.
        name: String,
        /// Why reading failed.
        #[source]
        error: std::io::Error,
    },
    /// A named path does not exist.
    #[error("{}: no such file or directory", .path.display())]
    NotFound {
        /// The path as given.
        path: PathBuf,
    },
    /// A glob pattern matches no file.
    #[error("{pattern}: no file matches this pattern")]
    NoMatch {
        /// The pattern as given.
        pattern: String,
    },
    /// A glob pattern cannot be parsed.
    #[error("{pattern}: not a valid glob pattern: {reason}")]
    BadPattern {
        /// The pattern as given.
        pattern: String,
        /// What is wrong with it.
        reason: String,
    },
    /// A directory named without asking to read directories recursively.
    #[error("{}: is a directory", .path.display())]
    IsDirectory {
        /// The directory as given.
        path: PathBuf,
    },
    /// A directory read for inputs holds no file.
    #[error("{}: directory holds no files to send", .path.display())]
    EmptyDirectory {
        /// The directory as given.
        path: PathBuf,
    },
    /// Standard input is among the sources more than once; it can be read only once.
    #[error("-: standard input given more than once")]
    StdinTwice,
    /// Standard input is spooled for the check up to a limit; it held more.
    #[error("-: standard input holds more than {max} bytes")]
    StdinTooLarge {
        /// The spooling limit, in bytes.
        max: u64,
    },
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
