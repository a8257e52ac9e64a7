//! HL7 v2 read in place: one reader for every place that looks into a message, never
//! panicking and never copying.
//!
//! - [`Message`], [`Segment`], [`Value`]: a message as a byte-preserving view of its segments,
//!   fields, repetitions, components and subcomponents under its own [`Delimiters`] (MSH-1,
//!   MSH-2 and the truncation character of v2.7). Escape sequences are decoded on request
//!   ([`Value::decoded`]).
//! - [`Path`]: `SEG[(n)]-F[(r)][.C[.S]]`, numbered as the HL7 tables number fields, with `*` for
//!   every occurrence; a path that names nothing gives the empty value. [`PathError`] names the
//!   character that is wrong.
//! - [`Filter`]: `PATH=VALUE`, `PATH!=VALUE`, `PATH~REGEX`, `PATH` (not empty); [`Filters`]
//!   for all of a run's at once.
//! - [`Charset`], [`Text`]: the text the bytes stand for in the character set MSH-18 names.
//! - [`field_def`], [`FieldDef`]: the names and types of the fields of the common segments.
//! - [`Checker`], [`Profile`]: is a message well formed? The standard's rules and a site's profile, each
//!   finding with a stable code.
//! - The transport's fast paths, each tested against the reader: [`Msh`] (a header with its
//!   field separators indexed once), [`scan`] and [`Shape`] (one message, a batch, concatenated
//!   messages), [`split_batch`], [`scan_ack`] and [`ack_reply`] (what an ACK says).

mod ack_read;
pub(crate) mod charset;
pub(crate) mod check;
mod delimiters;
pub(crate) mod escape;
pub(crate) mod fields;
mod filter;
mod header;
mod lookup;
pub(crate) mod mask;
mod message;
mod path;
mod segments;
mod shape;
mod value;

pub use ack_read::{ack_reply, scan_ack, AckView};
pub use charset::{Charset, Text, UnknownCharset};
pub use check::{
    Allowed, Checker, Code, Finding, Profile, ProfileError, RawAllowed, RawProfile, Severity,
};
pub use delimiters::Delimiters;
pub use fields::{field_def, FieldDef, FieldType};
pub use filter::{Filter, FilterError, Filters};
pub use header::Msh;
pub use lookup::Values;
pub use message::{Message, Segment};
pub use path::{Depth, Occurrence, Path, PathError, Place};
pub use segments::{is_envelope_segment, segments};
pub use shape::{scan, split_batch, Scan, Shape};
pub use value::{Parts, Value};

#[cfg(test)]
mod model_tests;
#[cfg(test)]
mod tests;
