//! `mllp soak`.

use crate::diag::Diag;
use crate::exit::Exit;
use clap::Args;

#[derive(Debug, Args)]
pub struct SoakArgs {}

pub fn run(_args: SoakArgs, _diag: &Diag) -> anyhow::Result<Exit> {
    eprintln!("mllp: `soak` is not built yet");
    Ok(Exit::Usage)
}
