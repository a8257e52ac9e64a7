//! Boxes of settled sends, kept for new ones: a send is made in its box on the caller's side
//! and settled on the actor's, so without these every send allocated one box and freed it.

use super::pending::Pending;
use std::sync::{Mutex, MutexGuard};

/// Boxes kept at most; beyond this a settled send's box is freed.
const KEPT: usize = 1024;

/// Emptied boxes (see [`Pending::release`]), shared by the callers and the actor.
// Each is a box to reuse: its address is the point.
#[allow(clippy::vec_box)]
#[derive(Default)]
pub(crate) struct Spares(Mutex<Vec<Box<Pending>>>);

/// The kept boxes, held for a run of new sends taken under one lock.
// Each is a box to reuse: its address is the point.
#[allow(clippy::vec_box)]
pub(crate) type Held<'a> = MutexGuard<'a, Vec<Box<Pending>>>;

impl Spares {
    pub fn lock(&self) -> Held<'_> {
        // Nothing panics while holding the lock; a poisoned one holds whole boxes.
        self.0.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// A kept box, if any.
    pub fn take(&self) -> Option<Box<Pending>> {
        self.lock().pop()
    }

    /// Keep an emptied box (see [`Pending::release`]) for a new send, up to [`KEPT`].
    pub fn keep(&self, spare: Box<Pending>) {
        let mut kept = self.lock();
        if kept.len() < KEPT {
            kept.push(spare);
        }
    }
}

impl std::fmt::Debug for Spares {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_tuple("Spares").field(&self.lock().len()).finish()
    }
}
