//! `mllp send`'s manual: what it does, its resend policy, examples, exit codes and files.

use super::{Manual, COMMON_ENVIRONMENT};

pub const SEND: Manual = Manual {
    description: "Reads every input and checks it before the first byte is sent: a file may hold \
one message, several (each starts at an MSH segment), a batch, or already framed MLLP bytes. \
Each message then ends in exactly one reported outcome: accepted, negative, committed-only, \
unknown-fate, never-delivered or refused. One line per message goes to stdout (or one NDJSON \
record with --json), a summary to stderr.",
    notes: RESEND_POLICY,
    examples: &[
        (
            "mllp send adt/*.hl7 --host engine.example",
            "one line per message, summary on stderr",
        ),
        (
            "mllp send adt/ -r --host 10.0.0.7:6661 -v",
            "a directory in natural order; each step",
        ),
        (
            "mllp send adt/ -r --dry-run",
            "check and list what would be sent",
        ),
        (
            "mllp send inbox --recursive --host engine --json",
            "NDJSON records, then a summary",
        ),
        (
            "cat batch.hl7 | mllp send --host engine --batch",
            "stdin, a batch kept as one frame",
        ),
        (
            "mllp send *.hl7 --host engine --failed-out retry/",
            "keep every message not accepted",
        ),
        (
            "mllp send retry --recursive --host engine",
            "... and send only those again",
        ),
    ],
    exit: crate::exit::For::Send,
    environment: COMMON_ENVIRONMENT,
    files: &[
        (
            "--failed-out DIR",
            "one file per message that did not end accepted, named so that they sort in send order",
        ),
        (
            "--ca, --cert, --key FILE",
            "PEM certificates and key for TLS",
        ),
    ],
};

const RESEND_POLICY: &str = "\
Resend policy (what each mode risks):
  --correlate fifo (default): after a reconnect, messages never written are resent (no risk).
     Messages written but not acknowledged (in-flight-orphan, ack-timeout) are reported as
     unknown-fate and NOT resent: the risk is a message of unknown fate, which you must check.
     --at-least-once resends them too: the risk becomes a duplicate at the receiver.
  --correlate control-id: every pending message is written again on the new connection;
     the risk is a duplicate at the receiver (most engines, and `listen --dedupe`,
     de-duplicate on MSH-10).
Every message still ends in exactly one reported outcome: a resent message's is its last try's.";
