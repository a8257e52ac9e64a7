//! Interoperability with independent MLLP implementations, from one table of peers: python-hl7
//! (PyPI `hl7`) and node-hl7-server/node-hl7-client (npm). Every peer's server runs under `mllp
//! send`, `probe` and `soak` through one driver each; their clients send into `mllp listen`
//! (`clients`). A missing peer skips outside CI and fails under `CI`.
//!
//! node-hl7-server 2.5.0 never clears its receive buffer: each message on a connection makes it
//! hand every earlier message of that connection to its handler again and ACK each again. The
//! table says so, and the driver checks that our sender credits each message with its own ACK
//! only.

mod clients;

use crate::support::interop_peer::{json_lines, probe_send_json, soak_json, InteropPeer};
use crate::support::mllp;
use crate::support::node_peer::NodePeer;
use crate::support::python_peer::PythonPeer;

/// One independent implementation and what its server does differently.
struct Peer {
    /// As test names spell it: `mllp_send_to_{name}_server_aa`.
    name: &'static str,
    /// The installed peer, or `None` (having said why) when it is missing outside CI.
    find: fn(test: &str) -> Option<Box<dyn InteropPeer>>,
    /// Its server hands every earlier message of a connection to its handler again with each
    /// new one, and ACKs each again.
    repeats: bool,
    /// Its server cannot take frames that arrive together: `mllp send` runs one at a time.
    one_at_a_time: bool,
}

const PYTHON: Peer = Peer {
    name: "python",
    find: |test| PythonPeer::find(test).map(|p| Box::new(p) as Box<dyn InteropPeer>),
    repeats: false,
    one_at_a_time: false,
};

const NODE: Peer = Peer {
    name: "node",
    find: |test| NodePeer::find(test).map(|p| Box::new(p) as Box<dyn InteropPeer>),
    repeats: true,
    one_at_a_time: true,
};

/// An ADT^A01 with `control_id` as MSH-10 and a UTF-8 name, so byte-for-byte means something.
fn adt(control_id: &str, name: &str) -> String {
    format!(
        "MSH|^~\\&|INTEROP|FAC|MLLP|LAB|20240101120000||ADT^A01|{control_id}|P|2.5\r\
         EVN|A01|20240101120000\rPID|1||{control_id}^^^H||{name}^JANE\rPV1|1|I|W^1^1\r"
    )
}

const NAMES: [&str; 5] = ["DOE", "MÜLLER", "O'BRIEN", "NGUYỄN", "SMITH-JONES"];

/// `MSA-1 MSA-2` of an ACK payload using `|`.
fn msa(ack: &[u8]) -> String {
    let text = String::from_utf8(ack.to_vec()).unwrap();
    let seg = text
        .split('\r')
        .find(|s| s.starts_with("MSA|"))
        .expect("an MSA segment");
    let fields: Vec<&str> = seg.split('|').collect();
    format!("{} {}", fields[1], fields[2])
}

/// Two input files (one with two messages) for `mllp send`.
fn send_inputs(dir: &std::path::Path) -> (Vec<String>, [String; 2]) {
    let ids = ["SND-1", "SND-2", "SND-3"].map(String::from).to_vec();
    let a = dir.join("a.hl7");
    let b = dir.join("b.hl7");
    std::fs::write(&a, adt(&ids[0], "DOE")).unwrap();
    std::fs::write(&b, adt(&ids[1], "ROE") + &adt(&ids[2], "POE")).unwrap();
    let files = [a, b].map(|p| p.to_str().unwrap().to_string());
    (ids, files)
}

