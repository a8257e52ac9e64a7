//! The `--out-dir` de-duplication journal: one line per committed file (its name and key),
//! fsynced before the ACK, and on start the directory itself, so the memory never misses a
//! message already on disk, even one whose line a crash kept from being written.
//!
//! A line is `<file name> <MSH-3> <MSH-4> <MSH-10> <MSH-7>`, each field in hex, or
//! `<file name> -` for a file that has no key (an inbound ACK, a batch). Lines in an older
//! format name no file and no sender: they are skipped, and the files they stood for are read
//! back from the directory instead.
//!
//! Anyone who can write to the directory can plant things there, so nothing here follows a
//! symbolic link or reads anything but a regular file, and no file read back is read past the
//! largest frame the listener accepts: what does not qualify is skipped and said.

use super::Window;
use crate::server::sink::{DedupeKey, Inbound};
use bytes::Bytes;
use rustix::fs::OFlags;
use rustix::io::Errno;
use std::collections::HashSet;
use std::fs::{File, OpenOptions};
use std::io::{BufRead, BufReader, Read, Write};
use std::os::unix::fs::OpenOptionsExt;
use std::path::Path;
use std::sync::Arc;

/// The journal's name inside `--out-dir`; a dot file, so `*.hl7` readers never see it.
pub(crate) const JOURNAL_NAME: &str = ".mllp-dedupe.journal";

/// One committed file and its key.
pub(crate) type Entry = (String, Option<DedupeKey>);

/// The longest journal line read; a longer one is not ours and is skipped.
const MAX_LINE: usize = 64 * 1024;

/// Load the journal in `dir` and the files it does not name (each read up to `max_file` bytes)
/// into `window`, bring the journal up to date (compacted when it holds far more than the
/// window, or replaced when it is not a regular file), and open it for appending. What was
/// skipped is added to `skipped`, one line each.
pub(crate) fn open(
    dir: &Path,
    window: &mut Window,
    max_file: usize,
    skipped: &mut Vec<String>,
) -> std::io::Result<File> {
    let path = dir.join(JOURNAL_NAME);
    let (mut entries, lines, usable) = match load(&path)? {
        Loaded::Read(entries, lines) => (entries, lines, true),
        Loaded::Absent => (Vec::new(), 0, true),
        Loaded::NotRegular(what) => {
            skipped.push(format!(
                "{}: {what}, not a journal; replaced by one",
                path.display()
            ));
            (Vec::new(), 0, false)
        }
    };
    let named: HashSet<&str> = entries.iter().map(|(name, _)| name.as_str()).collect();
    let missing = unnamed_files(dir, &named, window.capacity)?;
    drop(named);
    let mut read_back = Vec::with_capacity(missing.len());
    for name in missing {
        match read_key(&dir.join(&name), max_file)? {
            ReadBack::Key(key) => read_back.push((name, key)),
            ReadBack::Gone => {}
            ReadBack::Skipped(why) => skipped.push(format!(
                "{}: {why}, not read back",
                dir.join(&name).display()
            )),
        }
    }
    entries.extend(read_back.iter().cloned());
    let keep = entries.len().saturating_sub(window.capacity);
    for (_, key) in &entries[keep..] {
        if let Some(key) = key {
            window.insert(key.clone());
        }
    }
    if !usable || lines + read_back.len() > 2 * window.capacity {
        compact(dir, &path, &entries[keep..])?;
        return open_append(&path, false);
    }
    let mut file = open_append(&path, true)?;
    let mut tail = render(&read_back);
    if !ends_cleanly(&path)? {
        // A torn line is ended, so the next entry starts a line of its own.
        tail.insert(0, b'\n');
    }
    if !tail.is_empty() {
        file.write_all(&tail)?;
        file.sync_data()?;
    }
    Ok(file)
}

/// Never through a link, never waiting for a FIFO's peer, not inherited by a command.
const NO_LINK_NO_WAIT: i32 =
    (OFlags::NOFOLLOW.bits() | OFlags::NONBLOCK.bits() | OFlags::CLOEXEC.bits()) as i32;

