//! The indexed side's messages in an anonymous temporary file, so memory holds only their
//! keys and where each lies.

use std::fs::File;
use std::io::{self, BufWriter, Write};
use std::os::unix::fs::FileExt;

/// Messages written once, in order, then read back by where they lie.
pub(super) struct Spill {
    writer: Option<BufWriter<File>>,
    file: Option<File>,
    len: u64,
}

impl Spill {
    pub(super) fn new() -> io::Result<Spill> {
        Ok(Spill {
            writer: Some(BufWriter::with_capacity(256 * 1024, tempfile::tempfile()?)),
            file: None,
            len: 0,
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
    pub(super) fn get(&self, at: u64, len: usize, buf: &mut Vec<u8>) -> io::Result<()> {
        let Some(file) = &self.file else {
            return Err(io::Error::other("the spill is still being written"));
        };
        buf.resize(len, 0);
        file.read_exact_at(buf, at)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
