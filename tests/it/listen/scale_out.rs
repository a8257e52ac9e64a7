//! Integration tests: several `mllp listen --postgres` behind a real HAProxy in TCP mode (see
//! `support::haproxy` and `support::pg`): one listener SIGKILLed mid-run loses nothing accepted
//! and, with `--dedupe`, stores nothing twice; behind `send-proxy-v2` the listener sees the real
//! client address and caps per client, not per balancer.

use crate::support::haproxy::{self, Haproxy};
use crate::support::listen_proc::ListenProc;
use crate::support::mllp_bin;
use crate::support::mllp_client::{marked, MllpClient};
use crate::support::pg;
use crate::support::send_proc::{finish, messages};
use std::collections::{BTreeMap, BTreeSet};
use std::time::Duration;

#[tokio::test(flavor = "multi_thread")]
async fn a_listener_killed_mid_run_loses_nothing_accepted_and_stores_nothing_twice() {
    let (Some(server), Some(bin)) = (pg::required("MLLP_TEST_PG"), haproxy::binary()) else {
        return;
    };
    let url = pg::fresh_database(&server, "scale_out").await;
    let args = ["--postgres", url.as_str(), "--dedupe"];
    let mut listeners = [ListenProc::start(&args), ListenProc::start(&args)];
    let balancer = Haproxy::start(&bin, &[listeners[0].addr, listeners[1].addr], "");
    let mut cmd = tokio::process::Command::new(mllp_bin());
    cmd.args(["send", "--json", "--host", &balancer.addr.to_string()]);
    let sender = tokio::spawn(finish(cmd, Some(messages("H", 2000))));
    // Kill the listener that answers the run, once it has answered 100 of it.
    let mut answered = [0; 2];
    let victim = 'watch: loop {
        for (i, listener) in listeners.iter().enumerate() {
            while let Some(e) = listener.next_event(Duration::from_millis(20)) {
                answered[i] += usize::from(e["event"] == "message");
                if answered[i] == 100 {
                    break 'watch i;
                }
            }
        }
    };
    listeners[victim].kill();
    let run = sender.await.unwrap();
    let accepted: BTreeSet<String> = run
        .messages()
        .iter()
        .filter(|r| r["outcome"] == "accepted")
        .map(|r| r["control_id"].as_str().unwrap().to_string())
        .collect();
    assert!(accepted.len() > 1000, "{}", run.stderr);
    let rows = pg::rows(&url).await;
    let mut count: BTreeMap<&str, usize> = BTreeMap::new();
    for (id, _) in &rows {
        *count.entry(id.as_str()).or_default() += 1;
    }
    assert!(count.values().all(|&n| n == 1), "a message stored twice");
    let missing: Vec<&String> = accepted
        .iter()
        .filter(|id| !count.contains_key(id.as_str()))
        .collect();
    assert!(missing.is_empty(), "accepted, not stored: {missing:?}");
    listeners[1 - victim].assert_no_payload();
}

#[tokio::test(flavor = "multi_thread")]
async fn behind_send_proxy_v2_the_listener_sees_and_caps_the_real_client() {
    let Some(bin) = haproxy::binary() else {
        return;
    };
    let listener = ListenProc::start(&["--proxy-protocol", "--max-connections-per-peer", "1"]);
    let balancer = Haproxy::start(&bin, &[listener.addr], "send-proxy-v2 check-send-proxy");
    let client2: std::net::IpAddr = "127.0.0.2".parse().unwrap();
    let mut first = MllpClient::connect_from(client2, balancer.addr).await;
    first.send(&marked("V1", "")).await;
    assert_eq!(first.ack().await.unwrap().code, "AA");
    let opened = listener.wait_event(|e| {
        e["event"] == "connection_opened" && e["peer"].as_str().unwrap().starts_with("127.0.0.2:")
    });
    assert_eq!(opened["event"], "connection_opened");
    // A second connection of the same client is over its cap, though HAProxy's address is the
    // same for every client.
    let mut second = MllpClient::connect_from(client2, balancer.addr).await;
    second.send(&marked("V2", "")).await;
    assert!(second.ack().await.is_none(), "closed at once");
    let closed = listener.wait_event(|e| {
        e["event"] == "connection_closed" && e["peer"].as_str().unwrap().starts_with("127.0.0.2:")
    });
    assert_eq!(closed["cause"], "per-peer-limit", "{closed}");
    // Another client is served.
    let client3: std::net::IpAddr = "127.0.0.3".parse().unwrap();
    let mut third = MllpClient::connect_from(client3, balancer.addr).await;
    third.send(&marked("V3", "")).await;
    assert_eq!(third.ack().await.unwrap().code, "AA");
    drop((first, third));
    // The health checks (every 200 ms throughout) never made a line.
    listener.signal("TERM");
    let (_, events, _) = listener.wait();
    let checks = events
        .iter()
        .filter(|e| e["cause"] == "proxy-header" || e["cause"] == "proxy-untrusted")
        .count();
    assert_eq!(checks, 0, "{events:?}");
}
