//! `mllp relay`'s manual: what it does, its answer table, examples, exit codes and files.

use super::{Manual, COMMON_ENVIRONMENT};

pub const RELAY: Manual = Manual {
    description: "Stands between a sending system and an engine: receives on --listen with \
listen's guards and TLS, forwards to --to with send's connection and TLS flags, and never \
claims more than it knows. Pass-through (the default) answers each message with the \
upstream's own answers, byte for byte; --queue commits each message to an SQLite queue, \
answers it, and forwards it in arrival order while the upstream comes and goes. The first \
line on stderr is the bound address; the upstream link's state changes follow, and one line \
for each failure with its cause, class, hint and next attempt. The upstream link reconnects for \
as long as the relay runs, whatever the failure's class, its delays capped by --backoff-max (5s \
by default). What waits for the upstream counts in --max-buffered. --mirror copies every \
message to a shadow engine as well and compares its answers with the upstream's, without ever \
delaying or changing what the downstream peer is told.",
    notes: ANSWERS,
    examples: &[
        (
            "mllp relay --listen 2575 --to engine:6661",
            "pass-through, answers as the engine gave them",
        ),
        (
            "mllp relay --listen 2575 --to engine:6661 --tls --ca ca.pem",
            "",
        ),
        (
            "mllp relay --listen 2575 --to engine --queue q.db",
            "store and forward",
        ),
        (
            "mllp relay --listen 2575 --to engine-a --to engine-b --failback-after 10m",
            "failover upstreams, back to engine-a after 10 minutes away",
        ),
        (
            "mllp relay --listen 2575 --to engine --record trace.db",
            "keep a trace to share",
        ),
        (
            "mllp relay --listen 2575 --to old-engine --mirror new-engine:6661",
            "try a new engine on live traffic; differences as mirror_diff lines",
        ),
    ],
    exit: crate::exit::For::Listen,
    environment: COMMON_ENVIRONMENT,
    files: &[
        (
            "--queue FILE, --record FILE",
            "table `queue`, one row per message with its upstream fate (WAL mode)",
        ),
        (
            "--tls-cert, --tls-key, --client-ca, --ca, --cert, --key FILE",
            "PEM certificates and keys for both sides",
        ),
    ],
};

const ANSWERS: &str = "\
What the downstream peer is told (pass-through):
  upstream answered           its answers, byte for byte (CA then AA in enhanced mode)
  only a CA came              the CA, then the connection is closed
  written, no answer          nothing; the connection is closed (the fate is unknown)
  not written within --connect-timeout
                              AE (CE under MSH-15 AL), MSA-3 says upstream-unavailable
With --queue: the answer of the MSH-15 table once the row is on disk; AE when --max-queue
rows are pending (nothing kept). Upstream negatives are kept as dead letters.";
