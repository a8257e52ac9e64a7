//! `mllp diff`'s flags: the two sides, what pairs their messages, what is compared, and what
//! is shown.

use crate::global::heading;
use crate::manual::DIFF;
use crate::values;
use clap::Args;
use mllp::diff::Ignored;
use mllp::hl7::{Charset, Filter, Path};

#[derive(Debug, Args)]
#[command(after_help = DIFF.short_after_help(), after_long_help = DIFF.long_after_help())]
pub struct DiffArgs {
    /// Side A: a file, a glob, a directory (walked), a listen --sqlite or relay store, or `-`.
    #[arg(value_name = "A")]
    pub a: String,
    /// Side B, as A.
    #[arg(value_name = "B")]
    pub b: String,

    /// What pairs a message of A with one of B (repeat for several) [default: MSH-10].
    ///
    /// The decoded values of the paths, together: `--key PID-3.1 --key MSH-9` pairs the
    /// outputs of engines that renumber MSH-10. A key seen twice on a side pairs in order
    /// (the first with the first) and is counted.
    #[arg(long, value_name = "PATH", value_parser = values::path(), help_heading = heading::INPUT)]
    pub key: Vec<Path>,
    /// Leave a path or a whole segment out of the comparison (repeat).
    ///
    /// `MSH-7`, `EVN-2`, `PID-3.4`, `OBX(2)-5`, or a segment name alone (`ZXX`). A segment
    /// occurrence or repetition the path leaves out means every one: `OBX-14` is field 14 of
    /// every OBX.
    #[arg(long, value_name = "PATH|SEG", value_parser = parse_ignored, help_heading = heading::INPUT)]
    pub ignore: Vec<Ignored>,
    /// Only the messages for which FILTER holds, on both sides (repeat: all must hold).
    ///
    /// PATH=VALUE, PATH!=VALUE, PATH~REGEX or PATH alone (not empty): `--where MSH-9.1=ADT`.
    /// The others are counted, never an error.
    #[arg(long = "where", value_name = "FILTER", value_parser = values::filter(), help_heading = heading::INPUT)]
    pub filters: Vec<Filter>,
    /// Read text in this character set, whatever MSH-18 says.
    ///
    /// Also where MSH-18 is empty. HL7 names (ASCII, 8859/1, UNICODE UTF-8, ...) or common
    /// ones (UTF-8, latin1, windows-1252). Without it: MSH-18, and UTF-8 where it is empty.
    #[arg(long, value_name = "NAME", value_parser = values::charset(), help_heading = heading::INPUT)]
    pub charset: Option<Charset>,
    /// NDJSON on stdout: one record per finding, then a summary record.
    #[arg(long, help_heading = heading::OUTPUT)]
    pub json: bool,
    /// Say where pairs differ, without the values (for logs).
    ///
    /// Keys too: MSH-9 and MSH-10 are shown, any other key path (PID-3.1) without its value.
    #[arg(long, help_heading = heading::OUTPUT)]
    pub no_values: bool,
}

fn parse_ignored(text: &str) -> Result<Ignored, String> {
    text.parse().map_err(|e: mllp::hl7::PathError| {
        format!("{e}; a path (MSH-7, PID-3.4) or a segment name (ZXX)")
    })
}
