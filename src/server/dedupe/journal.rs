//! The `--out-dir` de-duplication journal: one line per committed file (its name and key),
//! fsynced before the ACK, and on start the directory itself, so the memory never misses a
//! message already on disk, even one whose line a crash kept from being written.
//!
//! A line is `<file name> <MSH-3> <MSH-4> <MSH-10> <MSH-7>`, each field in hex, or
//! `<file name> -` for a file that has no key (an inbound ACK, a batch). Lines in an older
//! format name no file and no sender: they are skipped, and the files they stood for are read
//! back from the directory instead.

use super::Window;
use crate::server::sink::{DedupeKey, Inbound};
use bytes::Bytes;
use std::collections::HashSet;
use std::fs::{File, OpenOptions};
use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::sync::Arc;

/// The journal's name inside `--out-dir`; a dot file, so `*.hl7` readers never see it.
pub const JOURNAL_NAME: &str = ".mllp-dedupe.journal";

/// One committed file and its key.
pub(crate) type Entry = (String, Option<DedupeKey>);

/// Load the journal in `dir` and the files it does not name into `window`, bring the journal up
/// to date (compacted when it holds far more than the window), and open it for appending.
pub(crate) fn open(dir: &Path, window: &mut Window) -> std::io::Result<File> {
    let path = dir.join(JOURNAL_NAME);
    let (mut entries, lines) = load(&path)?;
    let named: HashSet<&str> = entries.iter().map(|(name, _)| name.as_str()).collect();
    let missing = unnamed_files(dir, &named, window.capacity)?;
    drop(named);
    let read_back = missing
        .into_iter()
        .map(|name| {
            let key = read_key(&dir.join(&name))?;
            Ok((name, key))
        })
        .collect::<std::io::Result<Vec<Entry>>>()?;
    entries.extend(read_back.iter().cloned());
    let keep = entries.len().saturating_sub(window.capacity);
    for (_, key) in &entries[keep..] {
        if let Some(key) = key {
            window.insert(key.clone());
        }
    }
    if lines + read_back.len() > 2 * window.capacity {
        compact(dir, &path, &entries[keep..])?;
        return OpenOptions::new().append(true).open(&path);
    }
    let mut file = OpenOptions::new().create(true).append(true).open(&path)?;
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

/// The file is empty or its last line is complete.
fn ends_cleanly(path: &Path) -> std::io::Result<bool> {
    use std::io::{Read, Seek, SeekFrom};
    let mut file = File::open(path)?;
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

/// The entries of a journal in order, and its number of lines. A torn last line (a crash in the
/// middle of an append) is skipped: its file, if any, is read back from the directory.
fn load(path: &Path) -> std::io::Result<(Vec<Entry>, usize)> {
    let file = match File::open(path) {
        Ok(file) => file,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok((Vec::new(), 0)),
        Err(e) => return Err(e),
    };
    let mut entries = Vec::new();
    let mut lines = 0;
    for line in BufReader::new(file).split(b'\n') {
        let line = line?;
        lines += 1;
        if let Some(entry) = std::str::from_utf8(&line).ok().and_then(parse) {
            entries.push(entry);
        }
    }
    Ok((entries, lines))
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

/// The key of the message a file holds, read as the server reads an inbound.
fn read_key(path: &Path) -> std::io::Result<Option<DedupeKey>> {
    let payload = match std::fs::read(path) {
        Ok(payload) => payload,
        // Taken away by a consumer meanwhile: nothing to remember.
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(e),
    };
    let message = Inbound::new(0, 0, Arc::from(""), Bytes::from(payload), false);
    Ok(message.dedupe_key())
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
