//! Fuzz target: the input splitter over data-derived options and chunking.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| mllp::fuzzing::split_input(data));
