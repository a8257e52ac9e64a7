//! `send_some`, the producer's batch hand-over: handing a sequence over a run at a time, cut
//! short wherever room runs out, gives every message the fate one send at a time gives it.

use super::harness::*;
use crate::client::*;
use bytes::Bytes;
use proptest::prelude::*;
use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};
use tokio_util::sync::CancellationToken;

/// A message of about `pad` bytes more than its header; `framing` puts a VT in it.
fn payload(n: usize, pad: usize, framing: bool) -> Bytes {
    let body = if framing { "\x0b" } else { "x" }.repeat(pad);
    Bytes::from(format!(
        "MSH|^~\\&|A|B|C|D|20240101||ADT^A01|M{n}|P|2.5\rNTE|1||{body}\r"
    ))
}

/// Each handle's fate if it is settled (the wall-clock time of a flush left out), `None` while
/// it waits for an ACK.
fn now(handles: &mut [SendHandle]) -> Vec<Option<String>> {
    let mut cx = Context::from_waker(std::task::Waker::noop());
    handles
        .iter_mut()
        .map(|h| match Pin::new(h).poll(&mut cx) {
            Poll::Ready(Fate::UnknownFate {
                cause,
                elapsed,
                bytes,
                ..
            }) => Some(format!("unknown {cause:?} {elapsed:?} {bytes}")),
            Poll::Ready(fate) => Some(format!("{fate:?}")),
            Poll::Pending => None,
        })
        .collect()
}

/// Hand `payloads` over on a peer that never answers (the window only fills), in runs of at
/// most `run` through `send_some`, or (`run == 0`) one at a time; each message's fate so far.
async fn hand_over(
    options: ClientOptions,
    payloads: &[Bytes],
    run: usize,
    cancel: &CancellationToken,
) -> Vec<Option<String>> {
    let mut rig = rig(vec![], options);
    let _peer = rig.peer().await;
    let mut handles = Vec::new();
    if run == 0 {
        for p in payloads {
            handles.push(rig.client.send_cancellable(p.clone(), cancel).await);
        }
    } else {
        let mut stop = crate::client::CallerStop {
            token: cancel,
            wait: std::pin::pin!(cancel.cancelled()),
        };
        let mut at = 0;
        while at < payloads.len() {
            let end = (at + run).min(payloads.len());
            let mut some = Vec::new();
            rig.client
                .send_some(&payloads[at..end], |p| p, false, &mut stop, &mut some)
                .await;
            assert!(!some.is_empty(), "every call takes at least one");
            at += some.len();
            handles.extend(some);
        }
    }
    tokio::task::yield_now().await;
    let fates = now(&mut handles);
    rig.client.destroy().await;
    fates
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    /// Whatever the window (count, bytes), the policy, a stop before the hand-over and where
    /// the runs are cut: the same messages are refused, cancelled, never delivered for a
    /// framing byte, or taken in, as one send at a time.
    #[test]
    fn runs_at_a_time_give_the_fates_of_one_at_a_time(
        messages in proptest::collection::vec((0usize..120, proptest::bool::weighted(0.1)), 1..30),
        count in 1usize..6,
        bytes in proptest::option::of(150usize..500),
        wait in any::<bool>(),
        stopped in any::<bool>(),
        run in 1usize..9,
    ) {
        let payloads: Vec<Bytes> = messages
            .iter()
            .enumerate()
            .map(|(n, &(pad, framing))| payload(n, pad, framing))
            .collect();
        let options = ClientOptions {
            window: Window { count: Some(count), bytes },
            on_backpressure: if wait { OnBackpressure::Wait } else { OnBackpressure::Reject },
            ..ClientOptions::default()
        };
        let runtime = paused();
        let (one, some) = runtime.block_on(async {
            let cancel = CancellationToken::new();
            if stopped {
                cancel.cancel();
            }
            let one = hand_over(options.clone(), &payloads, 0, &cancel).await;
            let some = hand_over(options, &payloads, run, &cancel).await;
            (one, some)
        });
        prop_assert_eq!(one, some);
    }
}
