//! The `mllp` binary: parses arguments, runs one subcommand, and turns its outcome into an exit
//! code in one place. Stdout is written only through `stdout` (a closed pipe is no panic).
#![deny(clippy::print_stdout)]

mod check;
mod cli;
mod deid;
mod diag;
mod diff;
mod exit;
mod failover;
mod generate;
mod global;
mod hint;
mod inspect;
mod listen;
mod manual;
mod netargs;
mod output;
mod probe;
mod prometheus;
mod relay;
mod send;
mod show;
mod soak;
mod sources;
mod stdout;
mod values;

use clap::{CommandFactory, FromArgMatches};
use std::process::ExitCode;

fn main() -> ExitCode {
    let cli = match parse() {
        Ok(cli) => cli,
        Err(err) => return diag::fatal::parse_error(err),
    };
    let code = match run(cli) {
        Ok(code) => code,
        // The reader left before there was anything to show: end quietly.
        Err(err) if stdout::caused(&err) => exit::Exit::Usage,
        Err(err) => diag::Fatal::new(exit::Exit::Usage, format!("{err:#}")).report(),
    };
    exit::status(code)
}

/// The command line, and where the endpoint's parts came from (flags or environment).
fn parse() -> Result<cli::Cli, clap::Error> {
    let matches = cli::Cli::command().try_get_matches()?;
    let mut cli = cli::Cli::from_arg_matches(&matches)?;
    match &mut cli.command {
        cli::Command::Send(args) => {
            args.origin = netargs::origin(matches.subcommand_matches("send"));
        }
        cli::Command::Probe(args) => {
            args.origin = netargs::origin(matches.subcommand_matches("probe"));
        }
        _ => {}
    }
    Ok(cli)
}

fn run(mut cli: cli::Cli) -> anyhow::Result<exit::Exit> {
    // `listen --json` is the habit of the other commands: JSON diagnostics too.
    if matches!(&cli.command, cli::Command::Listen(args) if args.json) {
        cli.global.log_format = global::LogFormat::Json;
    }
    let diag = diag::Diag::new(&cli.global);
    match cli.command {
        cli::Command::Send(args) => send::run(*args, &diag),
        cli::Command::Listen(args) => listen::run(*args, &diag),
        cli::Command::Probe(args) => probe::run(*args, &diag),
        cli::Command::Relay(args) => relay::run(*args, &diag),
        cli::Command::Soak(args) => soak::run(*args, &diag),
        cli::Command::Show(args) => show::run(*args, &diag),
        cli::Command::Check(args) => check::run(*args, &diag),
        cli::Command::Diff(args) => diff::run(*args, &diag),
        cli::Command::Deid(args) => deid::run(*args, &diag),
        cli::Command::Completions(args) => generate::completions(args, cli::Cli::command()),
        cli::Command::Man(args) => generate::man(args, cli::Cli::command()),
    }
}
