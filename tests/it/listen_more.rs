//! Integration tests: `mllp listen` part 2 as a real process: TLS, the SQLite sink, de-duplication
//! across restarts, enhanced and batch acknowledgement, the test-double behaviours, metrics.

use crate::support::certs::{Certs, Pair};
use crate::support::listen_proc::ListenProc;
use crate::support::mllp_client::{adt, frame, MllpClient};
use crate::support::no_payload::{assert_no_marker, MARKER};
use bytes::BytesMut;
use mllp::framing::{Decoded, MllpCodec, Tolerance};
use mllp::tls::ClientTlsOptions;
use serde_json::Value;
use std::net::SocketAddr;
use std::path::Path;
use std::time::Duration;
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio_util::codec::Decoder;

const WAIT: Duration = Duration::from_secs(10);

pub(crate) fn is(event: &'static str) -> impl Fn(&Value) -> bool {
    move |v| v["event"] == event
}

fn marked(id: &str, msh15_16: &str) -> Vec<u8> {
    let mut m = adt(id.as_bytes(), msh15_16);
    m.extend_from_slice(format!("NTE|1||{MARKER}\r").as_bytes());
    m
}

/// One message over any stream; the first ACK's MSA-1, or `None` when the link failed first.
async fn round_trip<S: AsyncRead + AsyncWrite + Unpin>(
    stream: &mut S,
    payload: &[u8],
) -> Option<String> {
    stream.write_all(&frame(payload)).await.ok()?;
    let mut codec = MllpCodec::new(Tolerance::ACK_READER, 1 << 20);
    let mut buf = BytesMut::new();
    loop {
        if let Ok(Some(Decoded::Frame(f))) = codec.decode(&mut buf) {
            let view = mllp::hl7::scan_ack(&f.payload)?;
            return Some(String::from_utf8_lossy(view.code).into_owned());
        }
        match tokio::time::timeout(WAIT, stream.read_buf(&mut buf)).await {
            Ok(Ok(n)) if n > 0 => {}
            _ => return None,
        }
    }
}

/// A TLS MLLP exchange with `client` presenting `cert` (if any): the ACK code, or `None`.
pub(crate) async fn tls_exchange(
    addr: SocketAddr,
    certs: &Certs,
    cert: Option<&Pair>,
) -> Option<String> {
    let options = ClientTlsOptions {
        cert_file: cert.map(|p| p.cert.clone()),
        key_file: cert.map(|p| p.key.clone()),
        ..certs.client_options()
    };
    let client = options.build("localhost").unwrap();
    let connector = tokio_rustls::TlsConnector::from(client.config);
    let tcp = TcpStream::connect(addr).await.unwrap();
    let mut tls = tokio::time::timeout(WAIT, connector.connect(client.server_name, tcp))
        .await
        .expect("handshake wait")
        .ok()?;
    round_trip(&mut tls, &marked("T1", "")).await
}

pub(crate) fn tls_args<'a>(certs: &'a Certs, auth: &'a str) -> Vec<&'a str> {
    vec![
        "--tls-cert",
        certs.server.cert.to_str().unwrap(),
        "--tls-key",
        certs.server.key.to_str().unwrap(),
        "--client-ca",
        certs.ca.to_str().unwrap(),
        "--client-auth",
        auth,
        "--format",
        "json",
    ]
}

#[tokio::test]
async fn tls_must_refuses_without_a_certificate_and_keeps_serving() {
    let certs = Certs::generate();
    let server = ListenProc::start(&tls_args(&certs, "must"));
    assert_eq!(
        tls_exchange(server.addr, &certs, None).await,
        None,
        "no cert, no ACK"
    );
    let error = server.wait_event(is("tls_client_error"));
    assert!(error["cause"].is_string(), "{error}");
    let untrusted = tls_exchange(server.addr, &certs, Some(&certs.untrusted_client)).await;
    assert_eq!(untrusted, None);
    server.wait_event(is("tls_client_error"));
    // Still serving after bad handshakes.
    let ok = tls_exchange(server.addr, &certs, Some(&certs.client)).await;
    assert_eq!(ok.as_deref(), Some("AA"));
    let opened = server.wait_event(is("connection_opened"));
    assert_eq!(opened["authorized"], true, "{opened}");
    assert!(
        opened["subject"].as_str().is_some_and(|s| !s.is_empty()),
        "{opened}"
    );
    server.signal("TERM");
    let (status, rest, _) = server.wait();
    assert_eq!(status.code(), Some(0));
    assert_no_marker(
        "listen events",
        &format!("{rest:?} {error} {opened}"),
        MARKER,
    );
}

