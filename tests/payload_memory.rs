//! What a split message keeps alive: counted by a global allocator, so this test has a binary
//! of its own.

use mllp::input::{SplitOptions, Splitter};
use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicUsize, Ordering};

struct Counting;

static LIVE: AtomicUsize = AtomicUsize::new(0);

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        LIVE.fetch_add(layout.size(), Ordering::Relaxed);
        System.alloc(layout)
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        LIVE.fetch_sub(layout.size(), Ordering::Relaxed);
        System.dealloc(ptr, layout)
    }
}

#[global_allocator]
static ALLOCATOR: Counting = Counting;

fn message(i: usize, size: usize) -> Vec<u8> {
    let mut m = format!(
        "MSH|^~\\&|A|B|C|D|20240101120000||ADT^A01|MSG{i:08}|P|2.5\rPID|1||{i:08}\rOBX|1|TX|||"
    )
    .into_bytes();
    m.resize(size - 1, b'x');
    m.push(b'\r');
    m
}

/// Held messages (a window in flight, the read-ahead) cost about their own size, however large
/// they are: a payload does not keep alive the buffer it was assembled in.
#[test]
fn held_payloads_cost_about_their_size() {
    for size in [460, 1_100, 3_000, 20_000, 64_078] {
        let count = 200;
        let input: Vec<u8> = (0..count).flat_map(|i| message(i, size)).collect();
        let before = LIVE.load(Ordering::Relaxed);
        let splitter = Splitter::from_read("in", &input[..], SplitOptions::default());
        let held: Vec<_> = splitter.map(Result::unwrap).collect();
        let live = LIVE.load(Ordering::Relaxed) - before;
        let payload: usize = held.iter().map(|m| m.payload.len()).sum();
        assert_eq!(payload, count * size);
        // Bookkeeping per message (the `Message`, its place in the Vec) plus what a payload may
        // keep alive beyond its own bytes: a share of a small block, nothing for large ones.
        let allowed = payload + payload / 4 + count * 256;
        assert!(
            live <= allowed,
            "{count} messages of {size} bytes hold {live} bytes (at most {allowed} expected)"
        );
        drop(held);
    }
}
