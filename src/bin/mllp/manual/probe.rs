//! `mllp probe`'s manual: what it does, what its verdicts mean, examples and exit codes.

use super::{Manual, COMMON_ENVIRONMENT};

pub const PROBE: Manual = Manual {
    description: "Runs each phase of reaching an endpoint and times it: name resolution, TCP \
connect, the TLS handshake (version, cipher, the peer certificate's subject, names and expiry), \
and with --send one message and its ACK. It ends with a verdict, ok, transient or permanent, with \
the cause and a hint, and recognises peers that are not MLLP receivers: an HTTP server, a TLS \
port spoken to in plain, an SSH banner.

Without --send, probe only listens for --banner-wait after connecting: an MLLP receiver stays \
silent until it is sent a message, so silence proves the port is reachable, not that MLLP is \
spoken there. Use --send for that.",
    notes:
        "Verdicts: ok (exit 0; 1 when the ACK was negative), transient (exit 4; 3 when a message \
was written and no ACK came), permanent (exit 5).",
    examples: &[
        (
            "mllp probe engine.example",
            "resolve, connect, listen 500 ms for a banner",
        ),
        (
            "mllp probe engine.example:6661 --send",
            "also send a synthetic ADT^A01 (MSH-11 = D)",
        ),
        (
            "mllp probe 10.0.0.7 --port 6661 --tls --ca ca.pem --send",
            "",
        ),
        (
            "mllp probe [fd00::7]:2575 --message adt.hl7",
            "send the first message of adt.hl7",
        ),
        (
            "mllp probe engine.example --send --count 10 --interval 1s",
            "ping style, then statistics",
        ),
        ("mllp probe engine.example --json", "one JSON object"),
        (
            "mllp probe --host engine-a.example --host engine-b.example --send",
            "each host in turn, then which answer",
        ),
    ],
    exit: crate::exit::For::Probe,
    environment: COMMON_ENVIRONMENT,
    files: &[
        (
            "--message FILE",
            "the message to send; its first message is used",
        ),
        (
            "--ca, --cert, --key FILE",
            "PEM certificates and key for TLS",
        ),
    ],
};
