//! `send --host A --host B`: each connection event names its host, reconnecting that gives up
//! on the primary moves the link to the backup, and the failback time brings it back; every
//! message still has exactly one fate.

use super::{path, send, write};
use crate::support::peer::{Behaviour, Peer, Script};
use crate::support::peer_wire::{control_id, message};
use crate::support::ports::closed_port;
use serde_json::Value;
use std::collections::BTreeSet;

fn input(dir: &std::path::Path, n: usize) -> String {
    let bytes: Vec<u8> = (1..=n)
        .flat_map(|i| message(&format!("E{i}"), "PAYLOADMARKER7Q3"))
        .collect();
    path(&write(dir, "in.hl7", &bytes))
}

fn hosts(a: u16, b: u16, rest: &[&str]) -> Vec<String> {
    let mut v: Vec<String> = [
        "--log-format",
        "json",
        "--json",
        "--backoff-initial",
        "10ms",
        "--backoff-max",
        "20ms",
        "--host",
        &format!("127.0.0.1:{a}"),
        "--host",
        &format!("127.0.0.1:{b}"),
    ]
    .map(String::from)
    .to_vec();
    v.extend(rest.iter().map(|s| s.to_string()));
    v
}

fn events(stderr: &str) -> Vec<Value> {
    stderr
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .collect()
}

fn named<'a>(events: &'a [Value], name: &str) -> Vec<&'a Value> {
    events.iter().filter(|e| e["event"] == name).collect()
}

/// Every record accepted, each control ID once.
fn all_accepted_once(run: &super::Run, n: usize) {
    let records = run.messages();
    assert_eq!(records.len(), n, "{}", run.stdout);
    assert!(
        records.iter().all(|r| r["outcome"] == "accepted"),
        "{}",
        run.stdout
    );
    let ids: BTreeSet<_> = records
        .iter()
        .map(|r| r["control_id"].to_string())
        .collect();
    assert_eq!(ids.len(), n, "{}", run.stdout);
}

#[tokio::test(flavor = "multi_thread")]
async fn each_connection_event_names_its_host() {
    let (pa, backup) = (
        closed_port(),
        Peer::start(Script::always(Behaviour::Ack("AA"))).await,
    );
    let pb = backup.port();
    let dir = tempfile::tempdir().unwrap();
    let file = input(dir.path(), 2);
    let run = send(&hosts(
        pa,
        pb,
        &["--events", "--failover-after", "1", &file],
    ))
    .await;
    assert_eq!(run.code, 0, "{}{}", run.stdout, run.stderr);
    let (a, b) = (format!("127.0.0.1:{pa}"), format!("127.0.0.1:{pb}"));
    let events = events(&run.stderr);
    let connecting: Vec<_> = named(&events, "connecting")
        .iter()
        .map(|e| e["endpoint"].clone())
        .collect();
    assert_eq!(connecting, [Value::from(a.clone())], "{}", run.stderr);
    let failover = named(&events, "failover");
    assert_eq!(failover.len(), 1, "{}", run.stderr);
    assert_eq!(
        (&failover[0]["from"], &failover[0]["to"]),
        (&a.clone().into(), &b.clone().into())
    );
    let errors = named(&events, "link_error");
    assert!(
        !errors.is_empty() && errors.iter().all(|e| e["endpoint"] == a),
        "{}",
        run.stderr
    );
    let states = named(&events, "state_change");
    assert!(
        states.iter().all(|e| e["endpoint"].is_string()),
        "{}",
        run.stderr
    );
    let up: Vec<_> = states.iter().filter(|e| e["to"] == "CONNECTED").collect();
    assert!(
        !up.is_empty() && up.iter().all(|e| e["endpoint"] == b),
        "{}",
        run.stderr
    );
    all_accepted_once(&run, 2);

    // The same run for people: the move said once, without --events.
    let mut human = hosts(pa, pb, &["--failover-after", "1", &file]);
    human.drain(..2);
    let run = send(&human).await;
    assert_eq!(run.code, 0, "{}{}", run.stdout, run.stderr);
    let said = format!("mllp: failover from {a} to {b}");
    assert_eq!(run.stderr.matches(&said).count(), 1, "{}", run.stderr);
    // And with --events, each transition names its host.
    human.push("--events".into());
    let run = send(&human).await;
    assert!(
        run.stderr
            .contains(&format!("-> CONNECTED (connected) on {b}")),
        "{}",
        run.stderr
    );
    assert!(
        run.stderr
            .contains(&format!("link error on {a}: connection-refused")),
        "{}",
        run.stderr
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn reconnecting_that_gives_up_on_the_primary_moves_the_link_to_the_backup() {
    // Answers 2 messages on its first connection, then closes and refuses from then on.
    let primary = super::failover::dying_primary(2).await;
    let backup = Peer::start(Script::always(Behaviour::Ack("AA"))).await;
    let dir = tempfile::tempdir().unwrap();
    let file = input(dir.path(), 6);
    // No --failover-after: only the reconnect policy's giving up on the primary moves the link.
    for giving_up in [["--max-retries", "2"], ["--give-up-after", "100ms"]] {
        let mut args = hosts(primary, backup.port(), &["--no-pipeline"]);
        args.extend(giving_up.map(String::from));
        args.push(file.clone());
        let run = send(&args).await;
        assert_eq!(run.code, 0, "{giving_up:?}: {}{}", run.stdout, run.stderr);
        all_accepted_once(&run, 6);
        let events = events(&run.stderr);
        let failover = named(&events, "failover");
        assert_eq!(failover.len(), 1, "{giving_up:?}: {}", run.stderr);
        assert_eq!(failover[0]["from"], format!("127.0.0.1:{primary}"));
    }
    // What the primary did not answer went to the backup: 4 each run, none twice in a run.
    let ids: Vec<_> = backup
        .payloads()
        .iter()
        .filter_map(|p| control_id(p))
        .collect();
    assert!(ids.len() >= 4, "{ids:?}");
}

#[tokio::test(flavor = "multi_thread")]
async fn after_the_failback_time_the_next_connect_goes_back_to_the_primary() {
    let a = closed_port();
    // The backup answers 2 messages and closes; the link comes back to it unless it fails back.
    let backup = Peer::start(Script::then(
        vec![Behaviour::DropEvery(2)],
        Behaviour::Ack("AA"),
    ))
    .await;
    let dir = tempfile::tempdir().unwrap();
    let file = input(dir.path(), 6);
    let args = hosts(
        a,
        backup.port(),
        &[
            "--no-pipeline",
            "--rate",
            "10/s",
            "--failover-after",
            "1",
            "--failback-after",
            "30ms",
            &file,
        ],
    );
    let running = tokio::spawn(async move { send(&args).await });
    // The primary comes back once the link is on the backup.
    backup.wait_for(|r| r.connections >= 1).await;
    let primary = Peer::start_on(a, Script::always(Behaviour::Ack("AA"))).await;
    let run = running.await.unwrap();
    assert_eq!(run.code, 0, "{}{}", run.stdout, run.stderr);
    all_accepted_once(&run, 6);
    let events = events(&run.stderr);
    // Before the backup's first connection a busy machine may fail back at once and over
    // again; the last failback is the one that found the primary up.
    let failback = named(&events, "failback");
    let last = failback.last().unwrap_or_else(|| panic!("{}", run.stderr));
    assert_eq!(last["to"], format!("127.0.0.1:{a}"));
    assert_eq!(last["from"], format!("127.0.0.1:{}", backup.port()));
    assert!(!primary.payloads().is_empty());
}
