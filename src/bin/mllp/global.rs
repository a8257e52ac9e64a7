//! The flags every subcommand takes and the help headings flags are filed under: a leaf that
//! each command's arguments import without reaching back up to the subcommand list.

use clap::{ArgAction, Args, ValueEnum};

/// The headings flags are grouped under in `--help` and in the man pages' OPTIONS, in one place
/// so every subcommand files its flags the same way. A flag with no heading of its own would
/// land under clap's "Options", which no command uses.
pub mod heading {
    /// What to send or read, and how it is split into messages.
    pub const INPUT: &str = "Input";
    /// The endpoint, timeouts, liveness and reconnecting.
    pub const CONNECTION: &str = "Connection";
    /// TLS on a client link, or served by `listen`.
    pub const TLS: &str = "TLS";
    /// `listen --dial`: TLS to the engine it connects to (what it serves takes `TLS`).
    pub const DIAL_TLS: &str = "Dial TLS";
    /// `relay`: TLS served to the downstream peers (its upstream link takes `TLS`).
    pub const SERVED_TLS: &str = "Downstream TLS";
    /// `relay`: the shadow engine every message is copied to, and how answers are compared.
    pub const MIRROR: &str = "Mirror";
    /// How many messages are in flight, how fast, and how ACKs are matched.
    pub const FLOW: &str = "Flow";
    /// What is printed or written, and where.
    pub const OUTPUT: &str = "Output";
    /// `listen`: where each message is committed before its ACK.
    pub const SINK: &str = "Sink";
    /// `listen`: what each message is answered, and de-duplication.
    pub const ANSWER: &str = "Answer";
    /// `listen` as a misbehaving peer for testing senders.
    pub const TEST_DOUBLE: &str = "Test double";
    /// Framing tolerance and the guards on what peers may use.
    pub const LIMITS: &str = "Limits";
    /// `probe`: what is exchanged once connected.
    pub const PROBE: &str = "Probe";
    /// `soak`: the load and the faults injected.
    pub const LOAD: &str = "Load";
    /// `soak`: the limits that decide exit 6.
    pub const THRESHOLDS: &str = "Thresholds";
    /// Flags every subcommand takes.
    pub const GLOBAL: &str = "Global";

    /// Every heading, in the order the man pages know them.
    pub const ALL: &[&str] = &[
        INPUT,
        CONNECTION,
        TLS,
        DIAL_TLS,
        SERVED_TLS,
        MIRROR,
        FLOW,
        OUTPUT,
        SINK,
        ANSWER,
        TEST_DOUBLE,
        LIMITS,
        PROBE,
        LOAD,
        THRESHOLDS,
        GLOBAL,
    ];
}

/// Flags every subcommand takes, listed last under their own heading. `-h`/`--help` and
/// `-V`/`--version` are declared here (clap's own would sit under "Options", apart).
#[derive(Debug, Clone, Args)]
#[command(next_help_heading = heading::GLOBAL)]
pub struct GlobalArgs {
    /// More detail on stderr (repeat for more).
    #[arg(short, long, global = true, action = ArgAction::Count)]
    pub verbose: u8,
    /// Only errors and the final summary on stderr.
    #[arg(short, long, global = true, conflicts_with = "verbose")]
    pub quiet: bool,
    /// When to colour output: auto, always, never.
    #[arg(long, global = true, value_name = "WHEN", value_enum, hide_possible_values = true, default_value_t = ColorChoice::Auto)]
    pub color: ColorChoice,
    /// Diagnostics on stderr as human or json lines.
    #[arg(long, global = true, value_name = "FORMAT", value_enum, hide_possible_values = true, default_value_t = LogFormat::Human)]
    pub log_format: LogFormat,
    /// Print help (-h: one line per flag; --help: more detail).
    #[arg(short, long, global = true, action = ArgAction::Help)]
    help: Option<bool>,
    /// Print the version.
    #[arg(short = 'V', long, global = true, action = ArgAction::Version)]
    version: Option<bool>,
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
/// `listen --json` asks for JSON too.
pub fn log_format_in(args: impl IntoIterator<Item = std::ffi::OsString>) -> Option<LogFormat> {
    let mut found = None;
    let (mut command, mut listen) = (false, false);
    let mut args = args.into_iter().skip(1);
    while let Some(arg) = args.next() {
        let arg = arg.to_string_lossy().into_owned();
        // The first word that is not a flag names the subcommand (`--color auto` aside).
        if !command && !arg.starts_with('-') {
            command = true;
            listen = arg == "listen";
        }
        let value = match arg.as_str() {
            "--" => break,
            "--log-format" => args.next().map(|v| v.to_string_lossy().into_owned()),
            "--json" if listen => Some("json".to_owned()),
            _ => arg.strip_prefix("--log-format=").map(str::to_owned),
        };
        if let Some(value) = value {
            found = LogFormat::from_str(&value, false).ok();
        }
    }
    found
}

#[cfg(test)]
mod tests {
    use super::*;

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
        assert_eq!(find("mllp listen --json --port x"), Some(LogFormat::Json));
        assert_eq!(find("mllp send --json --port x"), None);
        assert_eq!(find("mllp send --host listen --json"), None);
    }
}
