//! Integration tests: `mllp listen --postgres` against a real PostgreSQL server (skipped with a
//! line saying why when none is configured; see `support::pg`): rows byte for byte, one shared
//! duplicate memory for two listeners, a server stopped and started mid-run, and a COMMIT whose
//! link is cut answered truthfully either way.

use crate::support::listen_proc::{is, ListenProc};
use crate::support::mllp_client::{marked, MllpClient};
use crate::support::pg;
use std::collections::BTreeSet;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

#[tokio::test(flavor = "multi_thread")]
async fn two_hundred_messages_are_stored_byte_for_byte() {
    let Some(server) = pg::required("MLLP_TEST_PG") else {
        return;
    };
    let url = pg::fresh_database(&server, "bytes").await;
    let listener = ListenProc::start(&["--postgres", &url]);
    let mut client = MllpClient::connect(listener.addr).await;
    let sent: Vec<Vec<u8>> = (1..=200).map(|i| marked(&format!("B{i}"), "")).collect();
    for m in &sent {
        client.send(m).await;
    }
    for _ in &sent {
        assert_eq!(client.ack().await.unwrap().code, "AA");
    }
    let rows = pg::rows(&url).await;
    assert_eq!(rows.len(), 200);
    for (i, (id, payload)) in rows.iter().enumerate() {
        assert_eq!(id, &format!("B{}", i + 1));
        assert_eq!(payload, &sent[i]);
    }
    listener.assert_no_payload();
}

#[tokio::test(flavor = "multi_thread")]
async fn two_listeners_with_dedupe_share_one_duplicate_memory() {
    let Some(server) = pg::required("MLLP_TEST_PG") else {
        return;
    };
    let url = pg::fresh_database(&server, "dedupe").await;
    let args = ["--postgres", url.as_str(), "--dedupe"];
    let (a, b) = (ListenProc::start(&args), ListenProc::start(&args));
    let sent: Vec<Vec<u8>> = (1..=100).map(|i| marked(&format!("D{i}"), "")).collect();
    let send_all = |addr: SocketAddr, sent: Vec<Vec<u8>>| async move {
        let mut client = MllpClient::connect(addr).await;
        for m in &sent {
            client.send(m).await;
        }
        let mut codes = Vec::new();
        for _ in &sent {
            codes.push(client.ack().await.unwrap().code);
        }
        codes
    };
    let (codes_a, codes_b) = tokio::join!(
        send_all(a.addr, sent.clone()),
        send_all(b.addr, sent.clone())
    );
    assert!(codes_a.iter().chain(&codes_b).all(|c| c == "AA"));
    let rows = pg::rows(&url).await;
    assert_eq!(rows.len(), 100);
    let ids: BTreeSet<String> = rows.into_iter().map(|(id, _)| id).collect();
    assert_eq!(ids.len(), 100);
    // Every message was answered twice, once of the two as a duplicate.
    let duplicates: usize = [a, b]
        .iter()
        .map(|l| {
            let seen = std::cell::Cell::new(0);
            let events = l.events_until(|e| {
                seen.set(seen.get() + usize::from(e["event"] == "message"));
                seen.get() == 100
            });
            events.iter().filter(|e| e["duplicate"] == true).count()
        })
        .sum();
    assert_eq!(duplicates, 100);
}