/// Open the journal for appending: never through a link, and only a regular file.
fn open_append(path: &Path, create: bool) -> std::io::Result<File> {
    let file = OpenOptions::new()
        .create(create)
        .append(true)
        .custom_flags(NO_LINK_NO_WAIT)
        .open(path)?;
    if !file.metadata()?.is_file() {
        return Err(std::io::Error::new(
            std::io::ErrorKind::InvalidInput,
            "not a regular file",
        ));
    }
    Ok(file)
}

/// Open `path` for reading if it is a regular file, never through a link and never waiting (a
/// FIFO): `Ok(Err(what))` says what it is instead.
fn open_regular(path: &Path) -> std::io::Result<Result<File, &'static str>> {
    let opened = OpenOptions::new()
        .read(true)
        .custom_flags(NO_LINK_NO_WAIT)
        .open(path);
    let file = match opened {
        Ok(file) => file,
        Err(e) if e.raw_os_error() == Some(Errno::LOOP.raw_os_error()) => {
            return Ok(Err("a symbolic link"))
        }
        // A FIFO or socket that cannot be opened without a peer.
        Err(e) if e.raw_os_error() == Some(Errno::NXIO.raw_os_error()) => {
            return Ok(Err("not a regular file"))
        }
        Err(e) => return Err(e),
    };
    if file.metadata()?.is_file() {
        Ok(Ok(file))
    } else {
        Ok(Err("not a regular file"))
    }
}

/// The file is empty or its last line is complete.
fn ends_cleanly(path: &Path) -> std::io::Result<bool> {
    use std::io::{Read, Seek, SeekFrom};
    let mut file = match open_regular(path)? {
        Ok(file) => file,
        Err(what) => return Err(std::io::Error::new(std::io::ErrorKind::InvalidInput, what)),
    };
    if file.metadata()?.len() == 0 {
        return Ok(true);
    }
    file.seek(SeekFrom::End(-1))?;
    let mut last = [0u8];
    file.read_exact(&mut last)?;
    Ok(last[0] == b'\n')
}

/// Append `entries` and fsync: done before the ACKs of their messages go out.
pub(crate) fn append(file: &mut File, entries: &[Entry]) -> std::io::Result<()> {
    file.write_all(&render(entries))?;
    file.sync_data()
}

fn render(entries: &[Entry]) -> Vec<u8> {
    let mut text = Vec::with_capacity(entries.len() * 96);
    for (name, key) in entries {
        text.extend_from_slice(name.as_bytes());
        match key {
            Some(k) => {
                for field in [
                    &k.sending_application,
                    &k.sending_facility,
                    &k.control_id,
                    &k.date_time,
                ] {
                    text.push(b' ');
                    text.extend_from_slice(hex(field).as_bytes());
                }
            }
            None => text.extend_from_slice(b" -"),
        }
        text.push(b'\n');
    }
    text
}

/// What was found at the journal's path.
enum Loaded {
    /// The entries in order, and the number of lines.
    Read(Vec<Entry>, usize),
    Absent,
    /// A link, FIFO or the like: not read.
    NotRegular(&'static str),
}

/// The entries of a journal in order, and its number of lines. A torn last line (a crash in the
/// middle of an append) is skipped: its file, if any, is read back from the directory. So is a
/// line too long to be ours.
fn load(path: &Path) -> std::io::Result<Loaded> {
    let file = match open_regular(path) {
        Ok(Ok(file)) => file,
        Ok(Err(what)) => return Ok(Loaded::NotRegular(what)),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Loaded::Absent),
        Err(e) => return Err(e),
    };
    let mut reader = BufReader::new(file);
    let mut entries = Vec::new();
    let mut lines = 0;
    let mut line = Vec::new();
    loop {
        line.clear();
        let n = (&mut reader)
            .take(MAX_LINE as u64)
            .read_until(b'\n', &mut line)?;
        if n == 0 {
            break;
        }
        lines += 1;
        if line.last() != Some(&b'\n') && n == MAX_LINE {
            skip_line(&mut reader)?;
            continue;
        }
        let text = line.strip_suffix(b"\n").unwrap_or(&line);
        if let Some(entry) = std::str::from_utf8(text).ok().and_then(parse) {
            entries.push(entry);
        }
    }
    Ok(Loaded::Read(entries, lines))
}

