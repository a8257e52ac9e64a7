//! The queue through two SIGKILLs of the relay: every message answered downstream reaches the
//! upstream, and with the upstream's --dedupe none is stored twice. Both kills land mid-run.
//! And a kill between the upstream's answer and the row's settle: the row is sent again; and
//! kills while several connections' batches share one synced commit.

use super::proc::RelayProc;
use crate::support::listen_proc::ListenProc;
use crate::support::send_proc::{finish, messages, Run};
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};
use tokio::task::JoinHandle;

/// A relay in front of an `mllp listen --sqlite` upstream, its queue (when it has one) and the
/// upstream's file in one directory, and a sender into the relay.
struct Rig {
    dir: tempfile::TempDir,
    queue: PathBuf,
    rx: PathBuf,
    /// Held for the run: the upstream stops when the rig is dropped.
    _upstream: ListenProc,
    to: String,
    args: Vec<String>,
    relay: RelayProc,
}

impl Rig {
    /// `queued`: the relay keeps a queue in `q.db`; `upstream` adds to the listener's flags.
    fn start(queued: bool, upstream: &[&str]) -> Rig {
        let dir = tempfile::tempdir().unwrap();
        let (queue, rx) = (dir.path().join("q.db"), dir.path().join("rx.db"));
        let upstream = ListenProc::start(&[&["--sqlite", rx.to_str().unwrap()], upstream].concat());
        let to = upstream.addr.to_string();
        let mut args = vec!["--backoff-max".to_string(), "200ms".to_string()];
        if queued {
            args.extend(["--queue".to_string(), queue.display().to_string()]);
        }
        let relay = RelayProc::start(&to, &Self::strs(&args));
        Rig {
            dir,
            queue,
            rx,
            _upstream: upstream,
            to,
            args,
            relay,
        }
    }

    fn strs(args: &[String]) -> Vec<&str> {
        args.iter().map(String::as_str).collect()
    }

    /// `mllp send --json` of `n` messages into the relay, with `flags`, running.
    fn send(&self, prefix: &str, n: usize, flags: &[&str]) -> JoinHandle<Run> {
        let input = self.dir.path().join("in.hl7");
        std::fs::write(&input, messages(prefix, n)).unwrap();
        let mut send = tokio::process::Command::new(crate::support::mllp_bin());
        send.arg("send")
            .arg(&input)
            .args(["--host", &self.relay.addr.to_string(), "--json"])
            .args(flags);
        tokio::spawn(finish(send, None))
    }

    /// The relay started again on its port after a kill.
    fn restart(&mut self) {
        let port = self.relay.addr.port();
        self.relay = RelayProc::start_at(port, &self.to, &Self::strs(&self.args));
    }
}

fn count(db: &Path, sql: &str) -> i64 {
    let Ok(db) = rusqlite::Connection::open(db) else {
        return 0;
    };
    db.query_row(sql, [], |r| r.get(0)).unwrap_or(0)
}

