//! `pipeline off`: one message in flight, the next written once the previous one is settled.

use super::harness::*;
use crate::ack::AckCode;
use crate::client::*;
use std::time::Duration;

async fn one_at_a_time(correlation: Correlation) {
    let options = ClientOptions {
        pipeline: false,
        correlation,
        ..Default::default()
    };
    let mut rig = rig(vec![], options);
    let mut peer = rig.peer().await;
    let mut hs = vec![];
    for id in ["1", "2", "3"] {
        hs.push(rig.client.send(msg(id, "")).await);
    }
    for id in ["1", "2", "3"] {
        let next = tokio::time::timeout(Duration::from_secs(10), peer.read_ids(1)).await;
        assert_eq!(
            next.expect("the next send was not written"),
            [id],
            "{correlation:?}"
        );
        // Nothing more is written before this one's ACK (the paused clock jumps the wait).
        let early = tokio::time::timeout(Duration::from_secs(1), peer.read()).await;
        assert!(
            early.is_err(),
            "{correlation:?}: written before the ACK of {id}"
        );
        peer.write_ack("AA", id).await;
    }
    for fate in fates(hs).await {
        assert_eq!(fate.ack_code(), Some(AckCode::AA), "{correlation:?}");
    }
}

#[tokio::test(start_paused = true)]
async fn fifo_writes_the_next_send_after_each_ack() {
    one_at_a_time(Correlation::Fifo).await;
}

#[tokio::test(start_paused = true)]
async fn control_id_writes_the_next_send_after_each_ack() {
    one_at_a_time(Correlation::ControlId).await;
}
