//! Splitting HL7 files and streams into messages: MSH boundaries, line endings, framed input, batches.
//!
//! - [`Splitter`]: one byte stream in, messages out, in bounded memory (the rules are in its module, `input/split.rs`).
//! - [`collect_inputs`]: command-line arguments (files, globs, directories, `-`) to [`InputSource`]s.
//! - [`InputSet`]: the sources made ready to read twice (stdin spooled to a temporary file), a
//!   validation pass over all of them that indexes each file's messages, then the messages for
//!   sending, taken from where the index says.
//! - [`ControlIds`]: the messages' MSH-10 as given (an empty one refused) or fresh ones.
//! - [`StoreRows`]: the messages of a receiver's or relay's SQLite store, filtered and each row
//!   checked as a file of its payload would be, for replay (those of a `listen --postgres`
//!   store: [`crate::server::PostgresRows`]).
//! - [`SharedControlIds`]: control IDs several messages share, counted in a temporary file so a
//!   dry run of any size holds bounded memory.

mod collect;
mod control_id;
mod error;
pub(crate) mod header;
mod idle;
mod index;
mod message;
mod natural;
mod reader;
mod set;
#[cfg(feature = "sqlite")]
mod shared_ids;
mod split;
#[cfg(feature = "sqlite")]
mod store;

pub use collect::{collect_inputs, InputSource};
pub use control_id::{lacks_control_id, ControlIdCount, ControlIds, SharedControlId};
pub use error::InputError;
#[cfg(any(test, feature = "fuzzing"))]
pub(crate) use message::DEFAULT_MAX_MESSAGE;
pub use message::{Message, SplitOptions};
pub use set::{InputOptions, InputSet, Messages, Summary};
#[cfg(feature = "sqlite")]
pub use shared_ids::SharedControlIds;
pub use split::Splitter;
#[cfg(feature = "sqlite")]
pub use store::{StoreFilter, StoreReadError, StoreRows, Stored, PAGE_ROWS};
