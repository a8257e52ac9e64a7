//! The workload: ADT^A01 messages of one size, each with its own MSH-10, in one file laid out as
//! `mllp send` and every other sender here read it.

use crate::floor;
use std::path::Path;

/// Writes `messages` ADT^A01 messages of exactly `size` bytes each (CR after every segment, a
/// unique MSH-10 each), back to back, as `mllp send` and every other sender read them.
pub fn write_workload(path: &Path, messages: usize, size: usize) {
    let payloads: Vec<Vec<u8>> = (1..=messages).map(|i| adt(i, size)).collect();
    floor::write_messages(path, payloads.iter().map(Vec::as_slice));
}

fn adt(i: usize, size: usize) -> Vec<u8> {
    let head = format!(
        "MSH|^~\\&|SENDAPP|SENDFAC|RECVAPP|RECVFAC|20240101120000||ADT^A01^ADT_A01|MSG{i:010}|P|2.5\r\
         EVN|A01|20240101120000\r\
         PID|1||{i:08}^^^HOSP^MR||DOE^JOHN^Q||19700101|M|||123 MAIN ST^^SPRINGFIELD^IL^62701^USA||(555)555-0100|||S||A{i:08}\r\
         PV1|1|I|WARD^101^A^HOSP||||1234^SMITH^ANNE^^^DR|||MED||||7|||1234^SMITH^ANNE^^^DR|IP|V{i:08}\r\
         NTE|1||"
    );
    let mut m = head.into_bytes();
    let pad = size.saturating_sub(m.len() + 1);
    m.extend(std::iter::repeat_n(b'x', pad));
    m.push(b'\r');
    m
}
