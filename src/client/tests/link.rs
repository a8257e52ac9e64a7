//! The link: state sequences, reconnect, give up, permanent causes, custom strategy, dead peer.

use super::harness::*;
use crate::cause::Cause;
use crate::client::*;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use State::*;

fn reconnecting(strategy: Arc<dyn RetryStrategy>) -> ClientOptions {
    ClientOptions {
        reconnect: Reconnect {
            enabled: true,
            strategy,
        },
        ..Default::default()
    }
}

fn seeded() -> Arc<dyn RetryStrategy> {
    Arc::new(ExponentialBackoff::seeded(BackoffConfig::default(), 3))
}

#[tokio::test(start_paused = true)]
async fn drop_with_reconnect_passes_through_reconnecting() {
    let mut rig = rig(vec![], reconnecting(seeded()));
    let peer = rig.peer().await;
    rig.wait_state(Connected).await;
    drop(peer);
    let events = rig.wait_state(Connected).await;
    assert_eq!(
        states(&events),
        [
            (Connected, Reconnecting),
            (Reconnecting, Connecting),
            (Connecting, Connected)
        ]
    );
    let delay = events.iter().find_map(|e| match e {
        ClientEvent::Reconnecting { attempt: 1, delay } => Some(*delay),
        _ => None,
    });
    let delay = delay.expect("a reconnecting event");
    assert!(delay >= Duration::from_millis(80) && delay <= Duration::from_millis(120));
    assert!(events.iter().any(|e| matches!(
        e,
        ClientEvent::Error {
            cause: Cause::PeerClosed,
            ..
        }
    )));
    assert_eq!(rig.client.stats().reconnect_attempts, 1);
}

#[tokio::test(start_paused = true)]
async fn failed_attempts_then_give_up() {
    let strategy: Arc<dyn RetryStrategy> = Arc::new(MaxRetries {
        inner: seeded(),
        max: 2,
    });
    let refused = Cause::ConnectionRefused;
    let plans = (0..3).map(|_| Plan::Fail(refused)).collect();
    let mut rig = rig(plans, reconnecting(strategy));
    let h = rig.client.send(msg("1", "")).await;
    let events = rig.wait_state(Closed).await;
    // The last failed attempt still returns to RECONNECTING; giving up leaves from there.
    assert_eq!(
        transitions(&events),
        [
            (Connecting, Reconnecting, Reason::ConnectFailed(refused)),
            (Reconnecting, Connecting, Reason::BackoffElapsed),
            (Connecting, Reconnecting, Reason::ConnectFailed(refused)),
            (Reconnecting, Connecting, Reason::BackoffElapsed),
            (Connecting, Reconnecting, Reason::ConnectFailed(refused)),
            (Reconnecting, Closed, Reason::GaveUp(refused)),
        ]
    );
    assert_eq!(rig.client.stats().reconnect_attempts, 2);
    let fate = h.await;
    assert_eq!(fate.population(), Population::NeverDelivered);
    assert_eq!(fate.cause(), Some("connection-refused"));
    assert_accounts(&rig.client, &[fate]);
}

#[tokio::test(start_paused = true)]
async fn give_up_after_leaves_from_reconnecting() {
    let steady = BackoffConfig {
        jitter: 0.0,
        ..Default::default()
    };
    // 100 + 200 + 400 ms fit in the second; the fourth failure would wait 800 ms more.
    let strategy: Arc<dyn RetryStrategy> = Arc::new(GiveUpAfter {
        inner: Arc::new(ExponentialBackoff::seeded(steady, 3)),
        limit: Duration::from_secs(1),
    });
    let reset = Cause::ConnectionReset;
    let plans = (0..4).map(|_| Plan::Fail(reset)).collect();
    let mut rig = rig(plans, reconnecting(strategy));
    let start = tokio::time::Instant::now();
    let events = rig.wait_state(Closed).await;
    assert_eq!(start.elapsed(), Duration::from_millis(700));
    let mut expected = vec![];
    for _ in 0..3 {
        expected.push((Connecting, Reconnecting, Reason::ConnectFailed(reset)));
        expected.push((Reconnecting, Connecting, Reason::BackoffElapsed));
    }
    expected.push((Connecting, Reconnecting, Reason::ConnectFailed(reset)));
    expected.push((Reconnecting, Closed, Reason::GaveUp(reset)));
    assert_eq!(transitions(&events), expected);
    assert_eq!(rig.client.state(), Closed);
}

