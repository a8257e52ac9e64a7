//! What the check pass learnt about one file, so the send pass need not split it again: where
//! each message starts, its line and length, and the payload itself only when splitting changed
//! it (line endings rewritten, blank lines left out). The send pass then cuts verbatim payloads
//! out of large blocks read from the same open file.
//!
//! Records are a few bytes a message, kept in memory while small and in an anonymous temporary
//! file beyond, so memory stays bounded whatever the message count.

use super::error::InputError;
use super::message::Message;
use super::split::Record;
use bytes::{Bytes, BytesMut};
use std::fs::File;
use std::io::{self, BufRead, BufReader, Read, Seek, SeekFrom, Write};
use std::sync::Arc;
use std::time::SystemTime;

/// Records held in memory before they go to a temporary file.
const IN_MEMORY: usize = 256 * 1024;

/// The send pass reads the file this much at a time; messages over a quarter of it get a read
/// of their own, so a held payload never keeps alive much more than itself.
const READ_BLOCK: usize = 256 * 1024;

/// Bytes written once, in order, and read back from the start any number of times.
#[derive(Default)]
struct Spill {
    mem: Vec<u8>,
    file: Option<File>,
}

impl Spill {
    fn write(&mut self, bytes: &[u8]) -> io::Result<()> {
        self.mem.extend_from_slice(bytes);
        self.written()
    }

    /// After bytes were put in `mem`: beyond what memory holds, they go to the file.
    fn written(&mut self) -> io::Result<()> {
        if self.mem.len() >= IN_MEMORY {
            self.flush()?;
        }
        Ok(())
    }

    fn flush(&mut self) -> io::Result<()> {
        let file = match &mut self.file {
            Some(file) => file,
            None => self.file.insert(tempfile::tempfile()?),
        };
        file.write_all(&self.mem)?;
        self.mem.clear();
        Ok(())
    }

    /// Everything written, once the last record is in.
    fn finish(&mut self) -> io::Result<()> {
        if self.file.is_some() {
            self.flush()?;
        }
        self.mem.shrink_to_fit();
        Ok(())
    }

    fn reader(&self) -> io::Result<SpillReader<'_>> {
        Ok(match &self.file {
            None => SpillReader::Mem(&self.mem),
            Some(file) => {
                let mut handle = file;
                handle.seek(SeekFrom::Start(0))?;
                SpillReader::File(BufReader::with_capacity(64 * 1024, file))
            }
        })
    }
}

enum SpillReader<'a> {
    Mem(&'a [u8]),
    File(BufReader<&'a File>),
}

impl Read for SpillReader<'_> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        match self {
            SpillReader::Mem(m) => m.read(buf),
            SpillReader::File(f) => f.read(buf),
        }
    }
}

impl BufRead for SpillReader<'_> {
    fn fill_buf(&mut self) -> io::Result<&[u8]> {
        match self {
            SpillReader::Mem(m) => Ok(m),
            SpillReader::File(f) => f.fill_buf(),
        }
    }

    fn consume(&mut self, n: usize) {
        match self {
            SpillReader::Mem(m) => *m = &m[n..],
            SpillReader::File(f) => f.consume(n),
        }
    }
}

/// The size and modification time of a file when it was checked: a file changed since is
/// not sent from what the check learnt.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Stamp {
    len: u64,
    modified: Option<SystemTime>,
}

impl Stamp {
    fn of(file: &File) -> io::Result<Stamp> {
        let meta = file.metadata()?;
        Ok(Stamp {
            len: meta.len(),
            modified: meta.modified().ok(),
        })
    }
}

/// Where each message of one checked source is, in order.
pub(super) struct Index {
    records: Spill,
    stamp: Stamp,
    /// The previous record's offset and line, which the next one is written relative to.
    last: (u64, u64),
}

impl Index {
    /// An empty index of `file` as it is now.
    pub(super) fn new(file: &File) -> io::Result<Index> {
        Ok(Index {
            records: Spill::default(),
            stamp: Stamp::of(file)?,
            last: (0, 0),
        })
    }

    /// The next message, as the check split it.
    pub(super) fn push(&mut self, message: &Record<'_>) -> io::Result<()> {
        let len = message.payload.len() as u64;
        // Straight into the records: a varint takes at most 10 bytes.
        let mem = &mut self.records.mem;
        mem.reserve(30);
        put(mem, (len << 1) | u64::from(!message.verbatim));
        put(mem, message.offset - self.last.0);
        put(mem, message.line - self.last.1);
        self.last = (message.offset, message.line);
        if message.verbatim {
            self.records.written()
        } else {
            self.records.write(message.payload)
        }
    }

    pub(super) fn finish(&mut self) -> io::Result<()> {
        self.records.finish()
    }

    /// The messages again, from `file` (the one indexed) and the records.
    pub(super) fn replay<'a>(
        &'a self,
        name: &str,
        file: &'a File,
    ) -> Result<Replay<'a>, InputError> {
        let read_error = |error| InputError::Read {
            name: name.to_string(),
            error,
        };
        if Stamp::of(file).map_err(read_error)? != self.stamp {
            return Err(read_error(changed()));
        }
        Ok(Replay {
            name: Arc::from(name),
            records: self.records.reader().map_err(read_error)?,
            blocks: Blocks {
                file,
                base: 0,
                block: Bytes::new(),
            },
            index: 0,
            last: (0, 0),
        })
    }
}

