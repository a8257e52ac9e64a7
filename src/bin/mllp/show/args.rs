//! `mllp show`'s flags: the inputs (shared with `check`) and what is shown of each message.

use crate::global::heading;
use crate::inspect::InspectArgs;
use crate::manual::SHOW;
use crate::values;
use clap::Args;
use mllp::hl7::Path;

#[derive(Debug, Args)]
#[command(
    after_help = SHOW.short_after_help(),
    after_long_help = SHOW.long_after_help(),
)]
pub struct ShowArgs {
    #[command(flatten)]
    pub input: InspectArgs,
    /// Print the value at PATH, one line per message (repeat for more columns).
    ///
    /// The message's source, then each value, tab-separated; a tab, line break or backslash
    /// in a value is escaped (\t, \n, \r, \\). PATH: PID-5, PID-5.1, PID-3(2).1, OBX(3)-5,
    /// MSH-9; `*` gives every occurrence, each its own column (OBX(*)-5, PID-3(*).1). A path
    /// that names nothing gives an empty value.
    #[arg(long = "get", value_name = "PATH", value_parser = values::path(), help_heading = heading::OUTPUT)]
    pub get: Vec<Path>,
    /// One JSON object per message.
    ///
    /// `source`, `control_id`, `message_type`, and `values` by path (an array for a path with
    /// `*`), or without --get `fields`: each with its `path`, `name` and `value` (and with -v
    /// its `components`).
    #[arg(long, help_heading = heading::OUTPUT)]
    pub json: bool,
    /// Values as written: escape sequences left as they are.
    ///
    /// Without it, \F\, \S\, \T\, \R\, \E\, \Xhh\ and \.br\ are decoded in each value that has
    /// no parts of its own; a value with parts (components, repetitions) is always as written,
    /// so that a decoded \S\ never passes for a separator.
    #[arg(long, help_heading = heading::OUTPUT)]
    pub raw: bool,
}
