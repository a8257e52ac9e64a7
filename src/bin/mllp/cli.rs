//! The command line: global flags and the subcommand list. Each subcommand's flags live beside
//! its implementation.

use clap::{Args, Parser, Subcommand, ValueEnum};

/// MLLP for HL7 v2: send, receive, probe and soak-test HL7 links.
#[derive(Debug, Parser)]
#[command(name = "mllp", version, about, long_about = None, after_help = crate::exit::help(crate::exit::For::All))]
#[command(propagate_version = true)]
pub struct Cli {
    #[command(flatten)]
    pub global: GlobalArgs,
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Clone, Args)]
pub struct GlobalArgs {
    /// More detail on stderr (repeat for more).
    #[arg(short, long, global = true, action = clap::ArgAction::Count)]
    pub verbose: u8,
    /// Only errors and the final summary on stderr.
    #[arg(short, long, global = true, conflicts_with = "verbose")]
    pub quiet: bool,
    /// When to colour output.
    #[arg(long, global = true, value_enum, default_value_t = ColorChoice::Auto)]
    pub color: ColorChoice,
    /// Format of diagnostics on stderr.
    #[arg(long, global = true, value_enum, default_value_t = LogFormat::Human)]
    pub log_format: LogFormat,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ColorChoice {
    Auto,
    Always,
    Never,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum LogFormat {
    Human,
    Json,
}

/// The `--log-format` a command line asks for, read without clap: a line clap refuses still says
/// how its error should be written. The last one wins, as in clap; `--` ends the flags.
pub fn log_format_in(args: impl IntoIterator<Item = std::ffi::OsString>) -> Option<LogFormat> {
    let mut found = None;
    let mut args = args.into_iter().skip(1);
    while let Some(arg) = args.next() {
        let arg = arg.to_string_lossy().into_owned();
        let value = match arg.as_str() {
            "--" => break,
            "--log-format" => args.next().map(|v| v.to_string_lossy().into_owned()),
            _ => arg.strip_prefix("--log-format=").map(str::to_owned),
        };
        if let Some(value) = value {
            found = LogFormat::from_str(&value, false).ok();
        }
    }
    found
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Send HL7 files to an MLLP endpoint and account for every message.
    Send(Box<crate::send::SendArgs>),
    /// Receive HL7 over MLLP, commit each message to a sink, then acknowledge it.
    Listen(crate::listen::ListenArgs),
    /// Find out why an endpoint will not talk: resolve, connect, TLS, and optionally one message.
    Probe(crate::probe::ProbeArgs),
    /// Hold a link under load, watch it fail and heal, and prove nothing was lost.
    Soak(Box<crate::soak::SoakArgs>),
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

    #[test]
    fn the_log_format_is_found_before_parsing() {
        let find = |line: &str| log_format_in(line.split(' ').map(Into::into));
        assert_eq!(
            find("mllp --log-format json send --port x"),
            Some(LogFormat::Json)
        );
        assert_eq!(find("mllp send --log-format=json"), Some(LogFormat::Json));
        assert_eq!(
            find("mllp --log-format json --log-format human probe"),
            Some(LogFormat::Human)
        );
        assert_eq!(find("mllp --log-format xml probe"), None);
        assert_eq!(find("mllp send -- --log-format json"), None);
        assert_eq!(find("mllp probe"), None);
    }
}
