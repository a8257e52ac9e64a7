//! `mllp diff`'s manual: what it compares and how, examples and exit codes.

use super::Manual;

pub const DIFF: Manual = Manual {
    description: "Compares two sets of HL7 messages, such as what two engines made of the same \
input during a migration. Each side is a file, a glob, a directory (walked), a listen --sqlite \
or relay store, or `-` for stdin. Messages are paired by their key (MSH-10 unless --key says \
otherwise) and compared field by field: escape sequences decoded, trailing empty fields, \
repetitions, components and subcomponents equal to absent ones, segments paired by name and \
occurrence, --ignore'd paths and segments left out.

Each pair that differs is written with its key, both messages and each path where they \
differ with both values (--no-values leaves the values out, and of the key all but MSH-9 \
and MSH-10); a message with no partner on the \
other side, and a key seen twice on one side, get a line too. The counts follow on stderr, or \
as the last --json record: pairs the same, different, only in A, only in B, keys seen twice.

The smaller side is held as keys in memory and its messages in a temporary file; the other is \
read once, as it comes. Memory grows with the smaller side's keys, not with the messages.",
    notes: "Values are shown because a comparison asks for them: they are patient data. Use \
--no-values where the output goes to a log.",
    examples: &[
        (
            "mllp diff old-engine/ new-engine/",
            "pair by MSH-10, show what differs",
        ),
        (
            "mllp diff old.db new.db --ignore MSH-7 --ignore MSH-10 --key PID-3.1 --key MSH-9",
            "",
        ),
        (
            "mllp diff a.hl7 b.hl7 --ignore ZXX --no-values",
            "for a log",
        ),
        (
            "mllp diff a.hl7 b.hl7 --json | jq .",
            "one record per finding",
        ),
    ],
    exit: crate::exit::For::Diff,
    environment: &[(
        "TMPDIR",
        "Where the smaller side's messages are held while the run lasts (in a file already \
         unlinked, gone when the run ends).",
    )],
    files: &[("A, B", "the two sides: files, directories or stores")],
};