#[tokio::test]
async fn tls_want_accepts_both_and_says_which_was_authorized() {
    let certs = Certs::generate();
    let server = ListenProc::start(&tls_args(&certs, "want"));
    assert_eq!(
        tls_exchange(server.addr, &certs, None).await.as_deref(),
        Some("AA")
    );
    let anonymous = server.wait_event(is("connection_opened"));
    assert_eq!(anonymous["authorized"], false, "{anonymous}");
    assert_eq!(
        tls_exchange(server.addr, &certs, Some(&certs.client))
            .await
            .as_deref(),
        Some("AA")
    );
    let known = server.wait_event(is("connection_opened"));
    assert_eq!(known["authorized"], true, "{known}");
}

#[test]
fn unloadable_tls_material_exits_5_naming_the_file() {
    let out = crate::support::mllp()
        .args([
            "listen",
            "--port",
            "0",
            "--tls-cert",
            "/nonexistent/s.pem",
            "--tls-key",
            "/nonexistent/s.key",
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(5));
    assert!(String::from_utf8_lossy(&out.stderr).contains("/nonexistent/s.pem"));
}

#[test]
fn a_file_that_is_not_a_database_is_a_usage_error() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("notes.db");
    std::fs::write(&file, vec![b'x'; 8192]).unwrap();
    let out = crate::support::mllp()
        .args(["listen", "--port", "0", "--sqlite", file.to_str().unwrap()])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("notes.db"));
}

fn rows(file: &Path) -> Vec<(String, String, String, i64, Vec<u8>)> {
    let db = rusqlite::Connection::open(file).unwrap();
    let mut q = db
        .prepare("SELECT control_id, msh7, message_type, bytes, payload FROM messages ORDER BY id")
        .unwrap();
    q.query_map([], |r| {
        Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?, r.get(4)?))
    })
    .unwrap()
    .collect::<Result<_, _>>()
    .unwrap()
}

#[tokio::test]
async fn sqlite_rows_are_complete_after_a_sigkill_right_after_the_ack() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("rx.db");
    let mut server = ListenProc::start(&["--sqlite", file.to_str().unwrap()]);
    let mut client = MllpClient::connect(server.addr).await;
    let sent: Vec<Vec<u8>> = (1..=3).map(|i| marked(&format!("S{i}"), "")).collect();
    for m in &sent {
        client.send(m).await;
    }
    for _ in &sent {
        assert_eq!(client.ack().await.unwrap().code, "AA");
    }
    server.kill();
    let got = rows(&file);
    assert_eq!(got.len(), 3);
    for (i, (id, msh7, kind, bytes, payload)) in got.iter().enumerate() {
        assert_eq!(id, &format!("S{}", i + 1));
        assert_eq!(
            (msh7.as_str(), kind.as_str()),
            ("20240101120000", "ADT^A01")
        );
        assert_eq!(*bytes as usize, sent[i].len());
        assert_eq!(payload, &sent[i]);
    }
}

/// Send `id` to a fresh `listen ARGS`, return its ACK code and whether it was a duplicate.
async fn once(args: &[&str], id: &str) -> (String, bool) {
    let server = ListenProc::start(args);
    let mut client = MllpClient::connect(server.addr).await;
    client.send(&marked(id, "")).await;
    let code = client.ack().await.unwrap().code;
    let event = server.wait_event(is("message"));
    (code, event["duplicate"] == true)
}

