//! `mllp diff` through the binary: planted differences found and nothing else, in files,
//! directories and stores; keys for engines that renumber; ignored paths; output for logs.

mod edges;
mod planted;
mod stores;

use crate::support::{mllp, run::Run};

/// `mllp diff ARGS`, checked for the payload marker.
pub fn diff(args: &[&std::ffi::OsStr]) -> Run {
    let out = mllp().arg("diff").args(args).output().unwrap();
    Run::checked(&out, "diff")
}
