//! Integration tests: `mllp listen` as a real process, driven over real loopback sockets.

use crate::support::listen_proc::{is, ListenProc};
use crate::support::mllp;
use crate::support::mllp_client::{adt, MllpClient};
use crate::support::peer_wire::frame;
use serde_json::Value;
use std::time::Duration;

#[tokio::test]
async fn every_interesting_control_id_round_trips_byte_for_byte() {
    let server = ListenProc::start(&[]);
    let mut client = MllpClient::connect(server.addr).await;
    let long = vec![b'7'; 199];
    let ids: Vec<&[u8]> = vec![
        b"1",
        b"MSG-00001",
        b"with space",
        b"a^b&c",
        b"\\E\\escaped\\T\\",
        b"tab\there",
        "ünïcødé-é".as_bytes(),
        b"latin1-\xe9\xff",
        &long,
    ];
    for id in &ids {
        client.send(&adt(id, "")).await;
    }
    for id in &ids {
        let ack = client.ack().await.expect("an ACK");
        assert_eq!(ack.code, "AA");
        assert_eq!(&ack.control_id, id, "MSA-2 byte for byte");
    }
}

#[tokio::test]
async fn msh15_table_and_exec_exit_codes() {
    let script = r#"cat >/dev/null; case "$MLLP_CONTROL_ID" in *-fail) exit 3;; *-reject) exit 2;; *-type) [ "$MLLP_MESSAGE_TYPE" = "ADT^A01" ] && [ -n "$MLLP_PEER" ] || exit 9;; esac"#;
    let server = ListenProc::start(&["--exec", script]);
    let mut client = MllpClient::connect(server.addr).await;
    let cases = [
        ("", "ok-type", "AA"),
        ("", "a-fail", "AE"),
        ("", "a-reject", "AR"),
        ("NE", "b-fail", "AE"),
        ("AL", "c", "CA"),
        ("AL", "c-fail", "CE"),
        ("AL", "c-reject", "CR"),
        ("ER", "d", "AA"),
        ("ER", "d-fail", "CE"),
        ("ER", "d-reject", "CR"),
        ("SU", "e", "CA"),
        ("SU", "e-fail", "AE"),
        ("SU", "e-reject", "AR"),
        ("ZZ", "f", "AA"),
        ("ZZ", "f-fail", "AE"),
    ];
    for (msh15, id, expected) in cases {
        client.send(&adt(id.as_bytes(), msh15)).await;
        let ack = client.ack().await.expect("an ACK");
        assert_eq!(
            (ack.code.as_str(), ack.control_id.as_slice()),
            (expected, id.as_bytes()),
            "MSH-15 {msh15:?}"
        );
    }
    let warning = server.wait_event(|v| v["code"] == "MLLP_UNKNOWN_ACCEPT_ACK_TYPE");
    assert_eq!(warning["event"], "warning");
}

#[tokio::test]
async fn downgrades_are_never_positive_and_say_why() {
    let server = ListenProc::start(&[]);
    let mut client = MllpClient::connect(server.addr).await;
    client.send(&adt(b"", "")).await;
    assert_eq!(client.ack().await.unwrap().code, "AE");
    let batch = [
        b"FHS|^~\\&|S\rBHS|^~\\&|S\r".as_slice(),
        &adt(b"in-batch", ""),
    ]
    .concat();
    client.send(&batch).await;
    assert_eq!(
        client.ack().await.unwrap().code,
        "AR",
        "a batch is rejected"
    );
    let mut damaged = b"\x0bMSH|^~\\&|cut-off".to_vec();
    damaged.extend(frame(&adt(b"remnant", "AL")));
    client.send_raw(&damaged).await;
    let ack = client.ack().await.unwrap();
    assert_eq!(
        (ack.code.as_str(), ack.control_id.as_slice()),
        ("CE", b"remnant".as_slice())
    );
    let mut reasons = Vec::new();
    for _ in 0..3 {
        let nack = server.wait_event(is("nack"));
        reasons.push(nack["reason"].as_str().unwrap().to_string());
    }
    assert_eq!(
        reasons,
        [
            "uncorrelatable-inbound",
            "uncorrelatable-inbound",
            "discarded-bytes"
        ]
    );
}

#[tokio::test]
async fn an_inbound_ack_draws_no_answer() {
    let server = ListenProc::start(&["--format", "json"]);
    let mut client = MllpClient::connect(server.addr).await;
    client
        .send(b"MSH|^~\\&|A|B|C|D|20240101||ACK^A01|x1|P|2.5\rMSA|AA|m0\r")
        .await;
    let first = server.wait_event(is("message"));
    assert_eq!(first["ack_code"], Value::Null);
    assert!(client.silent_for(Duration::from_millis(300)).await);
    client.send(&adt(b"after-ack", "")).await;
    let ack = client.ack().await.unwrap();
    assert_eq!(ack.control_id, b"after-ack");
}