#[tokio::test(start_paused = true)]
async fn permanent_cause_while_reconnecting_leaves_from_reconnecting() {
    let verify = Cause::TlsVerify;
    let mut rig = rig(
        vec![Plan::Accept, Plan::Fail(verify)],
        reconnecting(seeded()),
    );
    let peer = rig.peer().await;
    rig.wait_state(Connected).await;
    drop(peer);
    rig.wait_state(Reconnecting).await;
    // Admitted while the link is down: queued for the next connection, which never comes.
    let h = rig.client.send(msg("1", "")).await;
    let events = rig.wait_state(Closed).await;
    assert_eq!(
        transitions(&events),
        [
            (Reconnecting, Connecting, Reason::BackoffElapsed),
            (Connecting, Reconnecting, Reason::ConnectFailed(verify)),
            (Reconnecting, Closed, Reason::GaveUp(verify)),
        ]
    );
    assert_eq!(rig.client.stats().reconnect_attempts, 1);
    let fate = h.await;
    assert_eq!(fate.population(), Population::NeverDelivered);
    assert_eq!(fate.cause(), Some("tls-verify"));
    assert_accounts(&rig.client, &[fate]);
}

#[tokio::test(start_paused = true)]
async fn first_connect_without_reconnect_closes_directly() {
    let refused = Cause::ConnectionRefused;
    let mut rig = rig(vec![Plan::Fail(refused)], ClientOptions::default());
    let events = rig.wait_state(Closed).await;
    assert_eq!(
        transitions(&events),
        [(Connecting, Closed, Reason::GaveUp(refused))]
    );
}

#[tokio::test(start_paused = true)]
async fn give_up_while_reconnecting_goes_reconnecting_to_closed_on_close() {
    let mut rig = rig(
        vec![Plan::Fail(Cause::ConnectionReset)],
        reconnecting(seeded()),
    );
    rig.wait_state(Reconnecting).await;
    let report = rig.client.close().await;
    assert!(report.is_clean());
    let events = rig.drain_events();
    assert_eq!(states(&events), [(Reconnecting, Closed)]);
}

#[tokio::test(start_paused = true)]
async fn permanent_cause_is_never_retried() {
    let mut rig = rig(vec![Plan::Fail(Cause::TlsVerify)], reconnecting(seeded()));
    let events = rig.wait_state(Closed).await;
    assert_eq!(states(&events), [(Connecting, Closed)]);
    assert!(!events
        .iter()
        .any(|e| matches!(e, ClientEvent::Reconnecting { .. })));
    assert_eq!(rig.client.stats().reconnect_attempts, 0);
}

#[tokio::test(start_paused = true)]
async fn drop_without_reconnect_is_disconnected_then_closed() {
    let mut rig = rig(vec![], ClientOptions::default());
    let peer = rig.peer().await;
    drop(peer);
    let events = rig.wait_state(Closed).await;
    assert_eq!(
        states(&events),
        [
            (Connecting, Connected),
            (Connected, Disconnected),
            (Disconnected, Closed)
        ]
    );
    assert_eq!(rig.client.state(), Closed);
}

#[derive(Debug, Default)]
struct Recording(Mutex<Vec<RetryContext>>);

impl RetryStrategy for Recording {
    fn next_delay(&self, ctx: &RetryContext) -> Option<Duration> {
        self.0.lock().unwrap().push(*ctx);
        (ctx.attempt < 3).then_some(Duration::from_secs(7))
    }
}

#[tokio::test(start_paused = true)]
async fn custom_strategy_sees_context_and_is_honoured() {
    let strategy = Arc::new(Recording::default());
    let plans = (0..5).map(|_| Plan::Fail(Cause::HostUnreachable)).collect();
    let mut rig = rig(plans, reconnecting(strategy.clone()));
    let start = tokio::time::Instant::now();
    let events = rig.wait_state(Closed).await;
    assert_eq!(start.elapsed(), Duration::from_secs(14));
    let delays: Vec<_> = events
        .iter()
        .filter_map(|e| match e {
            ClientEvent::Reconnecting { delay, .. } => Some(*delay),
            _ => None,
        })
        .collect();
    assert_eq!(delays, [Duration::from_secs(7), Duration::from_secs(7)]);
    let seen = strategy.0.lock().unwrap().clone();
    assert_eq!(seen.len(), 3);
    assert_eq!(seen[1].attempt, 2);
    assert_eq!(seen[1].last_delay, Some(Duration::from_secs(7)));
    assert_eq!(seen[1].elapsed, Duration::from_secs(7));
    assert_eq!(seen[1].last_error.cause, Cause::HostUnreachable);
    assert_eq!(seen[1].since_last_success, None);
}

