//! `mllp probe`.

use crate::diag::Diag;
use crate::exit::Exit;
use clap::Args;

#[derive(Debug, Args)]
pub struct ProbeArgs {}

pub fn run(_args: ProbeArgs, _diag: &Diag) -> anyhow::Result<Exit> {
    eprintln!("mllp: `probe` is not built yet");
    Ok(Exit::Usage)
}
