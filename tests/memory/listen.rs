//! The listener against hostile peers: peers that never read their ACKs, and large frames
//! waiting for a slow command.

use crate::load::{answered_aa, connect, frame, message};
use crate::proc::{Proc, ONE_AT_A_TIME};
use std::sync::Arc;
use std::time::Duration;
use tokio::io::AsyncWriteExt;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "long: run with --ignored"]
async fn five_hundred_peers_that_never_read_their_acks_stay_within_the_budget() {
    let _alone = ONE_AT_A_TIME.lock().await;
    let listener = Proc::listen(&[]);
    let addr = listener.addr;
    // 4-byte frames without a header: each is answered (rejected), none is kept.
    let burst: Vec<u8> = (0..16 * 1024).flat_map(|_| frame(b"ABCD")).collect();
    let burst = Arc::new(burst);
    let mut clients = Vec::new();
    for i in 0..500 {
        let burst = burst.clone();
        clients.push(tokio::spawn(async move {
            let mut stream = connect(addr, 2 + (i % 4) as u8, Some(4096)).await;
            // Write until the listener stops reading (a write stalls) or 4 MiB went out.
            for _ in 0..36 {
                let write = stream.write_all(&burst);
                match tokio::time::timeout(Duration::from_secs(2), write).await {
                    Ok(Ok(())) => continue,
                    _ => break,
                }
            }
            stream
        }));
    }
    let mut held = Vec::new();
    for client in clients {
        held.push(client.await.unwrap());
    }
    // Every peer is stalled and still connected; a well-behaved client is served beside them.
    let mut good = connect(addr, 1, None).await;
    good.write_all(&frame(&message(0, 200))).await.unwrap();
    let served = tokio::time::timeout(Duration::from_secs(20), answered_aa(&mut good)).await;
    listener.assert_peak_within("500 peers not reading their ACKs");
    drop(held);
    assert_eq!(
        served.ok(),
        Some(true),
        "the good client was not answered AA; {:?}",
        listener.causes()
    );
}

/// Frames of 8 MiB, each from its own connection, at a command that takes 0.3 s for each.
async fn large_frames_at_a_slow_command(frames: usize) {
    let _alone = ONE_AT_A_TIME.lock().await;
    let listener = Proc::listen(&[
        "--exec",
        "sleep 0.3; cat >/dev/null",
        "--exec-concurrency",
        "16",
    ]);
    let addr = listener.addr;
    let size = 8 * 1024 * 1024;
    let wire = Arc::new(frame(&message(0, size)));
    let mut clients = Vec::new();
    for id in 0..frames {
        let wire = wire.clone();
        clients.push(tokio::spawn(async move {
            // A sender's retry: a connection closed before the answer is tried again after a
            // growing pause, as a real sender backs off; retrying at once only races the
            // queue that closed it, and on a loaded machine can spend every attempt there.
            for attempt in 0..30u64 {
                if attempt > 0 {
                    let pause = Duration::from_millis(100 * attempt);
                    tokio::time::sleep(pause.min(Duration::from_secs(1))).await;
                }
                let mut stream = connect(addr, 2 + (id % 4) as u8, None).await;
                if stream.write_all(&wire).await.is_err() {
                    continue;
                }
                let answer =
                    tokio::time::timeout(Duration::from_secs(60), answered_aa(&mut stream));
                if answer.await == Ok(true) {
                    return true;
                }
            }
            false
        }));
    }
    let mut accepted = 0;
    for client in clients {
        accepted += usize::from(client.await.unwrap());
    }
    listener.assert_peak_within(&format!("{frames} frames of 8 MiB at a slow command"));
    assert_eq!(
        accepted,
        frames,
        "every frame ends answered AA; closes: {:?}",
        listener.causes()
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn three_hundred_large_frames_waiting_for_a_slow_command_stay_within_the_budget() {
    large_frames_at_a_slow_command(300).await;
}