#[tokio::test(start_paused = true)]
async fn dead_peer_trips_and_reconnects() {
    let options = ClientOptions {
        dead_peer_timeout: Some(Duration::from_secs(5)),
        ..reconnecting(seeded())
    };
    let mut rig = rig(vec![], options);
    let _silent = rig.peer().await;
    rig.wait_state(Connected).await;
    let start = tokio::time::Instant::now();
    let events = rig.wait_state(Connected).await;
    assert!(start.elapsed() >= Duration::from_secs(5));
    assert!(events.iter().any(|e| matches!(
        e,
        ClientEvent::StateChange(Transition {
            reason: Reason::LinkFailed(Cause::DeadPeer),
            ..
        })
    )));
    assert_eq!(
        states(&events),
        [
            (Connected, Reconnecting),
            (Reconnecting, Connecting),
            (Connecting, Connected)
        ]
    );
}

#[tokio::test(start_paused = true)]
async fn every_event_and_error_is_payload_free() {
    let mut rig = rig(vec![], ClientOptions::default());
    let mut peer = rig.peer().await;
    let h = rig.client.send(msg("1", "AL")).await;
    peer.read().await;
    peer.write_ack("AA", "other").await;
    let fate = h.await;
    assert_clean(&fate);
    drop(peer);
    let events = rig.wait_state(Closed).await;
    for e in &events {
        assert_clean(e);
    }
    assert!(!format!("{:?}", rig.client.stats()).contains(MARKER));
    let err = ClientOptions {
        ack_timeout: Duration::ZERO,
        ..Default::default()
    }
    .validate()
    .unwrap_err();
    assert_clean(&err);
}

#[tokio::test(start_paused = true)]
async fn links_that_take_frames_and_answer_nothing_count_toward_the_retry_limit() {
    let strategy: Arc<dyn RetryStrategy> = Arc::new(MaxRetries {
        inner: seeded(),
        max: 2,
    });
    let options = ClientOptions {
        max_poison_closes: u32::MAX,
        ..reconnecting(strategy)
    };
    let mut rig = rig(vec![], options);
    let h = rig.client.send(msg("1", "")).await;
    // Every connection reads the frame and closes without a word: without the limit (and with
    // no poison rule), the message would be written again forever.
    for _ in 0..3 {
        let mut peer = rig.peer().await;
        peer.read().await;
    }
    let fate = h.await;
    assert_eq!(fate.population(), Population::UnknownFate, "{fate}");
    assert_eq!(rig.client.state(), Closed);
    assert_eq!(rig.client.stats().reconnect_attempts, 2);
}

/// The link's timer stays armed for the earliest deadline it was set to while later ones come
/// (each write moves the ACK deadline later, each read the dead-peer one): firing at that
/// earlier deadline settles nothing before its own time, and the later deadlines still hold.
#[tokio::test(start_paused = true)]
async fn a_timer_armed_for_an_earlier_deadline_settles_nothing_early() {
    use futures::poll;
    use tokio::time::{sleep, sleep_until, Instant};
    let timeout = Duration::from_secs(10);
    let options = ClientOptions {
        ack_timeout: timeout,
        // Between the first ACK (at half the ACK timeout) and the second send's ACK deadline,
        // and later than that deadline once the first ACK came.
        dead_peer_timeout: Some(timeout * 6 / 5),
        ..Default::default()
    };
    let mut rig = rig(vec![], options);
    let mut peer = rig.peer().await;
    let start = Instant::now();
    let first = rig.client.send(msg("1", "")).await;
    assert_eq!(peer.read_ids(1).await, ["1"]);
    sleep(timeout / 2).await;
    peer.write_ack("AA", "1").await;
    assert_eq!(first.await.population(), Population::Accepted);
    let mut second = rig.client.send(msg("2", "")).await;
    assert_eq!(peer.read_ids(1).await, ["2"]);
    let written = Instant::now();
    // Past the first send's ACK deadline, where the timer was armed.
    sleep_until(start + timeout + Duration::from_millis(1)).await;
    assert!(
        poll!(&mut second).is_pending(),
        "settled at the first deadline"
    );
    // Past the dead-peer deadline the link had before the first ACK came.
    sleep_until(written + timeout - Duration::from_millis(1)).await;
    assert!(
        poll!(&mut second).is_pending(),
        "settled before its own deadline"
    );
    assert_eq!(rig.client.state(), Connected);
    let fate = second.await;
    assert_eq!(fate.population(), Population::UnknownFate);
    assert_eq!(fate.cause(), Some("ack-timeout"));
    assert!(written.elapsed() >= timeout);
}
