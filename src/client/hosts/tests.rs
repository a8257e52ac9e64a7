//! The host list over real loopback sockets (a closed port refuses, a listening one accepts),
//! and the per-host policy over a plain sequence of decisions.

use super::*;
use crate::cause::{Cause, Class};
use crate::client::{BackoffConfig, ExponentialBackoff, LastError, MaxRetries};

async fn closed_port() -> u16 {
    let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    l.local_addr().unwrap().port()
}

fn to(port: u16) -> TcpConnector {
    TcpConnector::new("127.0.0.1", port)
}

#[tokio::test]
async fn after_n_failed_connects_the_link_moves_on_and_back_after_the_failback() {
    let open = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let b = open.local_addr().unwrap().port();
    let a = closed_port().await;
    let hosts = HostList::new(vec![to(a), to(b)])
        .unwrap()
        .with_failover_after(2);
    assert!(hosts.connect().await.is_err());
    assert_eq!(hosts.current().0, 0, "one failure is not enough");
    assert!(hosts.connect().await.is_err());
    assert_eq!(hosts.current(), (1, format!("127.0.0.1:{b}")));
    let conn = hosts.connect().await.unwrap();
    assert_eq!(conn.peer.map(|p| p.port()), Some(b));

    // Failing back at once: the next connect tries the first host again.
    let hosts = HostList::new(vec![to(a), to(b)])
        .unwrap()
        .with_failover_after(1)
        .with_failback_after(Duration::ZERO);
    assert!(hosts.connect().await.is_err());
    assert_eq!(hosts.current().0, 1);
    assert!(hosts.connect().await.is_err(), "went back to the first");
    assert!(HostList::new(Vec::new()).is_none());
}

fn ctx(attempt: u32) -> RetryContext {
    RetryContext {
        attempt,
        last_error: LastError {
            cause: Cause::ConnectionRefused,
            class: Class::Transient,
        },
        last_delay: None,
        elapsed: Duration::from_millis(u64::from(attempt) * 10),
        since_last_success: None,
        class: Class::Transient,
    }
}

#[tokio::test]
async fn the_policy_gives_up_on_each_host_in_turn_and_on_the_last_for_good() {
    let hosts = Arc::new(HostList::new(vec![to(1), to(2), to(3)]).unwrap());
    let inner: Arc<dyn RetryStrategy> = Arc::new(MaxRetries {
        inner: Arc::new(ExponentialBackoff::seeded(BackoffConfig::default(), 7)),
        max: 2,
    });
    let policy = hosts.per_host(inner);
    let mut on = Vec::new();
    let mut attempt = 1;
    while policy.next_delay(&ctx(attempt)).is_some() {
        on.push(hosts.current().0);
        attempt += 1;
    }
    // Two attempts per host (the one that moves counts as the next host's first).
    assert_eq!(on, [0, 0, 1, 1, 2, 2]);
}

#[tokio::test]
async fn connections_that_end_unanswered_count_as_failed_connects_and_each_link_hears_of_the_move()
{
    let a = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let b = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let (pa, pb) = (
        a.local_addr().unwrap().port(),
        b.local_addr().unwrap().port(),
    );
    let hosts = HostList::new(vec![to(pa), to(pb)])
        .unwrap()
        .with_failover_after(2);
    // Connects that succeed prove nothing; an answered end starts the count again.
    hosts.attempt(None).connect.await.unwrap();
    hosts.link_ended(0, false);
    hosts.link_ended(0, true);
    hosts.link_ended(0, false);
    assert_eq!(hosts.current().0, 0, "not two in a row");
    hosts.link_ended(0, false);
    assert_eq!(hosts.current().0, 1, "two in a row move the link");
    // Each link whose last connection was to the first host is told of the move; a link new
    // to the list is not.
    for last in [Some(0), Some(0)] {
        let turn = hosts.attempt(last).host.unwrap();
        let from = format!("127.0.0.1:{pa}");
        assert_eq!(turn.moved, Some(Move::Failover { from }));
    }
    assert_eq!(hosts.attempt(None).host.unwrap().moved, None);
    assert_eq!(hosts.attempt(Some(1)).host.unwrap().moved, None);
}

#[tokio::test]
async fn without_reconnecting_each_host_is_tried_once_in_order() {
    let hosts = Arc::new(HostList::new(vec![to(1), to(2), to(3)]).unwrap());
    let policy = hosts.once_each();
    let mut on = vec![hosts.current().0];
    while let Some(delay) = policy.next_delay(&ctx(1)) {
        assert_eq!(delay, Duration::ZERO);
        on.push(hosts.current().0);
    }
    assert_eq!(on, [0, 1, 2]);
}
