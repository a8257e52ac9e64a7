//! The peers' clients into `mllp listen --out-dir`: python-hl7's `mllp_send` and asyncio client,
//! node-hl7-client. Each reads our ACKs back with its own parser, and what it framed is committed
//! byte for byte.

use super::{adt, msa, NAMES};
use crate::support::interop_peer::committed;
use crate::support::listen_proc::ListenProc;
use crate::support::node_peer::NodePeer;
use crate::support::peer_wire::Deframer;
use crate::support::python_peer::PythonPeer;
use base64::Engine;
use std::path::PathBuf;

/// Messages for a client to send into `mllp listen --out-dir`, and the listener.
struct IntoListen {
    ids: Vec<String>,
    messages: Vec<String>,
    listen: ListenProc,
    out: tempfile::TempDir,
    input: tempfile::TempDir,
}

impl IntoListen {
    /// `MSH-10`s `{prefix}1` to `{prefix}5`.
    fn start(prefix: &str) -> IntoListen {
        let out = tempfile::tempdir().unwrap();
        let listen = ListenProc::start(&["--out-dir", out.path().to_str().unwrap()]);
        let ids: Vec<String> = (1..=NAMES.len()).map(|i| format!("{prefix}{i}")).collect();
        let messages = ids.iter().zip(NAMES).map(|(id, n)| adt(id, n)).collect();
        IntoListen {
            ids,
            messages,
            listen,
            out,
            input: tempfile::tempdir().unwrap(),
        }
    }

    fn port(&self) -> u16 {
        self.listen.addr.port()
    }

    /// The messages in one file, with `separator` between them.
    fn file(&self, separator: &str) -> PathBuf {
        let file = self.input.path().join("messages.txt");
        std::fs::write(&file, self.messages.join(separator)).unwrap();
        file
    }

    /// The messages as a client that drops each one's final CR frames them.
    fn trimmed(&self) -> Vec<Vec<u8>> {
        self.messages
            .iter()
            .map(|m| m.trim_end_matches('\r').as_bytes().to_vec())
            .collect()
    }

    /// The client read an `AA` naming each message, in order, and `sent` is what was committed.
    fn check(&self, acks: Vec<String>, sent: Vec<Vec<u8>>) {
        let want: Vec<String> = self.ids.iter().map(|id| format!("AA {id}")).collect();
        assert_eq!(acks, want, "the client read our ACKs as");
        assert_eq!(committed(self.out.path()), sent);
    }
}

#[test]
fn python_mllp_send_into_listen_out_dir() {
    let Some(py) = PythonPeer::find("interop::clients::python_mllp_send_into_listen_out_dir")
    else {
        return;
    };
    let run = IntoListen::start("PY000");
    // One multi-message file, segments and messages CR-separated.
    let file = run.file("");
    let out = py
        .mllp_send(run.port(), &file)
        .assert()
        .success()
        .get_output()
        .clone();
    // It prints each ACK as received, then a newline: every one must be a canonical frame.
    let mut deframer = Deframer::canonical_lines();
    deframer.push(&out.stdout);
    let acks = std::iter::from_fn(|| deframer.next_frame()).map(|a| msa(&a));
    let acks = acks.collect();
    assert!(deframer.take_rest().is_empty(), "{:?}", out.stdout);
    // mllp_send --loose strips each message's final CR before framing it; the rest is committed
    // exactly as sent.
    run.check(acks, run.trimmed());
}

#[test]
fn python_asyncio_client_pipelines_into_listen() {
    let Some(py) =
        PythonPeer::find("interop::clients::python_asyncio_client_pipelines_into_listen")
    else {
        return;
    };
    let run = IntoListen::start("ASY-");
    let out = py
        .asyncio_client(run.port(), &run.file("\n\n"))
        .assert()
        .success()
        .get_output()
        .clone();
    // hl7.parse's reading of each ACK, `MSA-1 MSA-2` per line.
    let acks = String::from_utf8(out.stdout).unwrap();
    let acks = acks.lines().map(str::to_string).collect();
    let sent = run.messages.iter().map(|m| m.as_bytes().to_vec()).collect();
    run.check(acks, sent);
}

#[test]
fn node_client_into_listen_out_dir() {
    let Some(node) = NodePeer::find("interop::clients::node_client_into_listen_out_dir") else {
        return;
    };
    let run = IntoListen::start("NODE-");
    let out = node
        .client(run.port(), &run.file("\n\n"))
        .assert()
        .success()
        .get_output()
        .clone();
    let stdout = String::from_utf8(out.stdout).unwrap();
    let mut sent = Vec::new();
    let mut acks = Vec::new();
    for line in stdout.lines() {
        match line.split_once(' ') {
            Some(("SENT", b64)) => sent.push(
                base64::engine::general_purpose::STANDARD
                    .decode(b64)
                    .unwrap(),
            ),
            Some(("ACK", rest)) => acks.push(rest.to_string()),
            _ => panic!("unexpected client line {line:?}"),
        }
    }
    // Its Message drops the last segment's CR before framing; the rest is sent as given.
    assert_eq!(sent, run.trimmed());
    run.check(acks, sent);
}