/// `mllp send` three messages with `correlate` to the peer's server answering `code`: each is
/// credited with the ACK that names it, and each of the server's repeated ACKs is reported as
/// unmatched, never credited.
fn send_to(peer: &Peer, code: &str, correlate: &str, expect_exit: i32, outcome: &str) {
    let test = format!(
        "interop::mllp_send_to_{}_server_{}",
        peer.name,
        code.to_lowercase()
    );
    let Some(implementation) = (peer.find)(&test) else {
        return;
    };
    let server = implementation.server(code);
    let input = tempfile::tempdir().unwrap();
    let (ids, files) = send_inputs(input.path());
    let mut cmd = mllp();
    cmd.args(["--log-format", "json", "send", "--host", "127.0.0.1"])
        .args(["--port", &server.port.to_string()])
        .args(["--json", "--print-ack", "--correlate", correlate])
        .args(["--connect-timeout", "5s", "--ack-timeout", "5s"]);
    if peer.one_at_a_time {
        cmd.arg("--no-pipeline");
    }
    let run = cmd
        .args(&files)
        .timeout(std::time::Duration::from_secs(30))
        .assert()
        .code(expect_exit)
        .get_output()
        .clone();

    let records = json_lines(&run.stdout);
    let (summary, messages) = records.split_last().unwrap();
    assert_eq!(messages.len(), 3, "{records:?}");
    for (record, id) in messages.iter().zip(&ids) {
        assert_eq!(record["type"], "message");
        assert_eq!(record["outcome"], outcome, "{record}");
        assert_eq!(record["ack_code"], code, "{record}");
        assert_eq!(record["control_id"], id.as_str(), "{record}");
        let ack = record["ack"].as_str().unwrap();
        assert_eq!(msa(ack.as_bytes()), format!("{code} {id}"), "{record}");
    }
    assert_eq!(summary["type"], "summary");
    assert_eq!(summary["messages"], 3);
    assert_eq!(summary["by_code"][code], 3);
    assert_eq!(summary["exit_code"], expect_exit);
    // The peer parsed every frame we wrote, in order, with our control IDs; a repeating server
    // gets message n with the n - 1 earlier ones again.
    let handled = server.stop();
    let expected: Vec<&String> = match peer.repeats {
        false => ids.iter().collect(),
        true => [0, 0, 1, 0, 1, 2].map(|i| &ids[i]).to_vec(),
    };
    assert_eq!(handled.iter().collect::<Vec<_>>(), expected);
    let unmatched = json_lines(&run.stderr)
        .iter()
        .filter(|e| e["event"] == "warning")
        .map(|e| e["code"].as_str().unwrap().to_string())
        .collect::<Vec<_>>();
    let repeats = handled.len() - ids.len();
    assert_eq!(unmatched, vec!["MLLP_ACK_UNMATCHED_CONTROL_ID"; repeats]);
}

#[test]
fn mllp_send_to_python_server_aa() {
    send_to(&PYTHON, "AA", "control-id", 0, "accepted");
}

#[test]
fn mllp_send_to_python_server_ae() {
    send_to(&PYTHON, "AE", "control-id", 1, "negative");
}

#[test]
fn mllp_send_to_node_server_aa() {
    send_to(&NODE, "AA", "fifo", 0, "accepted");
}

#[test]
fn mllp_send_to_node_server_ae() {
    send_to(&NODE, "AE", "control-id", 1, "negative");
}

/// `mllp probe --send` against the peer's server: ok, with an `AA` naming the probe message, the
/// one message the server was given.
fn probe_send_against(peer: &Peer) {
    let test = format!("interop::probe_send_against_{}_server_is_ok", peer.name);
    let Some(implementation) = (peer.find)(&test) else {
        return;
    };
    let server = implementation.server("AA");
    let report = probe_send_json(server.port);
    assert_eq!(report["verdict"]["class"], "ok", "{report}");
    let phases = report["phases"].as_array().unwrap();
    let ack = phases
        .iter()
        .find(|p| p["name"] == "ack")
        .expect("an ack phase");
    assert_eq!(ack["ok"], true, "{ack}");
    assert_eq!(ack["ack_code"], "AA", "{ack}");
    assert_eq!(ack["control_id_matches"], true, "{ack}");
    let sent = phases.iter().find(|p| p["name"] == "send").unwrap();
    assert_eq!(server.stop(), [sent["control_id"].as_str().unwrap()]);
}

#[test]
fn probe_send_against_python_server_is_ok() {
    probe_send_against(&PYTHON);
}

#[test]
fn probe_send_against_node_server_is_ok() {
    probe_send_against(&NODE);
}

/// A short `mllp soak` against the peer's server: every generated message accepted and handed to
/// the server's handler; a repeating server's extra ACKs counted as unmatched, never credited.
fn soak_against(peer: &Peer) {
    let test = format!(
        "interop::soak_against_{}_server_accounts_for_every_message",
        peer.name
    );
    let Some(implementation) = (peer.find)(&test) else {
        return;
    };
    let server = implementation.server("AA");
    let report = soak_json(server.port);
    assert_eq!(report["accounting_ok"], true, "{report}");
    let generated = report["generated"].as_u64().unwrap();
    assert!(generated > 1, "{report}");
    assert_eq!(report["accepted"], generated, "{report}");
    assert_eq!(report["by_code"]["AA"], generated, "{report}");
    let handled = server.stop();
    let mut ids = handled.clone();
    ids.sort();
    ids.dedup();
    // Soak's control IDs are unique: each one reached the handler.
    assert_eq!(
        ids.len() as u64,
        generated,
        "every message reached the handler"
    );
    let repeats = handled.len() as u64 - generated;
    let unmatched = report["warnings_by_code"]["MLLP_ACK_UNMATCHED_CONTROL_ID"]
        .as_u64()
        .unwrap_or(0);
    if peer.repeats {
        assert!(repeats > 0, "{report}");
        assert!(
            0 < unmatched && unmatched <= repeats,
            "{unmatched} of {repeats}"
        );
    } else {
        assert_eq!((repeats, unmatched), (0, 0), "{report}");
    }
}

#[test]
fn soak_against_python_server_accounts_for_every_message() {
    soak_against(&PYTHON);
}

#[test]
fn soak_against_node_server_accounts_for_every_message() {
    soak_against(&NODE);
}
