//! `mllp listen`'s manual: what it does, examples, exit codes and files.

use super::{Manual, COMMON_ENVIRONMENT};

pub const LISTEN: Manual = Manual {
    description: "Receives HL7 v2 over MLLP, commits each message to a sink (stdout, one file \
per message, a command, or an SQLite table), and only then acknowledges it: a positive ACK \
always means the message was kept, a negative one that nothing was kept. The first line on \
stderr is always the bound address (`listening on 127.0.0.1:PORT`); each message, connection \
and warning follows as a line (or a JSON object with --json), then the counters on exit. Every \
line starts with its time (RFC 3339, UTC); every JSON object has it as `time`.

Test-double flags make it a misbehaving peer for exercising senders: late, negative, rejected \
or missing ACKs, and dropped connections.",
    notes: "",
    examples: &[
        (
            "mllp listen --port 0",
            "print each message on stdout, ACK after the flush",
        ),
        (
            "mllp listen --json > messages.ndjson",
            "JSON messages on stdout, JSON events on stderr",
        ),
        (
            "mllp listen --out-dir inbox/",
            "one fsynced .hl7 file per message before its ACK",
        ),
        (
            "mllp listen --exec './store.sh'",
            "exit 0 -> AA, 2 -> AR, other -> AE",
        ),
        (
            "mllp listen --ack none > capture.hl7",
            "a pure sink: commit, never answer",
        ),
        (
            "mllp listen --sqlite rx.db --dedupe",
            "rows in SQLite, repeats answered, not stored",
        ),
        (
            "mllp listen --tls-cert s.pem --tls-key s.key --client-ca ca.pem --client-auth must",
            "",
        ),
        (
            "mllp listen --nack-rate 0.1 --ack-delay 200ms --seed 7",
            "a misbehaving peer",
        ),
    ],
    exit: crate::exit::For::Listen,
    environment: COMMON_ENVIRONMENT,
    files: &[
        (
            "--out-dir DIR",
            "one .hl7 file per message, holding exactly the de-framed bytes",
        ),
        (
            "--sqlite FILE",
            "table `messages`, one row per message (WAL mode)",
        ),
        (
            "--tls-cert, --tls-key, --client-ca FILE",
            "PEM certificates and key for TLS",
        ),
    ],
};