#[tokio::test]
async fn dedupe_survives_a_restart_on_the_same_out_dir_and_sqlite_file() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("inbox");
    std::fs::create_dir(&out).unwrap();
    let args = ["--out-dir", out.to_str().unwrap(), "--dedupe"];
    assert_eq!(once(&args, "D1").await, ("AA".into(), false));
    assert_eq!(once(&args, "D1").await, ("AA".into(), true));
    assert_eq!(once(&args, "D2").await, ("AA".into(), false));
    let files = std::fs::read_dir(&out)
        .unwrap()
        .filter(|e| {
            e.as_ref()
                .unwrap()
                .file_name()
                .to_string_lossy()
                .ends_with(".hl7")
        })
        .count();
    assert_eq!(files, 2, "the repeat was not committed again");

    let file = dir.path().join("rx.db");
    let args = ["--sqlite", file.to_str().unwrap(), "--dedupe"];
    assert_eq!(once(&args, "D1").await, ("AA".into(), false));
    assert_eq!(once(&args, "D1").await, ("AA".into(), true));
    assert_eq!(rows(&file).len(), 1);
}

#[tokio::test]
async fn enhanced_al_al_is_answered_ca_then_aa_with_the_same_msa2() {
    let server = ListenProc::start(&["--format", "json"]);
    let mut client = MllpClient::connect(server.addr).await;
    client.send(&marked("E1", "AL|AL")).await;
    let accept = client.ack().await.unwrap();
    let application = client.ack().await.unwrap();
    assert_eq!(
        (accept.code.as_str(), application.code.as_str()),
        ("CA", "AA")
    );
    assert_eq!(accept.control_id, b"E1");
    assert_eq!(application.control_id, b"E1");
    // NE for the application ACK: only the accept ACK.
    client.send(&marked("E2", "AL|NE")).await;
    assert_eq!(client.ack().await.unwrap().code, "CA");
    assert!(client.silent_for(Duration::from_millis(200)).await);
}

fn batch() -> Vec<u8> {
    let mut b = b"FHS|^~\\&|SND|SF|RCV|RF|20240101120000||||F1\rBHS|^~\\&|SND|SF|RCV|RF|20240101120000||||B1\r".to_vec();
    for id in ["B-1", "B-2", "B-3"] {
        b.extend_from_slice(&adt(id.as_bytes(), ""));
    }
    b.extend_from_slice(b"BTS|3\rFTS|1\r");
    b
}

#[tokio::test]
async fn batch_ack_answers_a_three_message_batch() {
    let server = ListenProc::start(&["--format", "json", "--batch-ack"]);
    let mut client = MllpClient::connect(server.addr).await;
    client.send(&batch()).await;
    let ack = client.ack().await.unwrap();
    let text = String::from_utf8_lossy(&ack.payload).into_owned();
    let segments: Vec<&str> = text.split('\r').filter(|s| !s.is_empty()).collect();
    let names: Vec<&str> = segments.iter().map(|s| &s[..3]).collect();
    assert_eq!(
        names,
        ["FHS", "BHS", "MSH", "MSA", "MSH", "MSA", "MSH", "MSA", "BTS", "FTS"],
        "{text:?}"
    );
    let msas: Vec<&str> = segments
        .iter()
        .filter(|s| s.starts_with("MSA"))
        .copied()
        .collect();
    assert_eq!(msas, ["MSA|AA|B-1", "MSA|AA|B-2", "MSA|AA|B-3"]);

    let plain = ListenProc::start(&["--format", "json"]);
    let mut client = MllpClient::connect(plain.addr).await;
    client.send(&batch()).await;
    assert!(!["AA", "CA"].contains(&client.ack().await.unwrap().code.as_str()));
}

/// The ACK codes of `n` messages on one connection (`None` where none came before the close).
async fn codes(args: &[&str], n: usize) -> Vec<Option<String>> {
    let server = ListenProc::start(args);
    let mut client = MllpClient::connect(server.addr).await;
    let mut out = Vec::new();
    for i in 0..n {
        client.send(&marked(&format!("X{i}"), "")).await;
        out.push(client.ack().await.map(|a| a.code));
    }
    out
}

