//! Send futures dropped before their sends reach the actor: the window room they took comes
//! back, no waiter stays counted, and no fate is counted for them.

use super::harness::*;
use crate::client::*;
use futures::poll;
use std::future::Future;
use std::pin::Pin;
use tokio_util::sync::CancellationToken;
use Population::*;

fn window(count: usize, on_backpressure: OnBackpressure) -> ClientOptions {
    ClientOptions {
        window: Window {
            count: Some(count),
            bytes: Some(4096),
        },
        on_backpressure,
        ..Default::default()
    }
}

/// Fill the command channel while the actor cannot run (nothing here yields), so the next
/// hand-over suspends.
fn fill_commands(client: &Client) {
    while client.commands.try_send(Command::Cancel(0)).is_ok() {}
}

fn held(client: &Client) -> (usize, usize) {
    client.shared.admission.held()
}

/// Send a whole window's worth, `ids`: the peer reads every frame before it ACKs any, so
/// all must be in flight at once, and every fate must be accepted. A send that is refused
/// (or times out waiting for room) ends the sending side early and fails here.
async fn window_is_whole(rig: &mut Rig, peer: &mut Peer, ids: &[&str]) -> Vec<Fate> {
    let payloads: Vec<_> = ids.iter().map(|id| msg(id, "")).collect();
    let sending = async { fates(rig.client.send_many(payloads).await).await };
    let peer_side = async {
        assert_eq!(peer.read_ids(ids.len()).await, ids);
        for id in ids {
            peer.write_ack("AA", id).await;
        }
    };
    tokio::pin!(sending, peer_side);
    let fates = tokio::select! {
        fates = &mut sending => fates,
        () = &mut peer_side => sending.await,
    };
    assert!(
        fates.iter().all(|f| f.population() == Accepted),
        "{fates:?}"
    );
    fates
}

async fn dropped_at_hand_over_give_back_their_room(on_backpressure: OnBackpressure) {
    let mut rig = rig(vec![], window(3, on_backpressure));
    let mut peer = rig.peer().await;
    let cancel = CancellationToken::new();
    let c = &rig.client;
    type Submit<'a> = Pin<Box<dyn Future<Output = ()> + 'a>>;
    let submits: Vec<Submit<'_>> = vec![
        Box::pin(async {
            c.send(msg("a", "")).await;
        }),
        Box::pin(async {
            c.send_cancellable(msg("b", ""), &cancel).await;
        }),
        Box::pin(async {
            c.send_many([msg("c", ""), msg("d", "")]).await;
        }),
        Box::pin(async {
            c.send_many_cancellable([msg("e", ""), msg("f", "")], &cancel)
                .await;
        }),
    ];
    for mut submit in submits {
        fill_commands(c);
        assert!(poll!(&mut submit).is_pending());
        assert_ne!(held(c), (0, 0), "suspended after taking room");
        drop(submit);
        assert_eq!(held(c), (0, 0));
    }
    let fates = window_is_whole(&mut rig, &mut peer, &["1", "2", "3"]).await;
    // The dropped sends were never handed over: no fate, nothing queued.
    assert_accounts(&rig.client, &fates);
    let stats = rig.client.stats();
    assert_eq!((stats.queue_depth, stats.queue_bytes), (0, 0));
    assert_eq!(stats.sent, 3);
}

#[tokio::test(start_paused = true)]
async fn reject_sends_dropped_at_hand_over_give_back_their_room() {
    dropped_at_hand_over_give_back_their_room(OnBackpressure::Reject).await;
}

#[tokio::test(start_paused = true)]
async fn wait_sends_dropped_at_hand_over_give_back_their_room() {
    dropped_at_hand_over_give_back_their_room(OnBackpressure::Wait).await;
}

#[tokio::test(start_paused = true)]
async fn dropped_waiter_leaves_no_count_and_no_room_taken() {
    let mut rig = rig(vec![], window(1, OnBackpressure::Wait));
    let mut peer = rig.peer().await;
    let first = rig.client.send(msg("1", "")).await;
    assert_eq!(peer.read_ids(1).await, ["1"]);

    // Dropped while waiting for room.
    let mut waiter = Box::pin(rig.client.send(msg("w", "")));
    assert!(poll!(&mut waiter).is_pending());
    assert_eq!(rig.client.shared.admission.waiting(), 1);
    drop(waiter);
    assert_eq!(rig.client.shared.admission.waiting(), 0);

    // Admitted after waiting, then dropped while handing over to a full channel.
    let mut late = Box::pin(rig.client.send(msg("x", "")));
    assert!(poll!(&mut late).is_pending());
    first.cancel();
    let first = first.await;
    assert_eq!(first.population(), UnknownFate);
    fill_commands(&rig.client);
    assert!(poll!(&mut late).is_pending());
    assert_eq!(rig.client.shared.admission.waiting(), 0);
    assert_ne!(held(&rig.client), (0, 0), "admitted, not yet handed over");
    drop(late);
    assert_eq!(held(&rig.client), (0, 0));

    // FIFO still owes the cancelled send's slot its ACK.
    peer.write_ack("AA", "1").await;
    let mut fates = window_is_whole(&mut rig, &mut peer, &["2"]).await;
    // Counted: the cancelled send and the last one, not the two dropped.
    fates.push(first);
    assert_accounts(&rig.client, &fates);
}
