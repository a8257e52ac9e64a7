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
            "mllp send *.hl7 --host engine --failed-out retry1",
            "keep every message not accepted",
        ),
        (
            "mllp send retry1 -r --host engine --failed-out retry2",
            "... send only those, a new folder each run",
        ),
        (
            "mllp send adt/ -r --host engine-a --host engine-b --failover-after 3",
            "move to engine-b after 3 failed connects to engine-a",
        ),
        (
            "mllp send --from-db q.db --status negative --host engine",
            "a relay's dead letters, once more",
        ),
    ],
    exit: crate::exit::For::Send,
    environment: COMMON_ENVIRONMENT,
    files: &[
        (
            "--failed-out DIR",
            "one file per message that did not end accepted, named so that they sort in send \
             order; absent or empty, and none of the inputs",
        ),
        (
            "--ca, --cert, --key FILE",
            "PEM certificates and key for TLS",
        ),
    ],
};

const RESEND_POLICY: &str = "\
Correlation and resend policy (what each mode risks):
  --correlate control-id (default): an ACK counts only when its MSA-2
     names the message's MSH-10 and it came after the message was
     written. Messages sharing an MSH-10 go one at a time, in order.
     Every pending message is written again on a new connection; the
     risk is a duplicate at the receiver (most engines, and
     `listen --dedupe`, de-duplicate on MSH-10).
  --correlate fifo: for peers whose MSA-2 cannot be trusted; each reply
     answers the oldest message. Input whose MSH-16 asks for an
     application ACK (AL, ER, SU) is refused, and a reply with nothing
     awaiting one ends the run (unsolicited-ack). After a reconnect,
     messages never written go first, in input order (no risk); written
     but unacknowledged ones are unknown-fate and NOT written again,
     unless --at-least-once (risk: a duplicate).
--max-resends bounds how often one message is written again; a message
never written, or written behind the frame after which the peer closed,
spends none of it, and attempts counts real writes. A peer that drops
pipelined frames or closes after each answer is noticed by itself: one
message at a time from then on (warning MLLP_PEER_NO_PIPELINING). A
message the peer drops the connection on goes alone on the next one;
after --max-poison-closes such closes it ends unknown-fate (poison), is
not written again, and the rest goes on. A written message is never
reported never-delivered: resending one might duplicate it.
After a CA, MSH-16 decides: absent, empty or NE make the CA final
(accepted); AL and SU wait --app-ack-timeout for the application ACK
(none: committed-only); ER counts silence as success. Every message
still ends in exactly one reported outcome: a message written again gets
its last write's.";
