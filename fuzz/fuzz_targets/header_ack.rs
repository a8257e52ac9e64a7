//! Fuzz target: HL7 header scanning and ACK building on arbitrary bytes.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    mllp::fuzzing::header_and_ack(data);
});
