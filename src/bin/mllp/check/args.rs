//! `mllp check`'s flags: the inputs (shared with `show`) and the site's profile.

use crate::global::heading;
use crate::inspect::InspectArgs;
use crate::manual::CHECK;
use clap::Args;
use mllp::hl7::{Profile, RawProfile};
use std::path::{Path, PathBuf};

#[derive(Debug, Args)]
#[command(
    after_help = CHECK.short_after_help(),
    after_long_help = CHECK.long_after_help(),
)]
pub struct CheckArgs {
    #[command(flatten)]
    pub input: InspectArgs,
    /// A site's own rules on top of the standard's (TOML or JSON).
    ///
    /// JSON when the name ends in .json, else TOML. required = ["PID-3.1"]; [allowed] "PID-8" = ["M", "F"] or { pattern = "[MFOU]" };
    /// [max_length] "PID-5.1" = 50; [segments] "ADT^A01" = ["EVN", "PID", "PV1"]. See
    /// docs/hl7.md.
    #[arg(long, value_name = "FILE", help_heading = heading::INPUT)]
    pub profile: Option<PathBuf>,
    /// One JSON object per finding, then the summary.
    #[arg(long, help_heading = heading::OUTPUT)]
    pub json: bool,
}

/// The profile in `file`: JSON when its name ends in `.json`, TOML otherwise. The error names
/// the file and what is wrong, for a usage error.
pub fn load_profile(file: &Path) -> Result<Profile, String> {
    let name = file.display();
    let text = std::fs::read_to_string(file).map_err(|e| format!("{name}: {e}"))?;
    let json = file
        .extension()
        .is_some_and(|e| e.eq_ignore_ascii_case("json"));
    let raw: RawProfile = match json {
        true => serde_json::from_str(&text).map_err(|e| format!("{name}: not a profile: {e}"))?,
        false => toml::from_str(&text).map_err(|e| format!("{name}: not a profile: {e}"))?,
    };
    Profile::from_raw(raw).map_err(|e| format!("{name}: {e}"))
}
