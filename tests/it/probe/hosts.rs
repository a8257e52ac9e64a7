//! `probe --host A --host B`: each host probed in turn, its own report, then which answered;
//! the exit code is the worst of the hosts'.

use super::{probe, Scratch};
use crate::support::peer::{Behaviour, Peer, Script};
use crate::support::ports::closed_port;
use serde_json::Value;

#[tokio::test(flavor = "multi_thread")]
async fn each_host_is_probed_in_turn_and_the_worst_decides_the_exit() {
    let s = Scratch::new();
    let up = Peer::start(Script::always(Behaviour::Ack("AA"))).await;
    let (a, b) = (
        format!("127.0.0.1:{}", up.port()),
        format!("127.0.0.1:{}", closed_port()),
    );
    let human = probe(&["--host", &a, "--host", &b, "--send"], &s.hosts()).await;
    assert_eq!(human.code, 4, "{}{}", human.stdout, human.stderr);
    let out = &human.stdout;
    assert!(
        out.contains(&format!("probe {a}")) && out.contains(&format!("probe {b}")),
        "{out}"
    );
    assert!(
        out.contains("--- 1 of 2 hosts answer, 1 positively"),
        "{out}"
    );
    let summary: Vec<&str> = out.lines().skip_while(|l| !l.starts_with("--- ")).collect();
    assert!(
        summary[1].starts_with(&format!("  {a}")) && summary[1].ends_with("ok"),
        "{out}"
    );
    assert!(
        summary[2].contains("FAILED transient (connection-refused)"),
        "{out}"
    );
    assert_eq!(
        up.payloads().len(),
        1,
        "the answering host was sent one message"
    );

    let json = probe(
        &["--host", &a, "--host", &b, "--send", "--json"],
        &s.hosts(),
    )
    .await;
    assert_eq!(json.code, 4, "{}", json.stderr);
    let records: Vec<Value> = json
        .stdout
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let targets: Vec<_> = records[..2].iter().map(|r| r["target"].clone()).collect();
    assert_eq!(targets, [Value::from(a.clone()), Value::from(b.clone())]);
    let hosts = &records[2];
    assert_eq!(hosts["type"], "hosts");
    assert_eq!(hosts["answered"], 1);
    assert_eq!(hosts["positive"], 1);
    assert_eq!(hosts["exit_code"], 4);
    assert_eq!(hosts["hosts"][0]["ok"], true);
    assert_eq!(hosts["hosts"][1]["cause"], "connection-refused");
    assert_eq!(hosts["hosts"][1]["exit_code"], 4);

    // Both answering: exit 0; repeated, each host's statistics name it.
    let also = Peer::start(Script::always(Behaviour::Ack("AA"))).await;
    let c = format!("127.0.0.1:{}", also.port());
    let args = [
        "--host",
        &a,
        "--host",
        &c,
        "--count",
        "2",
        "--interval",
        "10ms",
        "--json",
    ];
    let both = probe(&args, &s.hosts()).await;
    assert_eq!(both.code, 0, "{}{}", both.stdout, both.stderr);
    let summaries: Vec<Value> = both
        .stdout
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .filter(|r| r["type"] == "summary")
        .collect();
    assert_eq!(summaries.len(), 2, "{}", both.stdout);
    assert_eq!(summaries[1]["target"], c.as_str());
}

#[tokio::test(flavor = "multi_thread")]
async fn hosts_that_answer_negatively_answer_but_not_positively() {
    let s = Scratch::new();
    let (x, y) = (
        Peer::start(Script::always(Behaviour::Ack("AE"))).await,
        Peer::start(Script::always(Behaviour::Ack("AR"))).await,
    );
    let (a, b) = (
        format!("127.0.0.1:{}", x.port()),
        format!("127.0.0.1:{}", y.port()),
    );
    let human = probe(&["--host", &a, "--host", &b, "--send"], &s.hosts()).await;
    assert_eq!(human.code, 1, "{}{}", human.stdout, human.stderr);
    let out = &human.stdout;
    assert!(
        out.contains("--- 2 of 2 hosts answer, 0 positively"),
        "{out}"
    );
    assert!(!out.contains("verdict: ok"), "{out}");
    assert!(out.contains("FAILED negative (exit 1)"), "{out}");

    let json = probe(
        &["--host", &a, "--host", &b, "--send", "--json"],
        &s.hosts(),
    )
    .await;
    let records: Vec<Value> = json
        .stdout
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    for record in &records[..2] {
        assert_eq!(record["ok"], false);
        assert_eq!(record["verdict"]["class"], "negative", "{record}");
    }
    let hosts = &records[2];
    assert_eq!(
        (hosts["answered"].clone(), hosts["positive"].clone()),
        (2.into(), 0.into())
    );
    assert_eq!(hosts["hosts"][0]["class"], "negative");
}
