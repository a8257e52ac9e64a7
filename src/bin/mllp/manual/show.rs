//! `mllp show`'s manual: what it shows, examples and exit codes.

use super::{Manual, COMMON_ENVIRONMENT};

pub const SHOW: Manual = Manual {
    description: "Shows what HL7 messages hold, read from files, directories, stdin (plain or \
MLLP-framed, batches split into their messages) or a store (--from-db: listen --sqlite or a relay's; --postgres: \
listen --postgres). Without --get, each \
message is an outline: its source, MSH-9 and MSH-10, then one line per field that has a value, \
with the field's path (PID-5, OBX(2)-5) and its name where the message's version defines it; -v \
adds each component under its field. With --get, one line per message: the source and the value \
at each path, tab-separated, for grep, cut and awk. --json writes one object per message \
instead.

Values are text: escape sequences decoded (--raw leaves them as written) and the bytes read in \
the character set MSH-18 names (--charset chooses another). Bytes that set cannot decode are \
shown as \\Xhh\\ and warned about once at the end. A message that is not well formed is shown \
as far as it goes. Nothing is sent anywhere; memory stays bounded whatever the input's size.",
    notes: "Paths: SEG[(n)]-F[(r)][.C[.S]], numbered as the HL7 tables number them (MSH-1 is the \
field separator, MSH-2 the encoding characters); PID-5 is the first repetition of PID-5 as \
written; `*` gives every occurrence: OBX(*)-5, PID-3(*).1. Filters: PATH=VALUE, PATH!=VALUE, \
PATH~REGEX, or PATH alone (not empty); repeated, all must hold. See docs/hl7.md.",
    examples: &[
        (
            "mllp show adt.hl7",
            "each message as an outline of its fields",
        ),
        ("mllp show -v adt.hl7", "with each field's components"),
        (
            "mllp show adt/ -r --get PID-3.1 --get PID-5",
            "one line per message: source, MRN, name",
        ),
        (
            "mllp show --from-db rx.db --where PID-3.1=100002",
            "the messages of one patient in a store",
        ),
        (
            "mllp show labs.hl7 --get 'OBX(*)-5' --json",
            "every observation value, as JSON",
        ),
        (
            "mllp show latin1.hl7 --charset 8859/1",
            "read text as ISO 8859-1 whatever MSH-18 says",
        ),
    ],
    exit: crate::exit::For::Show,
    environment: COMMON_ENVIRONMENT,
    files: &[
        (
            "--from-db FILE",
            "a listen --sqlite or relay store, read only",
        ),
        (
            "--postgres URL",
            "a listen --postgres store, read only (SELECT on table messages)",
        ),
    ],
};
