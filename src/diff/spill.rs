//! The indexed side's messages in an anonymous temporary file, so memory holds only their
//! keys and where each lies.

use std::fs::File;
use std::io::{self, BufWriter, Write};
use std::os::unix::fs::FileExt;

/// Bytes read ahead at once while reads go in order.
const AHEAD: usize = 256 * 1024;

/// Messages written once, in order, then read back by where they lie.
pub(super) struct Spill {
    writer: Option<BufWriter<File>>,
    file: Option<File>,
    len: u64,
    /// The bytes from `ahead_at`, read in one call: two engines' outputs mostly pair in
    /// order, and one read per message would cost a system call each.
    ahead: Vec<u8>,
    ahead_at: u64,
    /// Where the last read ended.
    next: u64,
}

impl Spill {
    pub(super) fn new() -> io::Result<Spill> {
        Ok(Spill {
            writer: Some(BufWriter::with_capacity(256 * 1024, tempfile::tempfile()?)),
            file: None,
            len: 0,
            ahead: Vec::new(),
            ahead_at: 0,
            next: 0,
        })
    }

    /// Keep `bytes`; where they lie.
    pub(super) fn put(&mut self, bytes: &[u8]) -> io::Result<u64> {
        let at = self.len;
        match &mut self.writer {
            Some(writer) => writer.write_all(bytes)?,
            None => return Err(io::Error::other("the spill is closed for writing")),
        }
        self.len += bytes.len() as u64;
        Ok(at)
    }

    /// Done writing: from now on, reads.
    pub(super) fn finish(&mut self) -> io::Result<()> {
        if let Some(writer) = self.writer.take() {
            self.file = Some(writer.into_inner().map_err(|e| e.into_error())?);
        }
        Ok(())
    }

    /// The `len` bytes at `at` into `buf`.
    pub(super) fn get(&mut self, at: u64, len: usize, buf: &mut Vec<u8>) -> io::Result<()> {
        let Some(file) = &self.file else {
            return Err(io::Error::other("the spill is still being written"));
        };
        let end = at + len as u64;
        let ahead_end = self.ahead_at + self.ahead.len() as u64;
        if !(at >= self.ahead_at && end <= ahead_end) && at == self.next && len < AHEAD {
            // In order: this message and those after it in one read.
            let want = AHEAD.min((self.len - at) as usize).max(len);
            self.ahead.resize(want, 0);
            if let Err(e) = file.read_exact_at(&mut self.ahead, at) {
                self.ahead.clear();
                return Err(e);
            }
            self.ahead_at = at;
        }
        self.next = end;
        let ahead_end = self.ahead_at + self.ahead.len() as u64;
        if at >= self.ahead_at && end <= ahead_end {
            let from = (at - self.ahead_at) as usize;
            buf.clear();
            buf.extend_from_slice(&self.ahead[from..from + len]);
            return Ok(());
        }
        buf.resize(len, 0);
        file.read_exact_at(buf, at)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        /// Whatever the order of the reads, in order, out of it, or again, each gives back
        /// what was put, across the read-ahead's edges.
        #[test]
        fn reads_back_in_any_order(
            lens in prop::collection::vec(0usize..(AHEAD / 3), 1..12),
            order in prop::collection::vec(any::<prop::sample::Index>(), 0..30),
        ) {
            let mut spill = Spill::new().unwrap();
            let mut put = Vec::new();
            for (i, &len) in lens.iter().enumerate() {
                let bytes: Vec<u8> = (0..len).map(|j| (i * 7 + j) as u8).collect();
                put.push((spill.put(&bytes).unwrap(), bytes));
            }
            spill.finish().unwrap();
            let in_order = (0..put.len()).collect::<Vec<_>>();
            let shuffled = order.iter().map(|i| i.index(put.len())).collect::<Vec<_>>();
            let mut buf = b"stale".to_vec();
            for i in in_order.into_iter().chain(shuffled) {
                let (at, bytes) = &put[i];
                spill.get(*at, bytes.len(), &mut buf).unwrap();
                prop_assert_eq!(&buf, bytes);
            }
        }
    }

    #[test]
    fn reads_back_what_was_put() {
        let mut spill = Spill::new().unwrap();
        let a = spill.put(b"first").unwrap();
        let b = spill.put(b"second").unwrap();
        spill.finish().unwrap();
        let mut buf = Vec::new();
        spill.get(b, 6, &mut buf).unwrap();
        assert_eq!(buf, b"second");
        spill.get(a, 5, &mut buf).unwrap();
        assert_eq!(buf, b"first");
    }
}