/// Consume the rest of an overlong line without holding it.
fn skip_line(reader: &mut impl BufRead) -> std::io::Result<()> {
    loop {
        let buf = reader.fill_buf()?;
        if buf.is_empty() {
            return Ok(());
        }
        match memchr::memchr(b'\n', buf) {
            Some(i) => {
                reader.consume(i + 1);
                return Ok(());
            }
            None => {
                let len = buf.len();
                reader.consume(len);
            }
        }
    }
}

fn parse(line: &str) -> Option<Entry> {
    let parts: Vec<&str> = line.split(' ').collect();
    let name = parts.first().filter(|n| is_message_file(n))?.to_string();
    match parts[1..] {
        ["-"] => Some((name, None)),
        [app, facility, id, time] => {
            let key = DedupeKey {
                sending_application: unhex(app)?,
                sending_facility: unhex(facility)?,
                control_id: unhex(id).filter(|c| !c.is_empty())?,
                date_time: unhex(time)?,
            };
            Some((name, Some(key)))
        }
        _ => None,
    }
}

/// A file the directory sink commits a message to (never one of its dot files).
fn is_message_file(name: &str) -> bool {
    name.ends_with(".hl7") && !name.starts_with('.') && !name.contains(' ')
}

/// The newest `window` message files (names sort by arrival) the journal does not name.
fn unnamed_files(dir: &Path, named: &HashSet<&str>, window: usize) -> std::io::Result<Vec<String>> {
    let mut names = Vec::new();
    for entry in std::fs::read_dir(dir)? {
        if let Ok(name) = entry?.file_name().into_string() {
            if is_message_file(&name) {
                names.push(name);
            }
        }
    }
    // Only the newest `window` matter, in any order: no need to sort a large directory.
    let cut = names.len().saturating_sub(window);
    if cut > 0 {
        names.select_nth_unstable(cut);
    }
    let newest = names.split_off(cut);
    let mut missing: Vec<String> = newest
        .into_iter()
        .filter(|n| !named.contains(n.as_str()))
        .collect();
    // Arrival order, so the window forgets the oldest first.
    missing.sort_unstable();
    Ok(missing)
}

/// What reading one message file back gave.
enum ReadBack {
    Key(Option<DedupeKey>),
    /// Taken away by a consumer meanwhile: nothing to remember.
    Gone,
    /// Not a regular file, or larger than any frame the listener accepts: why.
    Skipped(String),
}

/// The key of the message a file holds, read as the server reads an inbound: only a regular
/// file, at most `max_file` bytes.
fn read_key(path: &Path, max_file: usize) -> std::io::Result<ReadBack> {
    let file = match open_regular(path) {
        Ok(Ok(file)) => file,
        Ok(Err(what)) => return Ok(ReadBack::Skipped(what.to_string())),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(ReadBack::Gone),
        Err(e) => return Err(e),
    };
    let too_large =
        || ReadBack::Skipped(format!("larger than the largest frame ({max_file} bytes)"));
    if file.metadata()?.len() > max_file as u64 {
        return Ok(too_large());
    }
    let mut payload = Vec::new();
    file.take(max_file as u64 + 1).read_to_end(&mut payload)?;
    if payload.len() > max_file {
        return Ok(too_large());
    }
    let message = Inbound::new(0, 0, Arc::from(""), Bytes::from(payload), false);
    Ok(ReadBack::Key(message.dedupe_key()))
}

/// Rewrite the journal with only `entries`, atomically.
fn compact(dir: &Path, path: &Path, entries: &[Entry]) -> std::io::Result<()> {
    let mut tmp = tempfile::Builder::new()
        .prefix(".mllp-dedupe-")
        .suffix(".tmp")
        .tempfile_in(dir)?;
    tmp.write_all(&render(entries))?;
    tmp.as_file().sync_all()?;
    tmp.persist(path).map_err(|e| e.error)?;
    File::open(dir)?.sync_all()
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

fn unhex(text: &str) -> Option<Bytes> {
    if !text.len().is_multiple_of(2) {
        return None;
    }
    (0..text.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(text.get(i..i + 2)?, 16).ok())
        .collect::<Option<Vec<u8>>>()
        .map(Bytes::from)
}
