//! The manuals of `mllp completions` and `mllp man`.

use super::Manual;

pub const COMPLETIONS: Manual = Manual {
    description: "Prints a completion script for SHELL on stdout: flags, their values and file \
names complete after `mllp` and each subcommand.",
    notes: "",
    examples: &[
        ("mllp completions bash > /etc/bash_completion.d/mllp", ""),
        ("mllp completions zsh > ~/.zfunc/_mllp", ""),
        (
            "mllp completions fish > ~/.config/fish/completions/mllp.fish",
            "",
        ),
    ],
    exit: crate::exit::For::Completions,
    environment: &[],
    files: &[],
};

pub const MAN: Manual = Manual {
    description: "Prints the mllp(1) man page on stdout, or writes it and one page per \
subcommand (mllp-send(1), mllp-listen(1), ...) into a directory.",
    notes: "",
    examples: &[
        ("mllp man | man -l -", "read it now"),
        (
            "mllp man --dir /usr/local/share/man/man1",
            "install every page",
        ),
    ],
    exit: crate::exit::For::Man,
    environment: &[],
    files: &[("DIR/mllp.1, DIR/mllp-SUBCOMMAND.1", "written with --dir")],
};
