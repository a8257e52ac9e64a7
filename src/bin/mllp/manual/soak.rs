//! `mllp soak`'s manual: what it does, examples, exit codes and files.

use super::{Manual, COMMON_ENVIRONMENT};

pub const SOAK: Manual = Manual {
    description: "Holds one or more links under load for as long as asked, and proves that \
nothing was lost: every generated message ends in exactly one reported outcome, and the \
accounting check (generated = the sum of the outcomes) closes. Without --host an embedded \
listener on 127.0.0.1 takes the load, so `mllp soak --duration 10s` runs on a fresh machine. \
A live view on stderr shows each connection, throughput and latency; the report (--report, \
--json) holds totals, a mergeable latency histogram and the thresholds' verdict.

Latency is measured from the intended send time when --rate is set, so a stalled peer cannot \
hide its stall. --chaos lets the embedded peer (or a proxy in front of a real one) reset \
connections, stall and answer slowly, to watch reconnect and drain at work.",
    notes: "",
    examples: &[
        (
            "mllp soak --duration 10s",
            "embedded listener, live view, report",
        ),
        (
            "mllp soak --connections 4 --rate 2000 --duration 1m --json > run.json",
            "",
        ),
        (
            "mllp soak --chaos reset=0.01,delay=0.1:50ms,drop=0.0005:3s --duration 5m",
            "",
        ),
        (
            "mllp soak --host engine.test --template adt.hl7 --rate 50 --duration 8h",
            "",
        ),
        (
            "mllp soak --host engine.test --allow-synthetic --max-p99 200ms",
            "",
        ),
        (
            "mllp soak --merge a.json b.json",
            "combine reports from several machines",
        ),
    ],
    exit: crate::exit::For::Soak,
    environment: COMMON_ENVIRONMENT,
    files: &[
        (
            "--report FILE",
            "the report, JSON; --merge reads such files back",
        ),
        (
            "--template FILE",
            "message templates; the first message of each is used",
        ),
        (
            "--out-dir DIR",
            "the embedded listener's committed messages, one file each",
        ),
    ],
};
