//! The send pass from the check's index gives exactly the messages splitting again would.

use super::{get, put, three};
use crate::input::{InputOptions, InputSet, InputSource, Message, SplitOptions};
use std::io::Write;

fn msh(i: usize, end: &str) -> String {
    format!("MSH|^~\\&|A|B|C|D|20240101||ADT^A01|ID{i}|P|2.5{end}PID|1||{i}{end}")
}

/// Inputs that take every path of splitting: CR, LF and CRLF endings, blank lines inside and
/// between messages, framed input, batches, a byte order mark, a last line without its end, a
/// DOS end-of-file mark, and messages larger than the send pass's blocks.
fn inputs() -> Vec<Vec<u8>> {
    let mut all: Vec<Vec<u8>> = vec![
        (0..50).map(|i| msh(i, "\r")).collect::<String>().into(),
        (0..50).map(|i| msh(i, "\n")).collect::<String>().into(),
        (0..50).map(|i| msh(i, "\r\n")).collect::<String>().into(),
        format!("{}\r\r  \r{}\n\nOBX|1\r\n\r\n", msh(1, "\r"), msh(2, "\r")).into(),
        format!("\u{feff}{}{}", msh(1, "\r"), msh(2, "\r")).into(),
        format!(
            "{}MSH|^~\\&|A|B|C|D|x||ADT|ID9|P|2.5\rPID|last",
            msh(1, "\r")
        )
        .into(),
        format!("{}{}\x1a", msh(1, "\r"), msh(2, "\n")).into(),
        format!("\x0b{}\x1c\r\r\n\x0b{}\x1c\r", msh(1, "\r"), msh(2, "\n")).into(),
        format!(
            "\x0b{}{}\x1c\r",
            msh(1, "\r"),
            "MSH|^~\\&|A|B|C|D|x||ADT|ID9|P|2.5"
        )
        .into(),
        format!(
            "FHS|^~\\&\rBHS|^~\\&\r{}{}BTS|2\rFTS|1\r{}",
            msh(1, "\r"),
            msh(2, "\r"),
            msh(3, "\r")
        )
        .into(),
    ];
    let mut large = Vec::new();
    for (i, size) in [100, 70_000, 300, 200_000, 64_000, 64_000, 64_000, 90]
        .iter()
        .enumerate()
    {
        let mut m = msh(i, "\r").into_bytes();
        m.extend(std::iter::repeat_n(b'x', *size));
        m.push(b'\r');
        large.extend(m);
    }
    all.push(large);
    all
}

fn options(raw: bool, batch: bool) -> InputOptions {
    InputOptions {
        split: SplitOptions {
            raw,
            batch,
            ..SplitOptions::default()
        },
        ..InputOptions::default()
    }
}

fn file_with(bytes: &[u8]) -> tempfile::NamedTempFile {
    let mut file = tempfile::NamedTempFile::new().unwrap();
    file.write_all(bytes).unwrap();
    file.flush().unwrap();
    file
}

fn all(set: &mut InputSet) -> Vec<Message> {
    set.messages().map(Result::unwrap).collect()
}

#[test]
fn the_index_gives_what_splitting_again_would() {
    for input in inputs() {
        for (raw, batch) in [(false, false), (true, false), (false, true), (true, true)] {
            let file = file_with(&input);
            let sources = vec![
                InputSource::File(file.path().to_path_buf()),
                InputSource::Stdin,
            ];
            let stdin = std::io::Cursor::new(input.clone());
            let mut set =
                InputSet::prepare_with_stdin(sources, options(raw, batch), stdin).unwrap();
            let split = all(&mut set);
            let summary = set.validate().unwrap();
            let indexed = all(&mut set);
            assert_eq!(summary.messages, split.len() as u64);
            assert_eq!(indexed.len(), split.len(), "raw {raw} batch {batch}");
            for (a, b) in indexed.iter().zip(&split) {
                assert_eq!(a, b, "raw {raw} batch {batch}");
                assert_eq!((a.line, a.offset), (b.line, b.offset));
            }
            // Read again (as the check for two-phase ACKs does before sending): the same.
            assert_eq!(all(&mut set), split);
        }
    }
}

#[test]
fn an_index_too_large_for_memory_is_read_back_whole() {
    let input: Vec<u8> = (0..60_000)
        .map(|i| format!("MSH|^~\\&|||||||ADT|{i}|P|2.5\r"))
        .collect::<String>()
        .into();
    let file = file_with(&input);
    let sources = vec![InputSource::File(file.path().to_path_buf())];
    let mut set = InputSet::prepare(sources, InputOptions::default()).unwrap();
    let split = all(&mut set);
    set.validate().unwrap();
    assert_eq!(all(&mut set), split);
    assert_eq!(split.len(), 60_000);
}

#[test]
fn a_file_changed_after_its_check_is_not_sent() {
    let file = file_with(msh(1, "\r").as_bytes());
    let sources = vec![InputSource::File(file.path().to_path_buf())];
    let mut set = InputSet::prepare(sources, InputOptions::default()).unwrap();
    set.validate().unwrap();
    let mut handle = std::fs::OpenOptions::new()
        .append(true)
        .open(file.path())
        .unwrap();
    handle.write_all(b"PID|2\rOBX|unchecked\r").unwrap();
    let mut messages = set.messages();
    let first = messages.next().unwrap();
    assert!(
        first
            .as_ref()
            .is_err_and(|e| e.to_string().contains("changed")),
        "{first:?}"
    );
    assert!(messages.next().is_none());
}

proptest::proptest! {
    /// A record's three numbers read from one buffer are what reading them one by one gives,
    /// and a buffer that cuts them short is left to that reading.
    #[test]
    fn three_numbers_at_once_read_as_one_by_one(
        values in proptest::prelude::any::<(u64, u64, u64)>(),
        cut in 0usize..31,
        capacity in 1usize..12,
    ) {
        let mut buf = Vec::new();
        put(&mut buf, values.0);
        put(&mut buf, values.1);
        put(&mut buf, values.2);
        let at = buf.len();
        proptest::prop_assert_eq!(three(&buf[..at]), Some((values, at)));
        let mut one = &buf[..at];
        let by_one = (get(&mut one).unwrap(), get(&mut one).unwrap(), get(&mut one).unwrap());
        proptest::prop_assert_eq!(by_one, (Some(values.0), Some(values.1), Some(values.2)));
        // Across the ends of a small read buffer: the same numbers, then the end.
        let mut small = std::io::BufReader::with_capacity(capacity, &buf[..at]);
        let across: Vec<_> = (0..4).map(|_| get(&mut small).unwrap()).collect();
        proptest::prop_assert_eq!(across, vec![Some(values.0), Some(values.1), Some(values.2), None]);
        if cut < at {
            proptest::prop_assert_eq!(three(&buf[..cut]), None);
        }
    }
}

#[test]
fn a_number_longer_than_ten_bytes_is_a_bad_record() {
    let mut record = &[0xffu8; 11][..];
    let error = get(&mut record).unwrap_err();
    assert_eq!(error.kind(), std::io::ErrorKind::InvalidData);
    assert_eq!(three(&[0xff; 40]), None);
}
