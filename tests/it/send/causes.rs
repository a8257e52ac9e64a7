//! The `cause` every record carries is one of the stable, public cause names.

use super::{path, send, to, write};
use crate::support::peer::{Behaviour, Peer, Script};
use crate::support::send_proc::messages;

/// The stable cause names; every `cause` a user sees is one of them (or a refusal reason).
const KNOWN_CAUSES: &[&str] = &[
    "dns-not-found",
    "dns-failed",
    "permission-denied",
    "connection-refused",
    "connection-reset",
    "connect-timeout",
    "host-unreachable",
    "tls-verify",
    "tls-handshake",
    "framing-fatal",
    "dead-peer",
    "ack-timeout",
    "peer-closed",
    "in-flight-orphan",
    "fifo-unsafe",
    "connection-lost",
    "unsolicited-ack",
    "network-error",
    "idle-timeout",
    "max-connections",
    "frame-timeout",
    "per-peer-limit",
    "buffer-budget",
    "proxy-header",
    "proxy-untrusted",
    "shutdown",
];

#[tokio::test(flavor = "multi_thread")]
async fn every_cause_in_records_is_a_known_cause() {
    // Orphans after a reset, resent never-written messages, a refused reconnect: all causes
    // must be one of the stable names.
    let peer = Peer::start(Script::then(
        vec![Behaviour::ResetAfter(1)],
        Behaviour::CloseAtOnce,
    ))
    .await;
    let dir = tempfile::tempdir().unwrap();
    let file = write(dir.path(), "adt.hl7", &messages("C", 4));
    for correlate in ["fifo", "control-id"] {
        let run = send(&to(
            peer.port(),
            &[
                "--json",
                "--correlate",
                correlate,
                "--max-retries",
                "1",
                &path(&file),
            ],
        ))
        .await;
        let messages = run.messages();
        assert_eq!(messages.len(), 4, "{}", run.stdout);
        for r in &messages {
            assert!(r.as_object().unwrap().contains_key("cause_detail"), "{r}");
            if let Some(cause) = r["cause"].as_str() {
                assert!(KNOWN_CAUSES.contains(&cause), "not a known cause: {r}");
            }
        }
    }
}
