//! `mllp send`.

use crate::diag::Diag;
use crate::exit::Exit;
use clap::Args;

#[derive(Debug, Args)]
pub struct SendArgs {}

pub fn run(_args: SendArgs, _diag: &Diag) -> anyhow::Result<Exit> {
    eprintln!("mllp: `send` is not built yet");
    Ok(Exit::Usage)
}
