//! What `show` and `check` share: the inputs they read (files, globs, directories, stdin,
//! framed captures, batches, a store), the messages of those inputs one at a time in bounded
//! memory, and the filters and character set they read them by.

mod args;
mod read;
mod text;

pub use args::InspectArgs;
pub use read::{batch_admitted, open_or_refuse};
pub use text::{escape_cell, escape_controls, shown, TextWarnings};
