//! `mllp completions` and `mllp man`: generated from the clap definition.

use crate::cli::Cli;
use crate::exit::Exit;
use anyhow::Context;
use clap::{Args, CommandFactory};
use clap_complete::Shell;
use std::path::PathBuf;

#[derive(Debug, Args)]
#[command(
    after_help = "Examples:\n  mllp completions bash > /etc/bash_completion.d/mllp\n  mllp completions zsh > ~/.zfunc/_mllp"
)]
pub struct CompletionsArgs {
    /// The shell to generate for.
    #[arg(value_enum)]
    pub shell: Shell,
}

#[derive(Debug, Args)]
#[command(
    after_help = "Examples:\n  mllp man | man -l -\n  mllp man --dir /usr/local/share/man/man1"
)]
pub struct ManArgs {
    /// Write `mllp.1` and one page per subcommand into this directory instead of printing `mllp.1`.
    #[arg(long, value_name = "DIR")]
    pub dir: Option<PathBuf>,
}

pub fn completions(args: CompletionsArgs) -> anyhow::Result<Exit> {
    let mut cmd = Cli::command();
    // Rendered first: the generator panics on a failed write.
    let mut script = Vec::new();
    clap_complete::generate(args.shell, &mut cmd, "mllp", &mut script);
    crate::stdout::write_all(&script)?;
    Ok(Exit::Success)
}

pub fn man(args: ManArgs) -> anyhow::Result<Exit> {
    let cmd = Cli::command();
    match args.dir {
        None => {
            let mut page = Vec::new();
            clap_mangen::Man::new(cmd).render(&mut page)?;
            crate::stdout::write_all(&page)?;
        }
        Some(dir) => {
            std::fs::create_dir_all(&dir).with_context(|| format!("creating {}", dir.display()))?;
            clap_mangen::generate_to(cmd, &dir)
                .with_context(|| format!("writing man pages to {}", dir.display()))?;
        }
    }
    Ok(Exit::Success)
}
