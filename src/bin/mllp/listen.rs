//! `mllp listen`.

use crate::diag::Diag;
use crate::exit::Exit;
use clap::Args;

#[derive(Debug, Args)]
pub struct ListenArgs {}

pub fn run(_args: ListenArgs, _diag: &Diag) -> anyhow::Result<Exit> {
    eprintln!("mllp: `listen` is not built yet");
    Ok(Exit::Usage)
}