#[tokio::test]
async fn out_dir_file_is_complete_before_the_ack() {
    let dir = tempfile::tempdir().unwrap();
    let mut server = ListenProc::start(&["--out-dir", dir.path().to_str().unwrap()]);
    let mut client = MllpClient::connect(server.addr).await;
    let payload = adt(b"durable-1", "");
    client.send(&payload).await;
    let ack = client.ack().await.unwrap();
    server.kill(); // SIGKILL right after the ACK
    assert_eq!(ack.code, "AA");
    let names: Vec<String> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    assert_eq!(
        names.len(),
        1,
        "exactly one file, no temporary left: {names:?}"
    );
    assert!(names[0].ends_with(".hl7"));
    assert_eq!(std::fs::read(dir.path().join(&names[0])).unwrap(), payload);
}

#[tokio::test]
async fn hostile_peers_lose_their_own_connection_only() {
    let server = ListenProc::start(&["--max-frame-size", "4KiB"]);
    let mut good = MllpClient::connect(server.addr).await;
    // (An oversize frame is answered and its connection goes on: see the conformance tests.)
    let hostile: [(&str, Vec<u8>); 4] = [
        ("garbage", b"\x00\x01\x02garbage\xff".to_vec()),
        ("http", b"GET / HTTP/1.1\r\nHost: x\r\n\r\n".to_vec()),
        (
            "tls",
            b"\x16\x03\x01\x00\xa5\x01\x00\x00\xa1\x03\x03".to_vec(),
        ),
        ("ssh", b"SSH-2.0-OpenSSH_9.6\r\n".to_vec()),
    ];
    for (i, (name, bytes)) in hostile.iter().enumerate() {
        let mut bad = MllpClient::connect(server.addr).await;
        bad.send_raw(bytes).await;
        assert!(bad.ack().await.is_none(), "{name}: connection closed");
        let closed = server.wait_event(is("connection_closed"));
        assert_eq!(closed["cause"], "framing-fatal", "{name}");
        assert!(
            closed["code"].as_str().unwrap().starts_with("MLLP_"),
            "{name}"
        );
        let id = format!("good-{i}");
        good.send(&adt(id.as_bytes(), "")).await;
        let ack = good.ack().await.expect("the good peer is still served");
        assert_eq!((ack.code.as_str(), ack.control_id), ("AA", id.into_bytes()));
    }
}

#[tokio::test]
async fn frames_before_a_fatal_byte_are_acknowledged() {
    let server = ListenProc::start(&[]);
    let mut client = MllpClient::connect(server.addr).await;
    let mut bytes = frame(&adt(b"before-1", ""));
    bytes.extend(frame(&adt(b"before-2", "")));
    bytes.extend(b"SSH-2.0-x\r\n");
    client.send_raw(&bytes).await;
    assert_eq!(client.ack().await.unwrap().control_id, b"before-1");
    assert_eq!(client.ack().await.unwrap().control_id, b"before-2");
    assert!(client.ack().await.is_none());
}

#[test]
fn a_wildcard_bind_is_refused_unless_allowed() {
    for host in ["0.0.0.0", "0"] {
        let out = mllp()
            .args(["listen", "--port", "0", "--host", host])
            .timeout(Duration::from_secs(10))
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{host}");
        assert!(String::from_utf8_lossy(&out.stderr).contains("--allow-wildcard"));
    }
    let server = ListenProc::start(&["--host", "0.0.0.0", "--allow-wildcard"]);
    let warning = server.wait_event(is("security_warning"));
    assert_eq!(warning["code"], "MLLP_BIND_ALL_INTERFACES");
}

#[test]
fn a_port_in_use_exits_5() {
    let taken = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = taken.local_addr().unwrap().port().to_string();
    let out = mllp()
        .args(["listen", "--port", &port])
        .timeout(Duration::from_secs(10))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(5));
}

#[tokio::test]
async fn extra_connections_are_refused_and_counted() {
    let server = ListenProc::start(&["--max-connections", "1"]);
    let mut first = MllpClient::connect(server.addr).await;
    first.send(&adt(b"one", "")).await;
    assert_eq!(first.ack().await.unwrap().code, "AA");
    let mut second = MllpClient::connect(server.addr).await;
    assert!(
        second.ack().await.is_none(),
        "the extra peer is closed at once"
    );
    let refused = server.wait_event(|v| v["cause"] == "max-connections");
    assert_eq!(refused["event"], "connection_closed");
    first.send(&adt(b"two", "")).await;
    assert_eq!(first.ack().await.unwrap().control_id, b"two");
}

