//! `mllp check`'s manual: the rules, the profile, examples and exit codes.

use super::{Manual, COMMON_ENVIRONMENT};

pub const CHECK: Manual = Manual {
    description: "Checks whether HL7 messages are well formed, read from files, directories, \
stdin (plain or MLLP-framed; a batch is checked whole, its envelope too) or a store (--from-db, \
--postgres). Always: MSH first with valid MSH-1 and MSH-2, segment IDs of three upper-case letters or \
digits, MSH-7 a valid timestamp, MSH-9 with a message code and trigger, MSH-10 present, MSH-11 \
P, D or T, MSH-12 a known version, the timestamp, date, set ID and number fields of the common \
segments valid, OBX-5 a number where OBX-2 is NM, batch envelopes balanced with the right \
BTS-1 and FTS-1 counts, and no control byte but the segment terminator. --profile adds a site's \
own rules: required paths, allowed values (a list or a pattern), longest values, and the \
segments each message type must have.

Each finding is one line: the message (file#n, and /m for the m-th message of a batch), the \
path, a stable code (HL7_...), error or warning, and what is wrong. Values are payload: they \
are shown only with -v. --json writes one object per finding, then a summary.",
    notes: "Codes: HL7_MSH_NOT_FIRST, HL7_DELIMITERS_INVALID, HL7_SEGMENT_ID_INVALID, \
HL7_REQUIRED_FIELD_MISSING, HL7_TIMESTAMP_INVALID, HL7_DATE_INVALID, HL7_MESSAGE_TYPE_INVALID, \
HL7_PROCESSING_ID_INVALID, HL7_VERSION_UNKNOWN, HL7_SET_ID_INVALID, HL7_NUMBER_INVALID, \
HL7_BATCH_UNBALANCED, HL7_CONTROL_BYTE, HL7_CHARSET_UNKNOWN and HL7_TEXT_NOT_IN_CHARSET (warnings), and with a profile \
HL7_PROFILE_FIELD_MISSING, HL7_PROFILE_VALUE_NOT_ALLOWED, HL7_PROFILE_VALUE_TOO_LONG, \
HL7_PROFILE_SEGMENT_MISSING. See docs/hl7.md.",
    examples: &[
        (
            "mllp check adt/*.hl7",
            "one line per finding; exit 1 on an error",
        ),
        (
            "mllp check -v adt.hl7",
            "with the value each finding is about",
        ),
        (
            "mllp check inbound/ -r --profile site.toml",
            "the standard's rules and the site's",
        ),
        (
            "mllp check --from-db rx.db --where MSH-9.1=ORU --json",
            "the results in a store, as JSON",
        ),
        (
            "mllp send adt.hl7 --check-hl7 --host engine.example",
            "check before sending; refuse on an error",
        ),
    ],
    exit: crate::exit::For::Check,
    environment: COMMON_ENVIRONMENT,
    files: &[
        (
            "--profile FILE",
            "a site's rules, TOML (or JSON by a .json name)",
        ),
        (
            "--from-db FILE",
            "a listen --sqlite or relay store, read only",
        ),
    ],
};
