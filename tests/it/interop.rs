//! Interoperability with an independent MLLP implementation, python-hl7 (PyPI `hl7`): its
//! `mllp_send` and asyncio client against `mllp listen`, and its asyncio server under `mllp send`,
//! `probe` and `soak`. Missing Python skips outside CI and fails under `CI`.

use crate::support::interop_peer::{committed, json_lines, probe_send_json, soak_json};
use crate::support::listen_proc::ListenProc;
use crate::support::mllp;
use crate::support::python_peer::PythonPeer;

const VT: u8 = 0x0b;
const FS: u8 = 0x1c;
const CR: u8 = 0x0d;

/// An ADT^A01 with `control_id` as MSH-10 and a UTF-8 name, so byte-for-byte means something.
fn adt(control_id: &str, name: &str) -> String {
    format!(
        "MSH|^~\\&|PYSEND|PYFAC|MLLP|LAB|20240101120000||ADT^A01|{control_id}|P|2.5\r\
         EVN|A01|20240101120000\rPID|1||{control_id}^^^H||{name}^JANE\rPV1|1|I|W^1^1\r"
    )
}

const NAMES: [&str; 5] = ["DOE", "MÜLLER", "O'BRIEN", "NGUYỄN", "SMITH-JONES"];

/// Splits `mllp_send`'s stdout (each ACK as received, then `\n`) into ACK payloads, checking
/// every one is a canonical `VT payload FS CR` frame.
fn mllp_send_acks(stdout: &[u8]) -> Vec<Vec<u8>> {
    let mut acks = Vec::new();
    let mut rest = stdout;
    while !rest.is_empty() {
        assert_eq!(rest[0], VT, "an ACK not starting with VT: {rest:?}");
        let end = rest
            .windows(3)
            .position(|w| w == [FS, CR, b'\n'])
            .expect("an ACK not ending in FS CR");
        let payload = &rest[1..end];
        assert!(!payload.contains(&VT) && !payload.contains(&FS));
        acks.push(payload.to_vec());
        rest = &rest[end + 3..];
    }
    acks
}

/// (MSA-1, MSA-2) of an ACK payload using `|`.
fn msa(ack: &[u8]) -> (String, String) {
    let text = String::from_utf8(ack.to_vec()).unwrap();
    let seg = text
        .split('\r')
        .find(|s| s.starts_with("MSA|"))
        .expect("an MSA segment");
    let fields: Vec<&str> = seg.split('|').collect();
    (fields[1].to_string(), fields[2].to_string())
}

#[test]
fn python_mllp_send_into_listen_out_dir() {
    let Some(py) = PythonPeer::find("interop::python_mllp_send_into_listen_out_dir") else {
        return;
    };
    let out = tempfile::tempdir().unwrap();
    let listen = ListenProc::start(&["--out-dir", out.path().to_str().unwrap()]);
    let ids: Vec<String> = (1..=5).map(|i| format!("PY{i:04}")).collect();
    let messages: Vec<String> = ids.iter().zip(NAMES).map(|(id, n)| adt(id, n)).collect();
    // One multi-message file, segments and messages CR-separated.
    let file = py.dir.path().join("batch.hl7");
    std::fs::write(&file, messages.concat()).unwrap();

    let run = py
        .mllp_send(listen.addr.port(), &file)
        .assert()
        .success()
        .get_output()
        .clone();

    let acks = mllp_send_acks(&run.stdout);
    let got: Vec<_> = acks.iter().map(|a| msa(a)).collect();
    let want: Vec<_> = ids
        .iter()
        .map(|id| ("AA".to_string(), id.clone()))
        .collect();
    assert_eq!(got, want);
    // mllp_send --loose strips each message's final CR before framing it; the rest is
    // committed exactly as sent.
    let sent: Vec<Vec<u8>> = messages
        .iter()
        .map(|m| m.trim_end_matches('\r').as_bytes().to_vec())
        .collect();
    assert_eq!(committed(out.path()), sent);
}

