//! Parallel links (`--connections N --order-key FIELD`): per-patient order at a receiver that
//! resets connections with frames unanswered, patients spread over the links, messages without
//! the field kept in order as one value, `--order-key none` spreading file order over the
//! links, and the flags' refusals.

use super::{args, path, send, to, write};
use crate::support::no_payload::MARKER;
use crate::support::peer::{Behaviour, Peer, Script};
use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

/// Message `K{n}` of patient `P{patient}` (PID-3), or with no PID segment.
fn adt(n: usize, patient: Option<usize>) -> Vec<u8> {
    let pid = patient.map_or(String::new(), |p| {
        format!("PID|1||P{p}^^^H^MR||{MARKER}^X\r")
    });
    format!("MSH|^~\\&|S|F|R|F|20240101000000||ADT^A08|K{n}|P|2.5\r{pid}PV1|1|I\r").into_bytes()
}

fn number(id: &str) -> usize {
    id.trim_start_matches('K').parse().unwrap()
}

/// A receiver that, on each connection, answers `answered` frames, then reads on without
/// answering and resets the connection (SO_LINGER 0) 30 ms after the first unanswered frame.
/// Every frame read is logged by control ID, in the order read over all connections.
async fn resetting_peer(answered: usize) -> (u16, Arc<Mutex<Vec<String>>>, Arc<Mutex<usize>>) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    let log: Arc<Mutex<Vec<String>>> = Arc::default();
    let connections: Arc<Mutex<usize>> = Arc::default();
    let (l, c) = (log.clone(), connections.clone());
    tokio::spawn(async move {
        while let Ok((mut tcp, _)) = listener.accept().await {
            *c.lock().unwrap() += 1;
            let log = l.clone();
            tokio::spawn(async move {
                let mut buf = Vec::new();
                let mut chunk = [0u8; 8192];
                let mut seen = 0;
                let mut deadline: Option<tokio::time::Instant> = None;
                loop {
                    let read = match deadline {
                        Some(at) => match tokio::time::timeout_at(at, tcp.read(&mut chunk)).await {
                            Ok(r) => r,
                            Err(_) => break,
                        },
                        None => tcp.read(&mut chunk).await,
                    };
                    let n = match read {
                        Ok(n) if n > 0 => n,
                        _ => return,
                    };
                    buf.extend_from_slice(&chunk[..n]);
                    // Frames up to each FS, from the VT before it (the CR after an FS is
                    // skipped as the bytes before the next VT).
                    while let Some(end) = buf.iter().position(|&b| b == 0x1c) {
                        let frame: Vec<u8> = buf.drain(..=end).collect();
                        let start = frame.iter().position(|&b| b == 0x0b).unwrap() + 1;
                        let payload = &frame[start..end];
                        let id = crate::support::peer_wire::control_id(payload).unwrap();
                        log.lock().unwrap().push(id.clone());
                        seen += 1;
                        if seen <= answered {
                            let ack = crate::support::peer_wire::ack(payload, "AA");
                            let framed = crate::support::peer_wire::frame(&ack);
                            if tcp.write_all(&framed).await.is_err() {
                                return;
                            }
                        } else if deadline.is_none() {
                            deadline =
                                Some(tokio::time::Instant::now() + Duration::from_millis(30));
                        }
                    }
                }
                let _ = socket2::SockRef::from(&tcp).set_linger(Some(Duration::ZERO));
            });
        }
    });
    (port, log, connections)
}

/// For each patient, the numbers of its messages in the order the receiver read them.
fn by_patient(log: &[String], patient_of: impl Fn(usize) -> usize) -> BTreeMap<usize, Vec<usize>> {
    let mut out: BTreeMap<usize, Vec<usize>> = BTreeMap::new();
    for id in log {
        let n = number(id);
        out.entry(patient_of(n)).or_default().push(n);
    }
    out
}

