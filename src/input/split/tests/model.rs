//! Property test: taking whole lines and whole messages from the reader's buffer gives exactly
//! what reading line by line gives: the same messages, lines, offsets, payloads, verbatim flags,
//! and the same error at the same point.

use super::*;
use proptest::prelude::*;
use std::io;

/// Index, line, offset, payload and verbatim flag of one message; an error as its `Debug`.
type Seen = Result<(u64, u64, u64, Vec<u8>, bool), String>;

fn splitter<'a>(
    data: &'a [u8],
    capacity: usize,
    sizes: &[usize],
    options: SplitOptions,
) -> Splitter<io::BufReader<Chunky<'a>>> {
    let reader = io::BufReader::with_capacity(
        capacity,
        Chunky {
            data,
            sizes: sizes.to_vec(),
            turn: 0,
        },
    );
    Splitter::new("m", reader, options)
}

fn seen(next: Result<(Message, bool), InputError>) -> Seen {
    next.map(|(m, verbatim)| (m.index, m.line, m.offset, m.payload.to_vec(), verbatim))
        .map_err(|e| format!("{e:?}"))
}

fn by_lines(data: &[u8], capacity: usize, sizes: &[usize], options: SplitOptions) -> Vec<Seen> {
    let mut s = splitter(data, capacity, sizes, options).line_by_line();
    std::iter::from_fn(|| s.next_verbatim()).map(seen).collect()
}

fn by_runs(data: &[u8], capacity: usize, sizes: &[usize], options: SplitOptions) -> Vec<Seen> {
    let mut s = splitter(data, capacity, sizes, options);
    std::iter::from_fn(|| s.next_verbatim()).map(seen).collect()
}

fn by_records(data: &[u8], capacity: usize, sizes: &[usize], options: SplitOptions) -> Vec<Seen> {
    let mut s = splitter(data, capacity, sizes, options);
    let mut all = Vec::new();
    while let Some(next) = s.next_record() {
        if let Ok(r) = &next {
            // What the check learns of a record's headers reads its MSH-10s as the payload does.
            assert_eq!(
                r.lacks_control_id(),
                crate::input::lacks_control_id(r.payload),
                "control ID of {:?}",
                String::from_utf8_lossy(r.payload)
            );
        }
        all.push(
            next.map(|r| (r.index, r.line, r.offset, r.payload.to_vec(), r.verbatim))
                .map_err(|e| format!("{e:?}")),
        );
    }
    all
}

/// One line: how it starts, how long its body is, how it ends.
fn line() -> impl Strategy<Value = Vec<u8>> {
    let start = prop::sample::select(vec![
        &b"MSH|^~\\&|"[..],
        b"MSH^",
        b"MSH ",
        b"MSH",
        b"MSHX|",
        b"MSH1",
        b"MS",
        b"PID|1|",
        b"OBX|",
        b" PID",
        b"FHS|^~\\&",
        b"BHS|^~\\&",
        b"BTS|1",
        b"FTS|1",
        b"FTS",
        b"",
        b" ",
        b"\t ",
        b"x",
    ]);
    let body = prop::sample::select(vec![&b""[..], b"a", b"a|b^c", b"\x1a", b"\x0b", b"\x1c"]);
    let end = prop::sample::select(vec![
        &b"\r"[..],
        b"\r",
        b"\r",
        b"\r",
        b"\n",
        b"\r\n",
        b"\x1c\r",
        b"\x0b",
        b"",
    ]);
    (start, body, 0usize..40, end).prop_map(|(start, body, pad, end)| {
        let mut line = start.to_vec();
        line.extend_from_slice(body);
        line.extend(std::iter::repeat_n(b'y', pad));
        line.extend_from_slice(end);
        line
    })
}

fn input() -> impl Strategy<Value = Vec<u8>> {
    let head = prop::sample::select(vec![&b""[..], b"", b"", b"\x0b", b"\xEF\xBB\xBF", b"\r\n "]);
    let tail = prop::sample::select(vec![&b""[..], b"", b"\x1a", b"\r\x1a", b"\x1c\r"]);
    (head, prop::collection::vec(line(), 0..30), tail)
        .prop_map(|(head, lines, tail)| [head.to_vec(), lines.concat(), tail.to_vec()].concat())
}

/// Mostly well-formed messages of CR lines, where the whole-run paths do most of the work.
fn mostly_plain() -> impl Strategy<Value = Vec<u8>> {
    let line = prop::sample::select(vec![
        &b"MSH|^~\\&|A|B|C|D|20240101||ADT^A01|1|P|2.5\r"[..],
        b"MSH|^~\\&|A|B|C|D|20240101||ADT^A01|2|P|2.5\r",
        b"MSH|^~\\&|A|B|C|D|20240101||ADT^A01||P|2.5\r",
        b"PID|1||42^^^H^MR||DOE^JOHN\r",
        b"PV1|1|I|WARD^101\r",
        b"NTE|1||xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx\r",
    ]);
    let odd = prop::sample::select(vec![
        &b"PID|1\n"[..],
        b"PID|1\r\n",
        b"\r",
        b"  \r",
        b"BHS|^~\\&\r",
        b"BTS|1\r",
        b"FHS|^~\\&\r",
        b"FTS|1\r",
        b"NTE|\x0b\r",
        b"NTE|\x1c\r",
        b"MSHX|\r",
    ]);
    let piece = prop_oneof![5 => line, 2 => odd];
    prop::collection::vec(piece, 0..60).prop_map(|v| v.concat())
}

fn options() -> impl Strategy<Value = SplitOptions> {
    (any::<bool>(), any::<bool>(), 1usize..400).prop_map(|(raw, batch, max_message)| SplitOptions {
        raw,
        batch,
        max_message,
    })
}

/// A maximum at or beside the length of one of the messages in `data`, so that the limit is
/// hit exactly.
fn tight(data: &[u8], pick: usize, delta: usize, options: SplitOptions) -> SplitOptions {
    let starts: Vec<usize> = (0..data.len())
        .filter(|&at| data[at..].starts_with(b"MSH") && (at == 0 || data[at - 1] == b'\r'))
        .chain([data.len()])
        .collect();
    let lens: Vec<usize> = starts.windows(2).map(|w| w[1] - w[0]).collect();
    match lens.get(pick % lens.len().max(1)) {
        Some(&len) if !pick.is_multiple_of(3) => SplitOptions {
            max_message: (len + delta).saturating_sub(1).max(1),
            ..options
        },
        _ => options,
    }
}

fn compare(data: &[u8], capacity: usize, sizes: &[usize], options: SplitOptions) {
    let want = by_lines(data, capacity, sizes, options);
    assert_eq!(by_runs(data, capacity, sizes, options), want, "messages");
    assert_eq!(by_records(data, capacity, sizes, options), want, "records");
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    #[test]
    fn whole_runs_split_as_lines_do(
        data in input(),
        capacity in 1usize..80,
        sizes in prop::collection::vec(1usize..90, 1..6),
        options in options(),
        pick: usize,
        delta in 0usize..3,
    ) {
        compare(&data, capacity, &sizes, tight(&data, pick, delta, options));
    }

    #[test]
    fn whole_runs_split_plain_messages_as_lines_do(
        data in mostly_plain(),
        capacity in prop_oneof![1usize..64, 64usize..4096],
        sizes in prop::collection::vec(1usize..5000, 1..6),
        options in options(),
        pick: usize,
        delta in 0usize..3,
    ) {
        compare(&data, capacity, &sizes, tight(&data, pick, delta, options));
    }
}