#[tokio::test]
async fn two_sigkills_lose_nothing_answered_and_store_nothing_twice() {
    let mut rig = Rig::start(true, &["--dedupe"]);
    let (queue, rx) = (rig.queue.clone(), rig.rx.clone());
    let sending = rig.send(
        "K",
        300,
        &[
            "--window",
            "8",
            "--backoff-max",
            "200ms",
            "--give-up-after",
            "30s",
        ],
    );

    for at in [60, 160] {
        // Each kill lands mid-run: the sender has not finished, some rows have reached the
        // upstream and some have not even arrived.
        let started = Instant::now();
        while (count(&queue, "SELECT COUNT(*) FROM queue") < at
            || count(&rx, "SELECT COUNT(*) FROM messages") == 0)
            && started.elapsed() < Duration::from_secs(20)
        {
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        rig.relay.kill();
        let queued = count(&queue, "SELECT COUNT(*) FROM queue");
        let upstream = count(&rx, "SELECT COUNT(*) FROM messages");
        assert!(
            !sending.is_finished(),
            "the sender finished before the kill"
        );
        assert!(
            queued >= at && queued < 300,
            "{queued} rows queued at the kill"
        );
        assert!(
            upstream > 0 && upstream < 300,
            "{upstream} upstream at the kill"
        );
        rig.restart();
    }
    let run = sending.await.unwrap();
    let accepted = run.accepted_ids();
    assert!(
        accepted.len() >= 100,
        "most were answered: {}",
        accepted.len()
    );

    let stored = upstream_once_drained(&queue, &rx).await;
    for id in &accepted {
        assert!(
            stored.contains_key(id),
            "{id} was answered downstream and is not upstream"
        );
    }
    let twice: Vec<_> = stored.iter().filter(|(_, n)| **n > 1).collect();
    assert!(twice.is_empty(), "stored twice: {twice:?}");
}

/// The upstream's control IDs, each with how often it was stored, once the queue has no
/// pending row left (or after 30 s).
async fn upstream_once_drained(queue: &Path, rx: &Path) -> HashMap<String, i64> {
    let started = Instant::now();
    while count(queue, "SELECT COUNT(*) FROM queue WHERE status = 'pending'") > 0
        && started.elapsed() < Duration::from_secs(30)
    {
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let db = rusqlite::Connection::open(rx).unwrap();
    let mut stored: HashMap<String, i64> = HashMap::new();
    let mut rows = db.prepare("SELECT control_id FROM messages").unwrap();
    for id in rows.query_map([], |r| r.get::<_, String>(0)).unwrap() {
        *stored.entry(id.unwrap()).or_default() += 1;
    }
    stored
}

/// Rows of `queue` with `status`.
fn with_status(queue: &Path, status: &str) -> i64 {
    count(
        queue,
        &format!("SELECT COUNT(*) FROM queue WHERE status = '{status}'"),
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_crash_between_the_upstream_answer_and_the_settle_sends_the_row_again() {
    use crate::support::mllp_client::{adt, MllpClient};
    use crate::support::peer::{Behaviour, Peer, Script};
    let dir = tempfile::tempdir().unwrap();
    let queue = dir.path().join("q.db");
    let q = queue.to_str().unwrap().to_string();
    let upstream = Peer::start(Script::always(Behaviour::Ack("AA"))).await;
    let to = upstream.addr().to_string();
    let args = ["--queue", q.as_str(), "--backoff-max", "200ms"];
    let mut relay = RelayProc::start(&to, &args);
    // The file refuses every fate: the upstream answers, the settle cannot be written.
    let hold = "CREATE TRIGGER hold BEFORE UPDATE OF status ON queue
        WHEN NEW.status <> 'pending' BEGIN SELECT RAISE(ABORT, 'held'); END";
    rusqlite::Connection::open(&queue)
        .unwrap()
        .execute_batch(hold)
        .unwrap();
    let mut client = MllpClient::connect(relay.addr).await;
    let message = adt(b"SETTLE1", "");
    client.send(&message).await;
    let answer = client.ack().await.expect("taken by the queue");
    assert!(
        String::from_utf8_lossy(&answer.payload).contains("MSA|AA|SETTLE1"),
        "{answer:?}"
    );
    // Answered upstream, and its fate refused by the file at least once.
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let event = relay
            .events
            .recv_timeout(deadline.saturating_duration_since(Instant::now()))
            .expect("a store error for the fates");
        let detail = event["detail"].as_str().unwrap_or_default();
        if event["event"] == "store_error" && detail.contains("writing the fates") {
            break;
        }
    }
    assert_eq!(upstream.payloads(), vec![message.clone()]);
    relay.kill();
    assert_eq!(
        with_status(&queue, "pending"),
        1,
        "still pending after the crash"
    );

    let db = rusqlite::Connection::open(&queue).unwrap();
    db.execute_batch("DROP TRIGGER hold").unwrap();
    drop(db);
    let relay = RelayProc::start(&to, &args);
    let started = Instant::now();
    while with_status(&queue, "accepted") < 1 && started.elapsed() < Duration::from_secs(20) {
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert_eq!(
        with_status(&queue, "accepted"),
        1,
        "settled after the restart"
    );
    assert_eq!(
        upstream.payloads(),
        vec![message.clone(), message],
        "sent again, never lost"
    );
    drop(relay);
}

#[tokio::test]
async fn a_sigkill_of_the_relay_passing_batches_through_loses_nothing_answered() {
    // Batches handed upstream while earlier ones wait for their answers: a kill mid-run must
    // leave every message answered downstream stored upstream.
    let mut rig = Rig::start(false, &["--ack-delay", "2ms"]);
    let rx = rig.rx.clone();
    let sending = rig.send(
        "P",
        1000,
        &[
            "--window",
            "64",
            "--backoff-max",
            "200ms",
            "--give-up-after",
            "30s",
        ],
    );
    let started = Instant::now();
    while count(&rx, "SELECT COUNT(*) FROM messages") < 100
        && started.elapsed() < Duration::from_secs(20)
    {
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    rig.relay.kill();
    let upstream_at_kill = count(&rx, "SELECT COUNT(*) FROM messages");
    assert!(
        !sending.is_finished(),
        "the sender finished before the kill"
    );
    assert!(
        (100..1000).contains(&upstream_at_kill),
        "{upstream_at_kill} upstream at the kill"
    );
    rig.restart();
    let run = sending.await.unwrap();
    let accepted = run.accepted_ids();
    assert!(accepted.len() >= 500, "most answered: {}", accepted.len());
    let db = rusqlite::Connection::open(&rx).unwrap();
    let stored: std::collections::HashSet<String> = db
        .prepare("SELECT control_id FROM messages")
        .unwrap()
        .query_map([], |r| r.get::<_, String>(0))
        .unwrap()
        .map(Result::unwrap)
        .collect();
    for id in &accepted {
        assert!(
            stored.contains(id),
            "{id} was answered downstream and is not upstream"
        );
    }
}

#[tokio::test]
async fn sigkills_amid_commits_shared_by_several_connections_lose_nothing_answered() {
    // Eight connections at once: their batches go to the file together, one synced commit for
    // all, each answered once that commit is on disk. A kill between the commit and the
    // answers, or amid the commit, must leave every message answered downstream upstream.
    let mut rig = Rig::start(true, &["--dedupe"]);
    let (queue, rx) = (rig.queue.clone(), rig.rx.clone());
    let sending = rig.send(
        "G",
        1600,
        &[
            "--connections",
            "8",
            "--order-key",
            "none",
            "--window",
            "16",
            "--backoff-max",
            "200ms",
            "--give-up-after",
            "30s",
        ],
    );
    for at in [200, 700] {
        let started = Instant::now();
        while count(&queue, "SELECT COUNT(*) FROM queue") < at
            && started.elapsed() < Duration::from_secs(20)
        {
            tokio::time::sleep(Duration::from_millis(2)).await;
        }
        rig.relay.kill();
        let queued = count(&queue, "SELECT COUNT(*) FROM queue");
        if sending.is_finished() {
            let run = sending.await.unwrap();
            panic!(
                "the sender finished before the kill at {queued}: {}\n{}",
                run.stderr,
                run.stdout.lines().last().unwrap_or_default()
            );
        }
        assert!(
            queued >= at && queued < 1600,
            "{queued} rows queued at the kill"
        );
        rig.restart();
    }
    let run = sending.await.unwrap();
    let accepted = run.accepted_ids();
    assert!(accepted.len() >= 800, "most answered: {}", accepted.len());
    let stored = upstream_once_drained(&queue, &rx).await;
    let missing: Vec<_> = accepted
        .iter()
        .filter(|id| !stored.contains_key(*id))
        .collect();
    assert!(
        missing.is_empty(),
        "answered downstream and not upstream: {missing:?}"
    );
}
