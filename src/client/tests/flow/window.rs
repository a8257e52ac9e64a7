//! The window: backpressure by count and bytes, one in flight without pipelining, and
//! cancelling a send.

use super::super::harness::*;
use crate::ack::AckCode;
use crate::client::*;
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
        assert_eq!(rig.client.stats().in_flight, 1);
        assert_eq!(
            rig.client.stats().queue_depth,
            3 - id.parse::<usize>().unwrap()
        );
        peer.write_ack("AA", id).await;
    }
    assert!(fates(hs).await.iter().all(|f| f.population() == Accepted));
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
