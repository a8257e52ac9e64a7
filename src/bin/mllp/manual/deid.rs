//! `mllp deid`'s manual: what it replaces and keeps, the key, examples and exit codes.

use super::Manual;

pub const DEID: Manual = Manual {
    description: "Writes the same messages with their patients replaced, for taking \
production traffic into a test system. The standard policy replaces the identifying fields of \
the common segments: names, identifiers, addresses, phone numbers, dates of birth and death, \
admission and discharge dates, NTE text and OBX-5 where OBX-2 is TX, FT or ST, in PID, PD1, \
NK1, PV1, GT1, IN1, IN2 and MRG. Everything else stays byte for byte: delimiters, segment \
order and ends, MSH (MSH-7, MSH-9 and MSH-10 included), codes and results.

Each value is replaced by one of the same shape (digits for digits, letters for letters in \
their case, the length kept) or, for names, by a name from a built-in list of fictitious \
names, derived from an HMAC-SHA256 of the original under the key: the same original gets the \
same replacement in every message, file and run with the same key, so a patient stays one \
person from admission to discharge. Dates move earlier by 1 to 365 days, one offset per \
patient (from the patient's first identifier in PID-3), so intervals stay true.

The output is one file per input under --out DIR, named as the input (the layout of a \
directory given with --recursive kept), each written whole or not at all; or with --out - the \
messages on stdout, ready for `mllp send`. The report on stderr counts replacements per path, \
never a value.",
    notes: "Policy file (--policy, TOML, or JSON for a .json name):
  standard = true             # start from the standard rules (false: from none)
  [paths]
  \"ZPI-3\" = \"hash\"            # a site's own segment
  \"PID-11.3\" = \"keep\"         # keep the city
  \"EVN-2\" = \"shift-date\"      # move event times too
  \"OBX-5\" = { method = \"hash\", when = { \"OBX-2\" = [\"TX\", \"FT\", \"ST\", \"CE\"] } }

A path left without a segment occurrence or repetition means every one (PID-11.3 is the city \
of every address). Methods: hash, name, shift-date, blank, keep. Where several rules take in a \
value, the deepest decides. Free text outside the policy (a Z-segment, a note in an unusual \
field) is not replaced: look before sharing.",
    examples: &[
        (
            "mllp deid --new-key site.key",
            "once: make the key, keep it safe",
        ),
        (
            "mllp deid day/ -r --key-file site.key --out day-deid/",
            "a directory, its layout kept",
        ),
        (
            "mllp deid rx.db --key-file site.key --out - | mllp send --host test-engine",
            "",
        ),
        (
            "mllp deid adt.hl7 --key-file site.key --policy site.toml --out out/",
            "",
        ),
    ],
    exit: crate::exit::For::Deid,
    environment: &[(
        "NO_COLOR",
        "When set, --color auto does not colour warnings.",
    )],
    files: &[
        ("--key-file FILE", "the key: 64 hexadecimal digits"),
        ("--policy FILE", "a site's rules, TOML or JSON"),
        (
            "--out DIR",
            "one file per input; DIR/.NAME.partial while it is written",
        ),
    ],
};
