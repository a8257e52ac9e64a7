//! `mllp deid`'s flags: the inputs, where the output goes, the key and the policy.

use crate::global::heading;
use crate::manual::DEID;
use crate::values;
use clap::Args;
use mllp::hl7::Filter;
use std::path::PathBuf;

#[derive(Debug, Args)]
#[command(
    after_help = DEID.short_after_help(),
    after_long_help = DEID.long_after_help(),
    override_usage = "mllp deid [OPTIONS] --key-file <FILE> --out <DIR|-> [INPUTS]...\n       \
                      mllp deid --new-key <FILE>"
)]
pub struct DeidArgs {
    /// Files, globs or directories (with --recursive); `-` or none reads stdin.
    #[arg(value_name = "INPUTS")]
    pub files: Vec<String>,
    /// Walk directories given as inputs (their layout is kept under --out).
    #[arg(short, long, help_heading = heading::INPUT)]
    pub recursive: bool,
    /// Read the messages of a listen --sqlite or relay store, in arrival order.
    #[arg(long, value_name = "FILE", conflicts_with_all = ["files", "recursive"], help_heading = heading::INPUT)]
    pub from_db: Option<PathBuf>,
    /// Only the messages for which FILTER holds (repeat: all must hold).
    ///
    /// PATH=VALUE, PATH!=VALUE, PATH~REGEX or PATH alone (not empty). The others are left out
    /// of the output and counted, never an error.
    #[arg(long = "where", value_name = "FILTER", value_parser = values::filter(), help_heading = heading::INPUT)]
    pub filters: Vec<Filter>,

    /// The key every replacement is derived from (64 hexadecimal digits; see --new-key).
    ///
    /// The same key gives the same replacements in every run, so a patient stays one person
    /// across files and days; keep it as safe as the data. Required: a key made up for one run
    /// would break that silently.
    #[arg(long, value_name = "FILE", help_heading = heading::INPUT)]
    pub key_file: Option<PathBuf>,
    /// Write a new random key to FILE (readable by you alone) and stop.
    ///
    /// Refuses to replace an existing file: the replacements it gave would be lost.
    #[arg(long, value_name = "FILE", conflicts_with_all = ["files", "from_db", "key_file", "out", "policy"], help_heading = heading::INPUT)]
    pub new_key: Option<PathBuf>,
    /// Add to or change the standard policy: TOML, or JSON when FILE ends in .json.
    ///
    /// `[paths]` maps a path to hash, name, shift-date, blank or keep (`"ZPI-3" = "hash"`,
    /// `"PID-7" = "keep"`); `standard = false` starts from no rule at all. See docs/deid.md.
    #[arg(long, value_name = "FILE", help_heading = heading::INPUT)]
    pub policy: Option<PathBuf>,

    /// Where the messages go: a directory (absent or empty; one file per input, named as it)
    /// or `-` for stdout.
    #[arg(long, value_name = "DIR|-", help_heading = heading::OUTPUT)]
    pub out: Option<PathBuf>,
}