/// Send messages one at a time (each after the last one's ACK) until `restarted` and then 20
/// positive answers in a row; each one's control ID and ACK code.
async fn one_by_one(addr: SocketAddr, restarted: Arc<AtomicBool>) -> Vec<(String, String)> {
    let mut client = MllpClient::connect(addr).await;
    let mut answers = Vec::new();
    let mut positive_run = 0;
    for i in 1..=3000 {
        let id = format!("O{i}");
        client.send(&marked(&id, "")).await;
        let code = client.ack().await.expect("the listener stays up").code;
        positive_run = if code == "AA" { positive_run + 1 } else { 0 };
        answers.push((id, code));
        if restarted.load(Ordering::SeqCst) && positive_run >= 20 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    answers
}

#[tokio::test(flavor = "multi_thread")]
async fn a_database_stopped_mid_run_loses_nothing_answered_aa_and_keeps_nothing_refused() {
    let (Some(server), Some(ctl)) = (
        pg::required("MLLP_TEST_PG_OUTAGE"),
        pg::required("MLLP_TEST_PG_OUTAGE_CTL"),
    ) else {
        return;
    };
    let _one_at_a_time = crate::listen::postgres_link::OUTAGE.lock().await;
    let url = pg::fresh_database(&server, "outage").await;
    let listener = ListenProc::start(&["--postgres", &url, "--dedupe"]);
    let restarted = Arc::new(AtomicBool::new(false));
    let sender = tokio::spawn(one_by_one(listener.addr, restarted.clone()));
    tokio::time::sleep(Duration::from_millis(1000)).await;
    tokio::task::spawn_blocking(move || {
        pg::ctl(&ctl, "stop");
        std::thread::sleep(Duration::from_secs(3));
        pg::ctl(&ctl, "start");
    })
    .await
    .unwrap();
    restarted.store(true, Ordering::SeqCst);
    let answers = sender.await.unwrap();
    let stored: BTreeSet<String> = pg::rows(&url).await.into_iter().map(|(id, _)| id).collect();
    let positive: BTreeSet<String> = answers
        .iter()
        .filter(|(_, c)| c == "AA")
        .map(|(id, _)| id.clone())
        .collect();
    let negative = answers.iter().filter(|(_, c)| c != "AA").count();
    assert!(negative > 0, "the outage was never seen");
    assert!(
        answers.last().is_some_and(|(_, c)| c == "AA"),
        "no reconnection"
    );
    assert_eq!(stored, positive, "stored exactly what was answered AA");
    listener.assert_no_payload();
}

/// A TCP proxy to PostgreSQL that, once armed, cuts both links when the client's simple-query
/// `COMMIT` passes: after forwarding it (`forward`), or instead of forwarding it. With `hold`
/// set, a COMMIT not forwarded leaves the links open instead, the transaction idle on the
/// server, until the server ends its side.
pub(crate) struct CommitCutter {
    pub(crate) addr: SocketAddr,
    pub(crate) armed: Arc<AtomicBool>,
    pub(crate) cut: Arc<AtomicBool>,
    pub(crate) hold: Arc<AtomicBool>,
}

impl CommitCutter {
    pub(crate) async fn start(upstream: (String, u16), forward: bool) -> CommitCutter {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let armed = Arc::new(AtomicBool::new(false));
        let cut = Arc::new(AtomicBool::new(false));
        let hold = Arc::new(AtomicBool::new(false));
        let (armed2, cut2, hold2) = (armed.clone(), cut.clone(), hold.clone());
        tokio::spawn(async move {
            loop {
                let (client, _) = listener.accept().await.unwrap();
                // A server on its way back up refuses: so does the proxy, by closing.
                let Ok(server) = TcpStream::connect((upstream.0.as_str(), upstream.1)).await else {
                    continue;
                };
                let flags = [armed2.clone(), cut2.clone(), hold2.clone()];
                tokio::spawn(relay(client, server, forward, flags));
            }
        });
        CommitCutter {
            addr,
            armed,
            cut,
            hold,
        }
    }
}

async fn relay(
    client: TcpStream,
    server: TcpStream,
    forward: bool,
    [armed, cut, hold]: [Arc<AtomicBool>; 3],
) {
    let (mut cr, mut cw) = client.into_split();
    let (mut sr, mut sw) = server.into_split();
    let back = tokio::spawn(async move {
        let _ = tokio::io::copy(&mut sr, &mut cw).await;
    });
    const COMMIT: &[u8] = b"Q\0\0\0\x0bCOMMIT\0";
    let mut buf = vec![0u8; 64 * 1024];
    loop {
        let n = match cr.read(&mut buf).await {
            Ok(0) | Err(_) => break,
            Ok(n) => n,
        };
        let chunk = &buf[..n];
        let at = chunk.windows(COMMIT.len()).position(|w| w == COMMIT);
        if let (Some(at), true) = (at, armed.load(Ordering::SeqCst)) {
            armed.store(false, Ordering::SeqCst);
            let upto = if forward { at + COMMIT.len() } else { at };
            let _ = sw.write_all(&chunk[..upto]).await;
            let _ = sw.flush().await;
            cut.store(true, Ordering::SeqCst);
            if hold.load(Ordering::SeqCst) && !forward {
                // The client's end closes once the server's does.
                let _ = back.await;
                return;
            }
            back.abort();
            return;
        }
        if sw.write_all(chunk).await.is_err() {
            break;
        }
    }
    back.abort();
}

async fn commit_cut(forward: bool) -> Option<(String, bool)> {
    let server = pg::required("MLLP_TEST_PG")?;
    let url = pg::fresh_database(&server, if forward { "cut_after" } else { "cut_before" }).await;
    let cutter = CommitCutter::start(pg::host_port(&url), forward).await;
    let db = url.rsplit('/').next().unwrap();
    let via = format!("postgres://postgres@{}/{db}", cutter.addr);
    let listener = ListenProc::start(&["--postgres", &via]);
    // A first message through the uncut link, so the table exists and the link is warm.
    let mut client = MllpClient::connect(listener.addr).await;
    client.send(&marked("WARM", "")).await;
    assert_eq!(client.ack().await.unwrap().code, "AA");
    cutter.armed.store(true, Ordering::SeqCst);
    client.send(&marked("CUT", "")).await;
    let code = client.ack().await.unwrap().code;
    assert!(
        cutter.cut.load(Ordering::SeqCst),
        "the COMMIT was never cut"
    );
    listener.wait_event(is("message"));
    let stored = pg::rows(&url).await.iter().any(|(id, _)| id == "CUT");
    listener.assert_no_payload();
    Some((code, stored))
}

#[tokio::test(flavor = "multi_thread")]
async fn a_commit_cut_after_it_was_sent_is_settled_before_the_answer() {
    let Some((code, stored)) = commit_cut(true).await else {
        return;
    };
    assert_eq!((code.as_str(), stored), ("AA", true));
}

#[tokio::test(flavor = "multi_thread")]
async fn a_commit_cut_before_it_reached_the_server_is_answered_negatively() {
    let Some((code, stored)) = commit_cut(false).await else {
        return;
    };
    assert_eq!((code.as_str(), stored), ("AE", false));
}
