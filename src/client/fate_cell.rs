//! The cell a send shares with its handle: its fate, handed over once, and how many times its
//! frame was written so far. Sends admitted together share one allocation for their cells
//! ([`fate_cells`]); a oneshot channel and a separate write counter took two per send.

use super::fate::Fate;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::task::{Context, Poll, Waker};

#[derive(Debug, Default)]
struct Cell {
    /// Times the send's frame was written, on any connection.
    writes: AtomicU32,
    slot: Mutex<Slot>,
}

#[derive(Debug, Default)]
struct Slot {
    fate: Option<Fate>,
    /// The settling side is gone: no fate will come after the one (if any) in `fate`.
    closed: bool,
    waker: Option<Waker>,
}

impl Cell {
    fn slot(&self) -> MutexGuard<'_, Slot> {
        // Nothing panics while holding the lock; a poisoned one holds a consistent slot.
        self.slot.lock().unwrap_or_else(|p| p.into_inner())
    }
}

/// Cells allocated together, and which one is this send's.
#[derive(Debug)]
struct At {
    cells: Arc<[Cell]>,
    at: usize,
}

impl At {
    fn cell(&self) -> &Cell {
        &self.cells[self.at]
    }
}

/// A new cell: the side that settles the send, and the side its handle awaits.
pub(crate) fn fate_cell() -> (FateTx, FateRx) {
    let cells: Arc<[Cell]> = Arc::new([Cell::default()]);
    let tx = At {
        cells: cells.clone(),
        at: 0,
    };
    (FateTx(Some(tx)), FateRx(At { cells, at: 0 }))
}

/// `n` new cells in one allocation, for sends admitted together: each settles on its own, and
/// the allocation is freed when the last of them is done with.
pub(crate) fn fate_cells(n: usize) -> impl Iterator<Item = (FateTx, FateRx)> {
    let cells: Arc<[Cell]> = (0..n).map(|_| Cell::default()).collect();
    (0..n).map(move |at| {
        let tx = At {
            cells: cells.clone(),
            at,
        };
        let rx = At {
            cells: cells.clone(),
            at,
        };
        (FateTx(Some(tx)), FateRx(rx))
    })
}

/// The settling side: gives the fate once and counts writes. Dropped without giving one, the
/// handle resolves as if the client were dropped.
#[derive(Debug)]
pub(crate) struct FateTx(Option<At>);

impl FateTx {
    /// Hand over the send's one fate.
    pub(crate) fn send(mut self, fate: Fate) {
        if let Some(at) = self.0.take() {
            close(at.cell(), Some(fate));
        }
    }

    /// The send's frame was written once more.
    pub(crate) fn count_write(&self) {
        if let Some(at) = &self.0 {
            at.cell().writes.fetch_add(1, Ordering::Relaxed);
        }
    }
}

impl Drop for FateTx {
    fn drop(&mut self) {
        if let Some(at) = self.0.take() {
            close(at.cell(), None);
        }
    }
}

/// The settling side is done, with the fate or without: wake the handle if it waits.
fn close(cell: &Cell, fate: Option<Fate>) {
    let waker = {
        let mut slot = cell.slot();
        slot.fate = fate;
        slot.closed = true;
        slot.waker.take()
    };
    if let Some(waker) = waker {
        waker.wake();
    }
}

/// The handle's side: the fate when it comes, and the writes so far.
#[derive(Debug)]
pub(crate) struct FateRx(At);

impl FateRx {
    /// The fate once given; `Ready(None)` when the settling side was dropped without one.
    pub(crate) fn poll_fate(&mut self, cx: &mut Context<'_>) -> Poll<Option<Fate>> {
        let mut slot = self.0.cell().slot();
        if let Some(fate) = slot.fate.take() {
            return Poll::Ready(Some(fate));
        }
        if slot.closed {
            return Poll::Ready(None);
        }
        match &slot.waker {
            Some(waker) if waker.will_wake(cx.waker()) => {}
            _ => slot.waker = Some(cx.waker().clone()),
        }
        Poll::Pending
    }

    /// Times the send's frame was written so far.
    pub(crate) fn writes(&self) -> u32 {
        self.0.cell().writes.load(Ordering::Relaxed)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::client::fate::FateCause;

    fn never() -> Fate {
        Fate::NeverDelivered {
            cause: FateCause::Closed,
        }
    }

    #[tokio::test]
    async fn the_fate_given_reaches_a_waiting_handle() {
        let (tx, mut rx) = fate_cell();
        let waiting = tokio::spawn(async move {
            let fate = std::future::poll_fn(|cx| rx.poll_fate(cx)).await;
            (fate, rx.writes())
        });
        tokio::task::yield_now().await;
        tx.count_write();
        tx.send(never());
        let (fate, writes) = waiting.await.expect("the waiting task ends");
        assert_eq!(fate, Some(never()));
        assert_eq!(writes, 1);
    }

    #[tokio::test]
    async fn a_settling_side_dropped_without_a_fate_ends_the_wait_empty() {
        let (tx, mut rx) = fate_cell();
        let waiting =
            tokio::spawn(async move { std::future::poll_fn(|cx| rx.poll_fate(cx)).await });
        tokio::task::yield_now().await;
        drop(tx);
        assert_eq!(waiting.await.expect("the waiting task ends"), None);
    }

    #[test]
    fn a_fate_given_before_anyone_waits_is_kept_and_taken_once() {
        let (tx, mut rx) = fate_cell();
        tx.send(never());
        let waker = futures_waker();
        let mut cx = Context::from_waker(&waker);
        assert_eq!(rx.poll_fate(&mut cx), Poll::Ready(Some(never())));
        assert_eq!(rx.poll_fate(&mut cx), Poll::Ready(None));
    }

    #[test]
    fn cells_made_together_settle_each_on_its_own() {
        let (mut txs, mut rxs): (Vec<_>, Vec<_>) = fate_cells(3).unzip();
        let waker = futures_waker();
        let mut cx = Context::from_waker(&waker);
        let last = txs.pop().expect("three");
        last.count_write();
        last.send(never());
        assert_eq!(rxs[2].poll_fate(&mut cx), Poll::Ready(Some(never())));
        assert_eq!(rxs[2].writes(), 1);
        assert_eq!(rxs[0].poll_fate(&mut cx), Poll::Pending);
        drop(txs.remove(0));
        assert_eq!(rxs[0].poll_fate(&mut cx), Poll::Ready(None));
        assert_eq!(
            (rxs[1].poll_fate(&mut cx), rxs[1].writes()),
            (Poll::Pending, 0)
        );
        drop(rxs);
        txs.pop().expect("the middle one").send(never());
    }

    fn futures_waker() -> Waker {
        std::task::Waker::noop().clone()
    }
}