#[tokio::test]
async fn each_test_double_behaviour_is_seen_by_a_client() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().to_str().unwrap();
    let some = |c: &str| Some(c.to_string());
    assert_eq!(
        codes(&["--nack-rate", "1", "--out-dir", out], 1).await,
        [some("AE")]
    );
    assert_eq!(
        codes(&["--reject-rate", "1", "--out-dir", out], 1).await,
        [some("AR")]
    );
    assert_eq!(
        std::fs::read_dir(dir.path()).unwrap().count(),
        0,
        "nothing committed"
    );
    assert_eq!(codes(&["--ack", "CR"], 1).await, [some("CR")]);
    assert_eq!(
        codes(&["--drop-after", "2"], 3).await,
        [some("AA"), some("AA"), None]
    );

    // Silent: committed, never answered.
    let server = ListenProc::start(&["--silent-rate", "1", "--out-dir", out]);
    let mut client = MllpClient::connect(server.addr).await;
    client.send(&marked("Q1", "")).await;
    let event = server.wait_event(is("message"));
    assert_eq!(event["ack_code"], Value::Null);
    assert!(client.silent_for(Duration::from_millis(200)).await);
    assert_eq!(
        std::fs::read_dir(dir.path()).unwrap().count(),
        1,
        "committed"
    );

    // Delay: nothing at first, then the ACK.
    let server = ListenProc::start(&["--ack-delay", "1s"]);
    let mut client = MllpClient::connect(server.addr).await;
    client.send(&marked("Q2", "")).await;
    assert!(client.silent_for(Duration::from_millis(100)).await);
    assert_eq!(client.ack().await.unwrap().code, "AA");

    // Rates repeat with the seed.
    let args = ["--nack-rate", "0.5", "--seed", "9"];
    let first = codes(&args, 12).await;
    assert_eq!(first, codes(&args, 12).await);
    assert!(
        first.contains(&some("AA")) && first.contains(&some("AE")),
        "{first:?}"
    );
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

#[tokio::test]
async fn the_metrics_endpoint_is_scraped_and_parsed() {
    let metrics: SocketAddr = format!("127.0.0.1:{}", free_port()).parse().unwrap();
    let server = ListenProc::start(&["--metrics", &metrics.to_string(), "--format", "json"]);
    let mut client = MllpClient::connect(server.addr).await;
    client.send(&marked("M1", "")).await;
    client.send(&adt(b"", "")).await;
    assert_eq!(client.ack().await.unwrap().code, "AA");
    assert_eq!(client.ack().await.unwrap().code, "AE");
    server.wait_event(is("message"));
    server.wait_event(is("message"));
    let mut http = TcpStream::connect(metrics).await.unwrap();
    http.write_all(b"GET /metrics HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n")
        .await
        .unwrap();
    let mut response = String::new();
    tokio::time::timeout(WAIT, http.read_to_string(&mut response))
        .await
        .unwrap()
        .unwrap();
    assert!(response.starts_with("HTTP/1.1 200"), "{response}");
    let value = |name: &str| -> f64 {
        response
            .lines()
            .find(|l| l.starts_with(name) && l[name.len()..].starts_with(' '))
            .and_then(|l| l.rsplit(' ').next())
            .and_then(|v| v.parse().ok())
            .unwrap_or_else(|| panic!("no {name} in {response}"))
    };
    assert_eq!(value("mllp_listen_messages_total"), 2.0);
    assert_eq!(value("mllp_listen_acks_total{code=\"AA\"}"), 1.0);
    assert_eq!(value("mllp_listen_acks_total{code=\"AE\"}"), 1.0);
    assert_eq!(value("mllp_listen_connections_total"), 1.0);
    assert_eq!(value("mllp_listen_connections_open"), 1.0);
    assert_eq!(value("mllp_listen_commit_seconds_count"), 2.0);
    assert!(response.contains("mllp_listen_commit_seconds_bucket{le="));
    assert_no_marker("metrics", &response, MARKER);
}