#[test]
fn python_asyncio_client_pipelines_into_listen() {
    let Some(py) = PythonPeer::find("interop::python_asyncio_client_pipelines_into_listen") else {
        return;
    };
    let out = tempfile::tempdir().unwrap();
    let listen = ListenProc::start(&["--out-dir", out.path().to_str().unwrap()]);
    let ids: Vec<String> = (1..=5).map(|i| format!("ASY-{i}")).collect();
    let messages: Vec<String> = ids.iter().zip(NAMES).map(|(id, n)| adt(id, n)).collect();
    let file = py.dir.path().join("messages.txt");
    std::fs::write(&file, messages.join("\n\n")).unwrap();

    let run = py
        .asyncio_client(listen.addr.port(), &file)
        .assert()
        .success()
        .get_output()
        .clone();

    let lines: Vec<String> = String::from_utf8(run.stdout)
        .unwrap()
        .lines()
        .map(str::to_string)
        .collect();
    let want: Vec<String> = ids.iter().map(|id| format!("AA {id}")).collect();
    assert_eq!(lines, want, "hl7.parse read our ACKs as");
    let sent: Vec<Vec<u8>> = messages.iter().map(|m| m.as_bytes().to_vec()).collect();
    assert_eq!(committed(out.path()), sent);
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

fn send_to_python(code: &str, expect_exit: i32, outcome: &str) {
    let test = format!("interop::mllp_send_to_python_server_{code}");
    let Some(py) = PythonPeer::find(&test) else {
        return;
    };
    let server = py.server(code);
    let (ids, files) = send_inputs(py.dir.path());
    let run = mllp()
        .args(["send", "--host", "127.0.0.1", "--port"])
        .arg(server.port.to_string())
        .args(["--json", "--connect-timeout", "5s", "--ack-timeout", "5s"])
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
    }
    assert_eq!(summary["type"], "summary");
    assert_eq!(summary["messages"], 3);
    assert_eq!(summary["by_code"][code], 3);
    assert_eq!(summary["exit_code"], expect_exit);
    // The peer parsed every frame we wrote, in order, with our control IDs.
    assert_eq!(server.received(3), ids);
}

#[test]
fn mllp_send_to_python_server_aa() {
    send_to_python("AA", 0, "accepted");
}

#[test]
fn mllp_send_to_python_server_ae() {
    send_to_python("AE", 1, "negative");
}

#[test]
fn probe_send_against_python_server_is_ok() {
    let Some(py) = PythonPeer::find("interop::probe_send_against_python_server_is_ok") else {
        return;
    };
    let server = py.server("AA");
    let report = probe_send_json(server.port);
    assert_eq!(report["verdict"]["class"], "ok", "{report}");
    let ack = report["phases"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["name"] == "ack")
        .expect("an ack phase");
    assert_eq!(ack["ok"], true, "{ack}");
    assert_eq!(ack["ack_code"], "AA", "{ack}");
    assert_eq!(server.received(1).len(), 1);
}

#[test]
fn soak_against_python_server_accounts_for_every_message() {
    let Some(py) =
        PythonPeer::find("interop::soak_against_python_server_accounts_for_every_message")
    else {
        return;
    };
    let server = py.server("AA");
    let report = soak_json(server.port);
    assert_eq!(report["accounting_ok"], true, "{report}");
    let generated = report["generated"].as_u64().unwrap();
    assert!(generated > 0, "{report}");
    assert_eq!(report["accepted"], generated, "{report}");
    assert_eq!(report["by_code"]["AA"], generated, "{report}");
    // Every generated message reached the peer and was parsed there (none twice: soak's
    // control IDs are unique).
    let mut ids = server.received(generated as usize);
    ids.sort();
    ids.dedup();
    assert_eq!(ids.len() as u64, generated);
}
