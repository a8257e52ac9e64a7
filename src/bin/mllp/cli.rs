//! The command line: the global flags and the subcommand list. Each subcommand's flags live beside
//! its implementation.

use crate::global::GlobalArgs;
use clap::{Parser, Subcommand};

/// MLLP for HL7 v2: send, receive, probe and soak-test HL7 links.
#[derive(Debug, Parser)]
#[command(name = "mllp", version, about, long_about = None)]
#[command(after_help = crate::manual::MLLP.short_after_help())]
#[command(
    propagate_version = true,
    disable_help_flag = true,
    disable_version_flag = true
)]
pub struct Cli {
    #[command(flatten)]
    pub global: GlobalArgs,
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Send HL7 files to an MLLP endpoint and account for every message.
    Send(Box<crate::send::SendArgs>),
    /// Receive HL7 over MLLP, commit each message to a sink, then acknowledge it.
    Listen(Box<crate::listen::ListenArgs>),
    /// Stand between two systems: forward, show, bridge TLS, queue while the upstream is down.
    Relay(Box<crate::relay::RelayArgs>),
    /// Find out why an endpoint will not talk: resolve, connect, TLS, and one message.
    Probe(Box<crate::probe::ProbeArgs>),
    /// Hold a link under load, watch it fail and heal, and prove nothing was lost.
    Soak(Box<crate::soak::SoakArgs>),
    /// Show what HL7 messages hold: an outline of their fields, or the values at paths.
    Show(Box<crate::show::ShowArgs>),
    /// Check whether HL7 messages are well formed, by the standard's rules and a site's.
    Check(Box<crate::check::CheckArgs>),
    /// Compare two sets of messages, paired by key, field by field.
    Diff(Box<crate::diff::DiffArgs>),
    /// Write the same messages with their patients replaced, consistently under a key.
    Deid(Box<crate::deid::DeidArgs>),
    /// Print a shell completion script.
    Completions(crate::generate::CompletionsArgs),
    /// Print the man page, or write one per subcommand into a directory.
    Man(crate::generate::ManArgs),
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;

    #[test]
    fn command_definition_is_consistent() {
        Cli::command().debug_assert();
    }
}
