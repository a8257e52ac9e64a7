//! One message as the splitter yields it, and the options that shape splitting.

use bytes::Bytes;
use std::fmt;
use std::sync::Arc;

/// Largest message accepted by default: the wire layer's maximum frame.
pub(crate) const DEFAULT_MAX_MESSAGE: usize = crate::framing::DEFAULT_MAX_FRAME;

/// How to split.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SplitOptions {
    /// Pass segment terminators through untouched instead of normalising them to CR.
    pub raw: bool,
    /// Keep each batch envelope whole as one message.
    pub batch: bool,
    /// Largest message, in bytes after normalisation.
    pub max_message: usize,
}

impl Default for SplitOptions {
    fn default() -> Self {
        SplitOptions {
            raw: false,
            batch: false,
            max_message: DEFAULT_MAX_MESSAGE,
        }
    }
}

/// One message and where it came from. `Debug` shows the payload's length, never its bytes.
#[derive(Clone, PartialEq, Eq)]
pub struct Message {
    /// The source as shown to the user: a path, or `-` for stdin.
    pub source: Arc<str>,
    /// 1-based position of the message in its source.
    pub index: u64,
    /// 1-based line where the message starts.
    pub line: u64,
    /// 0-based byte offset in the source where the message starts.
    pub offset: u64,
    /// The message's bytes, as they are sent.
    pub payload: Bytes,
    /// MSH-10 as the input had it, when the run gave the message a fresh one.
    pub original_control_id: Option<Arc<str>>,
}

impl Message {
    /// `adt.hl7#2`, `-#1`: how results name the message.
    pub fn label(&self) -> String {
        format!("{}#{}", self.source, self.index)
    }
}

impl fmt::Debug for Message {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Message")
            .field("source", &self.source)
            .field("index", &self.index)
            .field("line", &self.line)
            .field("offset", &self.offset)
            .field("bytes", &self.payload.len())
            .field("original_control_id", &self.original_control_id)
            .finish()
    }
}
