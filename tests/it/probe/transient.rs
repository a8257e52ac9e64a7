//! Verdict transient: a refused, closing or silent peer, and a failing resolver (beside a name
//! that does not exist, which is permanent).

use super::{expect, phase, Scratch};
use crate::support::peer::{Behaviour, Peer, Script};
use crate::support::ports::closed_port;

#[tokio::test(flavor = "multi_thread")]
async fn connection_failures_are_classified() {
    let s = Scratch::new();
    let closed = closed_port();
    let target = format!("127.0.0.1:{closed}");
    expect(
        &[&target],
        &s.hosts(),
        "transient",
        Some("connection-refused"),
        4,
    )
    .await;

    let closing = Peer::start(Script::always(Behaviour::CloseAtOnce)).await;
    let target = format!("127.0.0.1:{}", closing.port());
    expect(&[&target], &s.hosts(), "transient", Some("peer-closed"), 4).await;

    let silent = Peer::start(Script::always(Behaviour::Stall)).await;
    let target = format!("127.0.0.1:{}", silent.port());
    let message = s.message();
    let args = [
        target.as_str(),
        "--message",
        &message,
        "--ack-timeout",
        "300ms",
    ];
    let report = expect(&args, &s.hosts(), "transient", Some("ack-timeout"), 3).await;
    assert_eq!(phase(&report, "send")["ok"], true);
    assert_eq!(phase(&report, "ack")["ok"], false);
}

#[tokio::test(flavor = "multi_thread")]
async fn names_that_do_not_resolve_fail_without_dns() {
    let s = Scratch::new();
    expect(
        &["nowhere.test"],
        &s.hosts(),
        "permanent",
        Some("dns-not-found"),
        5,
    )
    .await;
    expect(
        &["broken.test:7"],
        &s.hosts(),
        "transient",
        Some("dns-failed"),
        4,
    )
    .await;
}