#[tokio::test(flavor = "multi_thread")]
async fn each_patient_keeps_its_order_at_a_receiver_that_resets_connections() {
    let (port, log, connections) = resetting_peer(3).await;
    let dir = tempfile::tempdir().unwrap();
    let patient_of = |n: usize| n % 5;
    let input: Vec<u8> = (1..=60).flat_map(|n| adt(n, Some(patient_of(n)))).collect();
    let file = write(dir.path(), "adt.hl7", &input);
    let run = send(&to(
        port,
        &[
            "--json",
            "--connections",
            "3",
            "--order-key",
            "PID-3",
            &path(&file),
        ],
    ))
    .await;
    assert_eq!(run.code, 0, "{}", run.stderr);
    let summary = run.summary();
    assert_eq!(summary["accepted"], 60, "{summary}");
    let links = summary["links"].as_array().expect("per-link figures");
    assert_eq!(links.len(), 3);
    let read: u64 = links.iter().map(|l| l["messages"].as_u64().unwrap()).sum();
    assert_eq!(read, 60);
    let records = run.messages();
    assert_eq!(records.len(), 60);
    assert!(records
        .iter()
        .all(|r| r["link"].as_u64().is_some_and(|l| l < 3)));
    assert!(
        *connections.lock().unwrap() > 3,
        "the receiver reset connections"
    );
    let log = log.lock().unwrap().clone();
    for (patient, seen) in by_patient(&log, patient_of) {
        assert!(
            seen.windows(2).all(|w| w[0] <= w[1]),
            "patient {patient} read out of order: {seen:?}"
        );
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn patients_spread_over_the_links_each_in_file_order_and_no_field_is_one_value() {
    let peer = Peer::start(Script::always(Behaviour::Ack("AA"))).await;
    let dir = tempfile::tempdir().unwrap();
    // Every third message has no PID segment.
    let patient = |n: usize| (!n.is_multiple_of(3)).then_some(n % 4);
    let input: Vec<u8> = (1..=48).flat_map(|n| adt(n, patient(n))).collect();
    let file = write(dir.path(), "adt.hl7", &input);
    let run = send(&to(
        peer.port(),
        &[
            "--json",
            "--connections",
            "4",
            "--order-key",
            "PID-3.1",
            &path(&file),
        ],
    ))
    .await;
    assert_eq!(run.code, 0, "{}", run.stderr);
    let links: std::collections::BTreeSet<u64> = run
        .messages()
        .iter()
        .map(|r| r["link"].as_u64().unwrap())
        .collect();
    assert!(links.len() > 1, "one link took every patient: {links:?}");
    // The receiver read each patient's messages in file order, and those without the field
    // (one value: 16 of them) in theirs.
    let mut seen: BTreeMap<Option<usize>, Vec<usize>> = BTreeMap::new();
    for payload in peer.payloads() {
        let id = crate::support::peer_wire::control_id(&payload).unwrap();
        let n = number(&id);
        seen.entry(patient(n)).or_default().push(n);
    }
    assert_eq!(seen.get(&None).map(Vec::len), Some(16));
    for (patient, ns) in &seen {
        assert!(ns.windows(2).all(|w| w[0] < w[1]), "{patient:?}: {ns:?}");
    }
    assert_eq!(seen.values().map(Vec::len).sum::<usize>(), 48);
}

#[tokio::test(flavor = "multi_thread")]
async fn order_key_none_spreads_file_order_over_the_links() {
    let peer = Peer::start(Script::always(Behaviour::Ack("AA"))).await;
    let dir = tempfile::tempdir().unwrap();
    let input: Vec<u8> = (1..=200).flat_map(|n| adt(n, Some(1))).collect();
    let file = write(dir.path(), "adt.hl7", &input);
    let run = send(&to(
        peer.port(),
        &[
            "--json",
            "--connections",
            "3",
            "--order-key",
            "none",
            &path(&file),
        ],
    ))
    .await;
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(run.summary()["accepted"], 200);
    let mut per_link: BTreeMap<u64, Vec<usize>> = BTreeMap::new();
    for r in run.messages() {
        let n = number(r["control_id"].as_str().unwrap());
        per_link
            .entry(r["link"].as_u64().unwrap())
            .or_default()
            .push(n);
    }
    assert!(per_link.len() > 1, "{per_link:?}");
    for (link, ns) in per_link {
        assert!(ns.windows(2).all(|w| w[0] < w[1]), "link {link}: {ns:?}");
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn connections_without_an_order_key_and_bad_keys_are_refused() {
    let peer = Peer::start(Script::always(Behaviour::Ack("AA"))).await;
    let dir = tempfile::tempdir().unwrap();
    let file = write(dir.path(), "adt.hl7", &adt(1, Some(1)));
    let run = send(&to(peer.port(), &["--connections", "4", &path(&file)])).await;
    assert_eq!(run.code, 2, "{}", run.stderr);
    assert!(run.stderr.contains("--order-key"), "{}", run.stderr);
    for bad in ["PID", "PID-0", "pid-3", "PID-3.x"] {
        let run = send(&to(
            peer.port(),
            &["--connections", "2", "--order-key", bad, &path(&file)],
        ))
        .await;
        assert_eq!(run.code, 2, "{bad}: {}", run.stderr);
        assert!(run.stderr.contains(bad), "{}", run.stderr);
    }
    let run = send(&args(&[&path(&file), "--dry-run", "--connections", "0"])).await;
    assert_eq!(run.code, 2, "{}", run.stderr);
    assert_eq!(peer.connections(), 0);
}
