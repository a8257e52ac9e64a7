//! What a split message keeps alive: counted by a global allocator, so this test has a binary
//! of its own.

use mllp::input::{InputOptions, InputSet, InputSource, SplitOptions, Splitter};
use std::alloc::{GlobalAlloc, Layout, System};
use std::io::Write;
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

/// The tests measure one global counter: one at a time.
static ONE_AT_A_TIME: std::sync::Mutex<()> = std::sync::Mutex::new(());

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
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
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

fn checked_set(input: &[u8]) -> (tempfile::NamedTempFile, InputSet) {
    let mut file = tempfile::NamedTempFile::new().unwrap();
    file.write_all(input).unwrap();
    let sources = vec![InputSource::File(file.path().to_path_buf())];
    let set = InputSet::prepare(sources, InputOptions::default()).unwrap();
    (file, set)
}

/// The same for messages sent from the check's index: a payload is a slice of a block read
/// from the file, and a block holds little beyond the payloads cut from it.
#[test]
fn payloads_sent_from_the_index_cost_about_their_size() {
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    for size in [460, 1_100, 3_000, 20_000, 64_078, 300_000] {
        let count = 200;
        let input: Vec<u8> = (0..count).flat_map(|i| message(i, size)).collect();
        let (_file, mut set) = checked_set(&input);
        set.validate().unwrap();
        let before = LIVE.load(Ordering::Relaxed);
        let held: Vec<_> = set.messages().map(Result::unwrap).collect();
        let live = LIVE.load(Ordering::Relaxed) - before;
        let payload: usize = held.iter().map(|m| m.payload.len()).sum();
        assert_eq!(payload, count * size);
        // A last block read past the last message, and the bookkeeping per message.
        let allowed = payload + payload / 4 + 256 * 1024 + count * 256;
        assert!(
            live <= allowed,
            "{count} messages of {size} bytes hold {live} bytes (at most {allowed} expected)"
        );
    }
}

/// The check's index of a file does not grow in memory with its message count.
#[test]
fn the_index_of_many_messages_is_not_held_in_memory() {
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let count = 400_000;
    let input: Vec<u8> = (0..count)
        .flat_map(|i| format!("MSH|^~\\&|||||||ADT|{i}|P|2.5\r").into_bytes())
        .collect();
    let (_file, set) = checked_set(&input);
    let before = LIVE.load(Ordering::Relaxed);
    assert_eq!(set.validate().unwrap().messages, count);
    let live = LIVE.load(Ordering::Relaxed) - before;
    // Records are about 4 bytes a message: 1.6 MB for these, were they all kept.
    assert!(
        live <= 512 * 1024,
        "the index of {count} messages holds {live} bytes"
    );
    drop(set);
}