fn changed() -> io::Error {
    io::Error::other("it changed after it was checked")
}

/// Append `value` as a varint.
fn put(out: &mut Vec<u8>, mut value: u64) {
    while value >= 0x80 {
        out.push((value as u8) | 0x80);
        value >>= 7;
    }
    out.push(value as u8);
}

/// The varint at the start of `buf` and the bytes it takes; `None` unless it ends within `buf`
/// and within the 10 bytes a `u64` needs. The one decoder: [`get`] and [`three`] both use it.
#[inline(always)]
fn varint(buf: &[u8]) -> Option<(u64, usize)> {
    let mut value = 0u64;
    for (i, &b) in buf.iter().enumerate().take(10) {
        value |= u64::from(b & 0x7f) << (7 * i);
        if b & 0x80 == 0 {
            return Some((value, i + 1));
        }
    }
    None
}

/// A varint, across the end of the read buffer if need be; `None` at the end of the records.
fn get(r: &mut impl BufRead) -> io::Result<Option<u64>> {
    if r.fill_buf()?.is_empty() {
        return Ok(None);
    }
    let mut bytes = [0u8; 10];
    for i in 0..bytes.len() {
        r.read_exact(&mut bytes[i..=i])?;
        if bytes[i] & 0x80 == 0 {
            return Ok(varint(&bytes[..=i]).map(|(value, _)| value));
        }
    }
    Err(io::Error::new(
        io::ErrorKind::InvalidData,
        "bad index record",
    ))
}

/// Three varints at the start of `buf` and the bytes they take; `None` unless all three end
/// within it (then [`get`] reads them, across reads, and tells a bad record).
#[inline(always)]
fn three(buf: &[u8]) -> Option<((u64, u64, u64), usize)> {
    let (a, n) = varint(buf)?;
    let (b, m) = varint(&buf[n..])?;
    let (c, k) = varint(&buf[n + m..])?;
    Some(((a, b, c), n + m + k))
}

/// The checked file read in large blocks; payloads are slices of them.
struct Blocks<'a> {
    file: &'a File,
    base: u64,
    block: Bytes,
}

impl Blocks<'_> {
    fn take(&mut self, at: u64, len: usize) -> io::Result<Bytes> {
        if let Some(from) = at.checked_sub(self.base).map(|d| d as usize) {
            if from.saturating_add(len) <= self.block.len() {
                return Ok(self.block.slice(from..from + len));
            }
        }
        let size = if len > READ_BLOCK / 4 {
            len
        } else {
            READ_BLOCK
        };
        let mut buf = Vec::with_capacity(size);
        let mut file = self.file;
        file.seek(SeekFrom::Start(at))?;
        // Into spare capacity: the block is not zeroed first.
        file.take(size as u64).read_to_end(&mut buf)?;
        let filled = buf.len();
        if filled < len {
            return Err(changed());
        }
        self.base = at;
        self.block = Bytes::from(buf);
        Ok(self.block.slice(..len))
    }
}

/// The messages of one checked source, from its index.
pub(super) struct Replay<'a> {
    name: Arc<str>,
    records: SpillReader<'a>,
    blocks: Blocks<'a>,
    index: u64,
    last: (u64, u64),
}

impl Replay<'_> {
    fn read(&mut self) -> io::Result<Option<Message>> {
        let missing = || io::Error::new(io::ErrorKind::UnexpectedEof, "index record cut short");
        // The record's three numbers from the read buffer at once, where it holds them all.
        let (tag, offset, line) = match three(self.records.fill_buf()?) {
            Some((numbers, used)) => {
                self.records.consume(used);
                numbers
            }
            None => {
                let Some(tag) = get(&mut self.records)? else {
                    return Ok(None);
                };
                let offset = get(&mut self.records)?.ok_or_else(missing)?;
                (tag, offset, get(&mut self.records)?.ok_or_else(missing)?)
            }
        };
        let (offset, line) = (self.last.0 + offset, self.last.1 + line);
        self.last = (offset, line);
        let len = usize::try_from(tag >> 1).map_err(|_| missing())?;
        let payload = if tag & 1 == 0 {
            self.blocks.take(offset, len)?
        } else {
            let mut payload = BytesMut::zeroed(len);
            self.records.read_exact(&mut payload)?;
            payload.freeze()
        };
        self.index += 1;
        Ok(Some(Message {
            source: self.name.clone(),
            index: self.index,
            line,
            offset,
            payload,
            original_control_id: None,
        }))
    }
}

impl Iterator for Replay<'_> {
    type Item = Result<Message, InputError>;

    fn next(&mut self) -> Option<Self::Item> {
        self.read().transpose().map(|r| {
            r.map_err(|error| InputError::Read {
                name: self.name.to_string(),
                error,
            })
        })
    }
}

#[cfg(test)]
mod tests;