#[tokio::test]
async fn an_idle_connection_is_closed() {
    let server = ListenProc::start(&["--idle-timeout", "200ms"]);
    let mut client = MllpClient::connect(server.addr).await;
    assert!(client.ack().await.is_none());
    let closed = server.wait_event(is("connection_closed"));
    assert_eq!(closed["cause"], "idle-timeout");
}

#[tokio::test]
async fn a_connection_closed_for_idleness_frees_its_slot_at_once() {
    let server = ListenProc::start(&["--max-connections", "1", "--idle-timeout", "200ms"]);
    // The first peer sees the close but keeps its socket open, so the server lingers on it.
    let mut idle = MllpClient::connect(server.addr).await;
    assert!(idle.ack().await.is_none());
    server.wait_event(|v| v["cause"] == "idle-timeout");
    let mut next = MllpClient::connect(server.addr).await;
    next.send(&adt(b"next", "")).await;
    let ack = next
        .ack()
        .await
        .expect("the freed slot serves the next peer");
    assert_eq!(ack.code, "AA");
    drop(idle);
}

#[tokio::test]
async fn sigterm_drains_the_commit_under_way_then_exits_0() {
    let script = "cat >/dev/null; echo commit-started >&2; sleep 1";
    let server = ListenProc::start(&["--exec", script]);
    let mut client = MllpClient::connect(server.addr).await;
    client.send(&adt(b"in-flight", "")).await;
    // The command's stderr comes through as its own event.
    server.wait_event(|v| v["event"] == "exec_stderr" && v["line"] == "commit-started");
    server.signal("TERM");
    let ack = client
        .ack()
        .await
        .expect("the commit under way is answered");
    assert_eq!(
        (ack.code.as_str(), ack.control_id.as_slice()),
        ("AA", b"in-flight".as_slice())
    );
    assert!(client.ack().await.is_none(), "then the connection closes");
    let (status, rest, _) = server.wait();
    assert_eq!(status.code(), Some(0));
    let stats = rest
        .iter()
        .find(|v| v["event"] == "stats")
        .expect("stats on exit");
    assert_eq!(stats["committed"], 1);
    assert_eq!(stats["acks_by_code"]["AA"], 1);
}

#[tokio::test]
async fn stdout_json_carries_the_payload_and_its_metadata() {
    let server = ListenProc::start(&["--format", "json"]);
    let mut client = MllpClient::connect(server.addr).await;
    client.send(&adt(b"j1", "")).await;
    let mut binary = adt(b"j2", "");
    binary.push(0xff);
    client.send(&binary).await;
    client.ack().await.unwrap();
    client.ack().await.unwrap();
    server.signal("INT");
    let (status, _, out) = server.wait();
    assert_eq!(status.code(), Some(0));
    let lines: Vec<Value> = String::from_utf8(out)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), 2);
    assert_eq!(lines[0]["control_id"], "j1");
    assert_eq!(lines[0]["message_type"], "ADT^A01");
    assert_eq!(
        lines[0]["payload"].as_str().unwrap().as_bytes(),
        adt(b"j1", "")
    );
    assert!(lines[0]["peer"].as_str().unwrap().starts_with("127.0.0.1:"));
    assert!(lines[0]["received_at"].as_str().unwrap().ends_with('Z'));
    use base64::Engine;
    let decoded = base64::engine::general_purpose::STANDARD
        .decode(lines[1]["payload_base64"].as_str().unwrap())
        .unwrap();
    assert_eq!(decoded, binary);
}

#[tokio::test]
async fn a_closed_stdout_fails_the_commit_without_a_crash() {
    let server = ListenProc::start_with_closed_stdout(&[]);
    let mut client = MllpClient::connect(server.addr).await;
    for id in [b"p1", b"p2"] {
        client.send(&adt(id, "")).await;
        let ack = client.ack().await.expect("still answering");
        assert_eq!(ack.code, "AE", "never positive for an uncommitted message");
    }
    let nack = server.wait_event(is("nack"));
    assert_eq!(nack["reason"], "handler-rejected", "{nack}");
    assert_eq!(nack["detail"], "commit-failed", "{nack}");
}

#[tokio::test]
async fn ack_none_is_a_pure_sink() {
    let server = ListenProc::start(&["--ack", "none", "--format", "raw"]);
    let mut client = MllpClient::connect(server.addr).await;
    client.send(&adt(b"silent", "")).await;
    let message = server.wait_event(is("message"));
    assert_eq!(message["ack_code"], Value::Null);
    assert!(client.silent_for(Duration::from_millis(300)).await);
    server.signal("TERM");
    let (_, _, out) = server.wait();
    assert_eq!(
        out,
        frame(&adt(b"silent", "")),
        "raw re-frames byte for byte"
    );
}
