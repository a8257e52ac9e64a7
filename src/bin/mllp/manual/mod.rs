//! Each command's manual beyond its flags: description, examples, exit status, environment and
//! files, one module per command. `--help` shows the examples and exit codes after the flags;
//! the man pages give every part its own section (see `generate`).

mod check;
mod generated;
mod listen;
mod probe;
mod relay;
mod send;
mod show;
mod soak;

pub use check::CHECK;
pub use generated::{COMPLETIONS, MAN};
pub use listen::LISTEN;
pub use probe::PROBE;
pub use relay::RELAY;
pub use send::SEND;
pub use show::SHOW;
pub use soak::SOAK;

/// One command's manual. Text is plain: paragraphs separated by a blank line, and lines that
/// start with two spaces are kept as they are (tables, indented notes).
pub struct Manual {
    /// What the command does, beyond its one-line about.
    pub description: &'static str,
    /// Shown after the examples in `--help` (not `-h`), and in the man page's DESCRIPTION.
    pub notes: &'static str,
    /// `(command line, what it does)`; the second may be empty.
    pub examples: &'static [(&'static str, &'static str)],
    /// Whose exit codes it explains (the text itself is in `exit`, one place for all).
    pub exit: crate::exit::For,
    /// Variables read beyond those a flag names with `env` (which clap lists itself).
    pub environment: &'static [(&'static str, &'static str)],
    /// Files read or written.
    pub files: &'static [(&'static str, &'static str)],
}

/// Read by every command that resolves names or colours its output.
pub const COMMON_ENVIRONMENT: &[(&str, &str)] = &[
    (
        "MLLP_HOSTS_FILE",
        "A hosts-format file (ADDRESS NAME... lines) that replaces name resolution: names it \
         does not list are not found, and a line `fail NAME...` makes those names fail as a \
         resolver error.",
    ),
    ("NO_COLOR", "When set, --color auto does not colour."),
];

/// Longest example command that still gets its explanation on the same line.
const EXAMPLE_INLINE: usize = 46;

impl Manual {
    /// Examples and exit codes, for `-h`.
    pub fn short_after_help(&self) -> String {
        let mut text = self.examples_text();
        text.push('\n');
        text.push_str(&self.exit_text());
        text
    }

    /// Examples, notes and exit codes, for `--help`.
    pub fn long_after_help(&self) -> String {
        let mut text = self.examples_text();
        if !self.notes.is_empty() {
            text.push('\n');
            text.push_str(self.notes);
            text.push('\n');
        }
        text.push('\n');
        text.push_str(&self.exit_text());
        text
    }

    fn examples_text(&self) -> String {
        let column = self
            .examples
            .iter()
            .map(|(command, _)| command.len())
            .filter(|&len| len <= EXAMPLE_INLINE)
            .max()
            .unwrap_or(0)
            + 5;
        let mut text = String::from("Examples:\n");
        for (command, what) in self.examples {
            let line = format!("  {command}");
            if what.is_empty() || command.len() > EXAMPLE_INLINE {
                text.push_str(&line);
            } else {
                text.push_str(&format!("{line:column$}{what}"));
            }
            text.push('\n');
        }
        text
    }

    fn exit_text(&self) -> String {
        crate::exit::help(self.exit)
    }
}

/// The top-level page.
pub const MLLP: Manual = Manual {
    description: "mllp speaks MLLP, the framing that carries HL7 v2 messages over TCP between \
hospital systems. `mllp send` pushes HL7 files to an interface engine and accounts for every \
message; `mllp listen` is a receiver that commits each message before acknowledging it; `mllp \
probe` finds out why an endpoint will not talk; `mllp soak` holds a link under load, with \
injected faults, and proves nothing was lost.

Data goes to stdout, diagnostics to stderr. Every command takes --log-format json for \
machine-readable diagnostics.",
    notes: "",
    examples: &[
        (
            "mllp send adt/*.hl7 --host engine.example",
            "send, one line per message",
        ),
        ("mllp listen --port 0", "receive, print each message"),
        (
            "mllp probe engine.example:6661 --send",
            "diagnose an endpoint",
        ),
        ("mllp soak --duration 10s", "load a link, with a report"),
        ("mllp send -h", "each command's flags, one line each"),
    ],
    exit: crate::exit::For::All,
    environment: COMMON_ENVIRONMENT,
    files: &[
        (
            "send --failed-out DIR",
            "one file per message that did not end accepted",
        ),
        (
            "listen --out-dir DIR, --sqlite FILE",
            "the messages received",
        ),
        ("soak --report FILE", "the run's report, JSON"),
    ],
};
