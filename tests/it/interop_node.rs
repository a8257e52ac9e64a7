//! Interoperability with a second independent MLLP implementation, node-hl7-server and
//! node-hl7-client (npm): their client against `mllp listen`, their server under `mllp send`,
//! `probe` and `soak`. Missing node or packages skips outside CI and fails under `CI`.
//!
//! node-hl7-server 2.5.0 never clears its receive buffer: each message on a connection makes it
//! hand every earlier message of that connection to its handler again and ACK each again. These
//! tests pin that down and check that our sender credits each message with its own ACK only.

use crate::support::interop_peer::{committed, json_lines, probe_send_json, soak_json};
use crate::support::listen_proc::ListenProc;
use crate::support::mllp;
use crate::support::node_peer::NodePeer;
use base64::Engine;

/// An ADT^A01 with `control_id` as MSH-10 and a UTF-8 name, so byte-for-byte means something.
fn adt(control_id: &str, name: &str) -> String {
    format!(
        "MSH|^~\\&|NODESEND|NODEFAC|MLLP|LAB|20240101120000||ADT^A01|{control_id}|P|2.5\r\
         EVN|A01|20240101120000\rPID|1||{control_id}^^^H||{name}^JANE\rPV1|1|I|W^1^1\r"
    )
}

const NAMES: [&str; 4] = ["DOE", "MÜLLER", "NGUYỄN", "SMITH-JONES"];

/// `MSA|code|control id` of an ACK payload using `|`.
fn msa(ack: &str) -> String {
    let seg = ack.split('\r').find(|s| s.starts_with("MSA|")).unwrap();
    seg.split('|').take(3).collect::<Vec<_>>().join("|")
}

#[test]
fn node_client_into_listen_out_dir() {
    let Some(node) = NodePeer::find("interop_node::node_client_into_listen_out_dir") else {
        return;
    };
    let out = tempfile::tempdir().unwrap();
    let listen = ListenProc::start(&["--out-dir", out.path().to_str().unwrap()]);
    let ids: Vec<String> = (1..=4).map(|i| format!("NODE-{i}")).collect();
    let messages: Vec<String> = ids.iter().zip(NAMES).map(|(id, n)| adt(id, n)).collect();
    let input = tempfile::tempdir().unwrap();
    let file = input.path().join("messages.txt");
    std::fs::write(&file, messages.join("\n\n")).unwrap();

    let run = node
        .client(listen.addr.port(), &file)
        .assert()
        .success()
        .get_output()
        .clone();

    let stdout = String::from_utf8(run.stdout).unwrap();
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
    let want: Vec<String> = ids.iter().map(|id| format!("AA {id}")).collect();
    assert_eq!(acks, want, "node-hl7-client read our ACKs as");
    // Its Message drops the last segment's CR before framing; the rest is sent as given.
    let expected: Vec<Vec<u8>> = messages
        .iter()
        .map(|m| m.trim_end_matches('\r').as_bytes().to_vec())
        .collect();
    assert_eq!(sent, expected);
    assert_eq!(committed(out.path()), sent);
}

/// Two input files (one with two messages) for `mllp send`.
fn send_inputs(dir: &std::path::Path) -> (Vec<String>, [String; 2]) {
    let ids = ["NSND-1", "NSND-2", "NSND-3"].map(String::from).to_vec();
    let a = dir.join("a.hl7");
    let b = dir.join("b.hl7");
    std::fs::write(&a, adt(&ids[0], "DOE")).unwrap();
    std::fs::write(&b, adt(&ids[1], "ROE") + &adt(&ids[2], "POE")).unwrap();
    let files = [a, b].map(|p| p.to_str().unwrap().to_string());
    (ids, files)
}

/// `mllp send` one message at a time (the server cannot take frames that arrive together, see
/// the README) with `correlate`, and its ACKs printed.
fn send_to_node(code: &str, correlate: &str, expect_exit: i32, outcome: &str) {
    let test = format!("interop_node::mllp_send_to_node_server_{code}");
    let Some(node) = NodePeer::find(&test) else {
        return;
    };
    let server = node.server(code);
    let input = tempfile::tempdir().unwrap();
    let (ids, files) = send_inputs(input.path());
    let run = mllp()
        .args([
            "--log-format",
            "json",
            "send",
            "--host",
            "127.0.0.1",
            "--port",
        ])
        .arg(server.port.to_string())
        .args([
            "--json",
            "--print-ack",
            "--no-pipeline",
            "--correlate",
            correlate,
        ])
        .args(["--connect-timeout", "5s", "--ack-timeout", "5s"])
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
        assert_eq!(record["outcome"], outcome, "{record}");
        assert_eq!(record["ack_code"], code, "{record}");
        assert_eq!(record["control_id"], id.as_str(), "{record}");
        // Credited with the ACK that names it, not a repeat of an earlier one.
        let ack = record["ack"].as_str().unwrap();
        assert_eq!(msa(ack), format!("MSA|{code}|{id}"), "{record}");
    }
    assert_eq!(summary["by_code"][code], 3);
    assert_eq!(summary["exit_code"], expect_exit);
    // The server's repeats: message n comes with the n - 1 earlier ones again.
    let handled = server.stop();
    let repeats: Vec<&String> = vec![&ids[0], &ids[0], &ids[1], &ids[0], &ids[1], &ids[2]];
    assert_eq!(handled.iter().collect::<Vec<_>>(), repeats);
    // Each repeated ACK is reported, none credited.
    let unmatched = json_lines(&run.stderr)
        .iter()
        .filter(|e| e["event"] == "warning")
        .map(|e| e["code"].as_str().unwrap().to_string())
        .collect::<Vec<_>>();
    assert_eq!(unmatched, ["MLLP_ACK_UNMATCHED_CONTROL_ID"; 3]);
}

#[test]
fn mllp_send_to_node_server_aa() {
    send_to_node("AA", "fifo", 0, "accepted");
}

#[test]
fn mllp_send_to_node_server_ae() {
    send_to_node("AE", "control-id", 1, "negative");
}

#[test]
fn probe_send_against_node_server_is_ok() {
    let Some(node) = NodePeer::find("interop_node::probe_send_against_node_server_is_ok") else {
        return;
    };
    let server = node.server("AA");
    let report = probe_send_json(server.port);
    assert_eq!(report["verdict"]["class"], "ok", "{report}");
    let phases = report["phases"].as_array().unwrap();
    let ack = phases.iter().find(|p| p["name"] == "ack").unwrap();
    assert_eq!(ack["ok"], true, "{ack}");
    assert_eq!(ack["ack_code"], "AA", "{ack}");
    assert_eq!(ack["control_id_matches"], true, "{ack}");
    let sent = phases.iter().find(|p| p["name"] == "send").unwrap();
    assert_eq!(server.stop(), [sent["control_id"].as_str().unwrap()]);
}

#[test]
fn soak_against_node_server_accounts_for_every_message() {
    let Some(node) =
        NodePeer::find("interop_node::soak_against_node_server_accounts_for_every_message")
    else {
        return;
    };
    let server = node.server("AA");
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
    assert_eq!(
        ids.len() as u64,
        generated,
        "every message reached the handler"
    );
    // The server's repeats came back as ACKs nobody was waiting for: counted, never credited.
    let repeats = handled.len() as u64 - generated;
    let unmatched = report["warnings_by_code"]["MLLP_ACK_UNMATCHED_CONTROL_ID"]
        .as_u64()
        .unwrap_or(0);
    assert!(repeats > 0, "{report}");
    assert!(
        0 < unmatched && unmatched <= repeats,
        "{unmatched} of {repeats}"
    );
}
