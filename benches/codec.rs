//! Decoder throughput beside a baseline that only memchr-scans the same bytes for VT and FS.

use bytes::{Bytes, BytesMut};
use criterion::{criterion_group, criterion_main, BatchSize, Criterion, Throughput};
use mllp::framing::{encode_frame, Decoded, MllpCodec, Tolerance, DEFAULT_MAX_FRAME, FS, VT};
use std::time::Duration;
use tokio_util::codec::Decoder;

/// An HL7-looking payload of exactly `len` bytes (segments end in CR, no VT or FS).
fn payload(len: usize) -> Vec<u8> {
    let text = b"MSH|^~\\&|SENDER|FAC|RECEIVER|FAC|20240101120000||ADT^A01|MSG00001|P|2.5\rPID|1||123456^^^HOSP^MR||DOE^JOHN||19700101|M\r";
    text.iter().copied().cycle().take(len).collect()
}

fn wire(payload_len: usize, frames: usize) -> Vec<u8> {
    let payload = payload(payload_len);
    let mut wire = BytesMut::new();
    for _ in 0..frames {
        encode_frame(&payload, &mut wire).unwrap();
    }
    wire.to_vec()
}

/// Decode everything in `buf` (one read's worth). Returns the buffer and the last payload so
/// that freeing them (allocator work, not decoding) happens outside the timed region.
fn decode_all(mut buf: BytesMut) -> (usize, BytesMut, Option<Bytes>) {
    let mut codec = MllpCodec::new(Tolerance::RECEIVER, DEFAULT_MAX_FRAME);
    let mut total = 0;
    let mut last = None;
    while let Some(item) = codec.decode(&mut buf).unwrap() {
        if let Decoded::Frame(frame) = item {
            total += frame.payload.len();
            last = Some(frame.payload);
        }
    }
    (total, buf, last)
}

fn memchr_baseline(wire: &[u8]) -> usize {
    memchr::memchr2_iter(VT, FS, wire).count()
}

fn bench_case(c: &mut Criterion, name: &str, wire: &[u8]) {
    let mut group = c.benchmark_group(name);
    group.throughput(Throughput::Bytes(wire.len() as u64));
    group.warm_up_time(Duration::from_secs(1));
    group.measurement_time(Duration::from_secs(4));
    group.bench_function("memchr_baseline", |b| {
        b.iter(|| memchr_baseline(std::hint::black_box(wire)))
    });
    group.bench_function("decode", |b| {
        b.iter_batched(|| BytesMut::from(wire), decode_all, BatchSize::LargeInput)
    });
    group.finish();
}

fn codec(c: &mut Criterion) {
    // 500-byte frames, about 2,000 per read.
    bench_case(c, "small_frames_500B", &wire(500, 2000));
    // One 4 MiB frame in one buffer.
    bench_case(c, "large_frame_4MiB", &wire(4 * 1024 * 1024, 1));
}

criterion_group!(benches, codec);
criterion_main!(benches);
