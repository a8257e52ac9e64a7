//! Fuzz target: the MLLP decoder over data-derived tolerance, cap and chunking.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| mllp::fuzzing::decode(data));
