//! Lists borrowed from the worker thread and given back empty once used: a connection's batch
//! (its frames, its messages, what is known of each) and the stdout sink's rendering buffer.
//! Serving a batch then allocates none of them, and an idle connection holds none of them.

use std::cell::Cell;
use std::thread::LocalKey;

/// A batch's list kept for reuse holds at most this many entries' room.
pub(crate) const BATCH: usize = 64;

/// A list of the thread's, or a new one when the thread's is lent out (or the thread is ending).
pub(crate) fn take<T: 'static>(spare: &'static LocalKey<Cell<Vec<T>>>) -> Vec<T> {
    spare.try_with(Cell::take).unwrap_or_default()
}

/// Give `list` back to the thread, emptied, unless it grew past `keep` entries' room (a big
/// batch's lists are freed).
pub(crate) fn give<T: 'static>(
    spare: &'static LocalKey<Cell<Vec<T>>>,
    mut list: Vec<T>,
    keep: usize,
) {
    if list.capacity() > keep {
        return;
    }
    list.clear();
    // At thread exit the list is simply dropped.
    let _ = spare.try_with(|cell| cell.set(list));
}

/// `list`, emptied, as a list of the same type borrowing for another lifetime: the same
/// allocation, reused in place.
pub(crate) fn relend<A, B>(mut list: Vec<A>) -> Vec<B> {
    list.clear();
    list.into_iter().map(|_| unreachable!("empty")).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    thread_local! {
        static NUMBERS: Cell<Vec<u64>> = const { Cell::new(Vec::new()) };
    }

    #[test]
    fn a_list_given_back_is_lent_again_empty_and_a_big_one_is_not_kept() {
        let mut list = take(&NUMBERS);
        list.extend([1, 2, 3]);
        let at = list.as_ptr();
        give(&NUMBERS, list, 64);
        let again = take(&NUMBERS);
        assert!(again.is_empty() && again.as_ptr() == at);
        assert!(take(&NUMBERS).capacity() == 0, "lent out: a new one");
        give(&NUMBERS, Vec::with_capacity(65), 64);
        assert_eq!(take(&NUMBERS).capacity(), 0);
    }

    #[test]
    fn relending_keeps_the_allocation() {
        let text = String::from("abc");
        let mut borrowed: Vec<&str> = Vec::with_capacity(8);
        borrowed.push(&text);
        let at = borrowed.as_ptr() as usize;
        let statics: Vec<&'static str> = relend(borrowed);
        assert_eq!(statics.capacity(), 8);
        assert_eq!(statics.as_ptr() as usize, at);
    }
}
