//! The workload: ADT^A01 messages of one size, each with its own MSH-10, in one file laid out as
//! `mllp send` and every other sender here read it.

use std::path::Path;

/// Writes `messages` ADT^A01 messages of exactly `size` bytes each (CR after every segment, a
/// unique MSH-10 each), back to back, as `mllp send` and every other sender read them.
///
/// Written one message at a time: a child's peak RSS as `wait4` reports it starts from what this
/// process held when it forked, so the benchmark itself stays small.
pub fn write_workload(path: &Path, messages: usize, size: usize) {
    write_keyed_workload(path, messages, size, |i| i);
}

/// As [`write_workload`], message `i` (from 1) of patient `patient(i)` (its PID-3).
pub fn write_keyed_workload(
    path: &Path,
    messages: usize,
    size: usize,
    patient: fn(usize) -> usize,
) {
    use std::io::Write;
    let mut file = std::io::BufWriter::new(std::fs::File::create(path).unwrap());
    for i in 1..=messages {
        file.write_all(&adt(i, patient(i), size)).unwrap();
    }
    file.flush().unwrap();
}

fn adt(i: usize, patient: usize, size: usize) -> Vec<u8> {
    let head = format!(
        "MSH|^~\\&|SENDAPP|SENDFAC|RECVAPP|RECVFAC|20240101120000||ADT^A01^ADT_A01|MSG{i:010}|P|2.5\r\
         EVN|A01|20240101120000\r\
         PID|1||{patient:08}^^^HOSP^MR||DOE^JOHN^Q||19700101|M|||123 MAIN ST^^SPRINGFIELD^IL^62701^USA||(555)555-0100|||S||A{i:08}\r\
         PV1|1|I|WARD^101^A^HOSP||||1234^SMITH^ANNE^^^DR|||MED||||7|||1234^SMITH^ANNE^^^DR|IP|V{i:08}\r\
         NTE|1||"
    );
    let mut m = head.into_bytes();
    let pad = size.saturating_sub(m.len() + 1);
    m.extend(std::iter::repeat_n(b'x', pad));
    m.push(b'\r');
    m
}
