//! Fuzz target: the HL7 reader (segments, fields, paths, filters, escapes, charsets, check) on
//! arbitrary bytes.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    mllp::fuzzing::read_message(data);
});
