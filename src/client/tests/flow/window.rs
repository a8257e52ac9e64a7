//! The window: backpressure by count and bytes, one in flight without pipelining, and
//! cancelling a send.

use super::super::harness::*;
use crate::ack::AckCode;
use crate::client::*;
use bytes::Bytes;
use std::sync::Arc;
use std::time::Duration;
use Population::*;

#[tokio::test(start_paused = true)]
async fn backpressure_reject_by_count_and_bytes() {
    let by_count = ClientOptions {
        window: Window {
            count: Some(2),
            bytes: None,
        },
        ..Default::default()
    };
    let mut rig1 = rig(vec![], by_count);
    let _peer = rig1.peer().await;
    let hs = send_all(&rig1.client, ["1", "2", "3"]).await;
    let mut hs = hs.into_iter();
    let _a = hs.next();
    let _b = hs.next();
    let third = hs.next().unwrap().await;
    assert_eq!(
        third,
        Fate::Refused {
            reason: Refusal::WindowFull
        }
    );

    let len = msg("1", "").len();
    let by_bytes = ClientOptions {
        window: Window {
            count: Some(100),
            bytes: Some(len * 2 + 1),
        },
        ..Default::default()
    };
    let mut rig2 = rig(vec![], by_bytes);
    let _peer = rig2.peer().await;
    let hs = send_all(&rig2.client, ["1", "2", "3"]).await;
    let third = hs.into_iter().nth(2).unwrap().await;
    assert_eq!(third.population(), Refused);
}

#[tokio::test(start_paused = true)]
async fn backpressure_wait_gets_room_or_times_out() {
    let options = ClientOptions {
        window: Window {
            count: Some(1),
            bytes: None,
        },
        on_backpressure: OnBackpressure::Wait,
        ack_timeout: Duration::from_secs(5),
        ..Default::default()
    };
    let mut rig = rig(vec![], options);
    let mut peer = rig.peer().await;
    let first = rig.client.send(msg("1", "")).await;
    let client = &rig.client;
    let (second, ()) = tokio::join!(client.send(msg("2", "")), async {
        peer.read().await;
        peer.write_ack("AA", "1").await;
    });
    assert_eq!(first.await.population(), Accepted);
    peer.read().await;
    // The window is full again and nobody answers: the wait ends at the ACK timeout.
    let third = rig.client.send(msg("3", "")).await.await;
    assert_eq!(
        third,
        Fate::Refused {
            reason: Refusal::WaitTimedOut
        }
    );
    assert_eq!(second.await.population(), UnknownFate);
}

#[tokio::test(start_paused = true)]
async fn pipeline_off_keeps_exactly_one_in_flight() {
    let options = ClientOptions {
        pipeline: false,
        ..Default::default()
    };
    let mut rig = rig(vec![], options);
    let mut peer = rig.peer().await;
    let hs = send_all(&rig.client, ["1", "2", "3"]).await;
    for id in ["1", "2", "3"] {
        assert_eq!(peer.read_ids(1).await, [id]);
        tokio::time::sleep(Duration::from_millis(10)).await;
        let stats = rig.client.stats();
        let queued = 3 - id.parse::<usize>().unwrap();
        assert_eq!(stats.in_flight, 1);
        assert_eq!(stats.queue_depth, queued);
        // Every message here is as long as the first.
        assert_eq!(stats.queue_bytes, queued * msg("1", "").len());
        peer.write_ack("AA", id).await;
    }
    assert!(fates(hs).await.iter().all(|f| f.population() == Accepted));
}

#[tokio::test(start_paused = true)]
async fn queue_bytes_follow_a_cancel_and_a_drop() {
    let options = ClientOptions {
        pipeline: false,
        reconnect: Reconnect {
            enabled: true,
            strategy: Arc::new(ExponentialBackoff::seeded(BackoffConfig::default(), 3)),
        },
        ..Default::default()
    };
    let mut rig = rig(vec![], options);
    let mut peer = rig.peer().await;
    let long = Bytes::from([&msg("2", "")[..], b"NTE|1||long\r"].concat());
    let one = rig.client.send(msg("1", "")).await;
    let two = rig.client.send(long.clone()).await;
    let three = rig.client.send(msg("3", "")).await;
    assert_eq!(peer.read_ids(1).await, ["1"]);
    tokio::time::sleep(Duration::from_millis(10)).await;
    let stats = rig.client.stats();
    assert_eq!(
        (stats.queue_depth, stats.queue_bytes),
        (2, long.len() + msg("3", "").len())
    );
    two.cancel();
    tokio::time::sleep(Duration::from_millis(10)).await;
    let stats = rig.client.stats();
    assert_eq!(
        (stats.queue_depth, stats.queue_bytes),
        (1, msg("3", "").len())
    );
    // The link drops with 1 written: both go again, in order, on the next connection.
    drop(peer);
    let mut peer = rig.peer().await;
    assert_eq!(peer.read_ids(1).await, ["1"]);
    tokio::time::sleep(Duration::from_millis(10)).await;
    let stats = rig.client.stats();
    assert_eq!(
        (stats.queue_depth, stats.queue_bytes),
        (1, msg("3", "").len())
    );
    peer.write_ack("AA", "1").await;
    assert_eq!(peer.read_ids(1).await, ["3"]);
    tokio::time::sleep(Duration::from_millis(10)).await;
    let stats = rig.client.stats();
    assert_eq!((stats.queue_depth, stats.queue_bytes), (0, 0));
    peer.write_ack("AA", "3").await;
    let fates = fates(vec![one, two, three]).await;
    assert_eq!(
        fates.iter().map(Fate::population).collect::<Vec<_>>(),
        [Accepted, NeverDelivered, Accepted]
    );
}

#[tokio::test(start_paused = true)]
async fn cancellation_unwritten_and_written() {
    let options = ClientOptions {
        pipeline: false,
        ..Default::default()
    };
    let mut rig = rig(vec![], options);
    let mut peer = rig.peer().await;
    let written = rig.client.send(msg("1", "")).await;
    let queued = rig.client.send(msg("2", "")).await;
    peer.read().await;
    tokio::task::yield_now().await;
    queued.cancel();
    written.cancel();
    let fates = fates(vec![written, queued]).await;
    assert_eq!(fates[0].population(), UnknownFate);
    assert_eq!(fates[1].population(), NeverDelivered);
    assert!(fates.iter().all(|f| f.cause() == Some("cancelled")));
    // The cancelled send's ACK is consumed, not credited to the next send.
    let next = rig.client.send(msg("3", "")).await;
    peer.write_ack("AA", "1").await;
    peer.read().await;
    peer.write_ack("AE", "3").await;
    assert_eq!(next.await.ack_code(), Some(AckCode::AE));
}
