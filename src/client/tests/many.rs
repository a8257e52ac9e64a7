//! `send_many`: handles in order, admission exactly as one send at a time, windows smaller
//! than the batch, and sends after close.

use super::harness::*;
use crate::client::*;
use bytes::Bytes;
use Population::*;

fn window(count: usize, on_backpressure: OnBackpressure) -> ClientOptions {
    ClientOptions {
        window: Window {
            count: Some(count),
            bytes: None,
        },
        on_backpressure,
        ..Default::default()
    }
}

fn msgs(ids: &[&str]) -> Vec<Bytes> {
    ids.iter().map(|id| msg(id, "")).collect()
}

#[tokio::test(start_paused = true)]
async fn wait_flows_a_batch_larger_than_the_window_through_it() {
    let mut rig = rig(vec![], window(2, OnBackpressure::Wait));
    let mut peer = rig.peer().await;
    let ids = ["1", "2", "3", "4", "5"];
    let peer_side = async {
        // Never more than the window is written before an ACK makes room.
        for pair in ids.chunks(2) {
            let got = peer.read_ids(pair.len()).await;
            assert_eq!(got, pair);
            for id in pair {
                peer.write_ack("AA", id).await;
            }
        }
    };
    let (handles, ()) = tokio::join!(rig.client.send_many(msgs(&ids)), peer_side);
    let order: Vec<u64> = handles.iter().map(SendHandle::id).collect();
    assert!(order.windows(2).all(|w| w[0] < w[1]), "{order:?}");
    let fates = fates(handles).await;
    assert!(fates.iter().all(|f| f.population() == Accepted));
    assert_eq!(rig.client.stats().sent, 5);
    assert_accounts(&rig.client, &fates);
}

#[tokio::test(start_paused = true)]
async fn reject_refuses_beyond_the_window_and_payloads_with_framing_bytes() {
    let mut rig = rig(vec![], window(2, OnBackpressure::Reject));
    let mut peer = rig.peer().await;
    let mut payloads = msgs(&["1", "2", "3"]);
    payloads.insert(1, Bytes::from_static(b"MSH|^~\\&|A\x1c|B\r"));
    let handles = rig.client.send_many(payloads).await;
    assert_eq!(peer.read_ids(2).await, ["1", "2"]);
    peer.write_ack("AA", "1").await;
    peer.write_ack("AA", "2").await;
    let fates = fates(handles).await;
    assert_eq!(fates[0].population(), Accepted);
    assert_eq!(
        fates[1],
        Fate::NeverDelivered {
            cause: FateCause::PayloadContainsFramingByte
        }
    );
    assert_eq!(fates[2].population(), Accepted);
    assert_eq!(
        fates[3],
        Fate::Refused {
            reason: Refusal::WindowFull
        }
    );
    assert_accounts(&rig.client, &fates);
}

#[tokio::test(start_paused = true)]
async fn after_close_every_send_is_never_delivered() {
    let mut rig = rig(vec![], ClientOptions::default());
    let _peer = rig.peer().await;
    rig.client.close().await;
    let fates = fates(rig.client.send_many(msgs(&["1", "2", "3"])).await).await;
    assert!(fates.iter().all(|f| *f
        == Fate::NeverDelivered {
            cause: FateCause::Closed
        }));
    assert_accounts(&rig.client, &fates);
}
