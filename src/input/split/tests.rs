//! Unit tests of the splitter's rules, and its independence from the reader's chunking.

use super::*;
use crate::input::{InputError, Message, SplitOptions};
use proptest::prelude::*;
use std::io::{self, Read};

fn opts() -> SplitOptions {
    SplitOptions::default()
}

fn split(data: &[u8], options: SplitOptions) -> Result<Vec<Message>, InputError> {
    Splitter::new("adt.hl7", data, options).collect()
}

fn payloads(data: &[u8], options: SplitOptions) -> Vec<Vec<u8>> {
    split(data, options)
        .expect("splits")
        .into_iter()
        .map(|m| m.payload.to_vec())
        .collect()
}

fn error(data: &[u8], options: SplitOptions) -> InputError {
    split(data, options).expect_err("must fail")
}

const A: &[u8] = b"MSH|^~\\&|A|B|C|D|20240101||ADT^A01|1|P|2.5\rPID|1||42\r";
const B: &[u8] = b"MSH|^~\\&|A|B|C|D|20240101||ADT^A01|2|P|2.5\rPID|1||43\r";

#[test]
fn single_message() {
    let messages = split(A, opts()).unwrap();
    assert_eq!(messages.len(), 1);
    assert_eq!(&messages[0].payload[..], A);
    assert_eq!(messages[0].label(), "adt.hl7#1");
    assert_eq!((messages[0].line, messages[0].offset), (1, 0));
}

#[test]
fn multiple_messages_carry_index_line_and_offset() {
    let data = [A, B].concat();
    let messages = split(&data, opts()).unwrap();
    assert_eq!(messages.len(), 2);
    assert_eq!(&messages[1].payload[..], B);
    assert_eq!(messages[1].label(), "adt.hl7#2");
    assert_eq!(messages[1].line, 3);
    assert_eq!(messages[1].offset, A.len() as u64);
}

#[test]
fn crlf_and_lf_are_normalised_to_cr() {
    let crlf = b"MSH|^~\\&|A\r\nPID|1\r\nMSH|^~\\&|B\r\nPID|2\r\n";
    let lf = b"MSH|^~\\&|A\nPID|1\nMSH|^~\\&|B\nPID|2\n";
    let want = vec![
        b"MSH|^~\\&|A\rPID|1\r".to_vec(),
        b"MSH|^~\\&|B\rPID|2\r".to_vec(),
    ];
    assert_eq!(payloads(crlf, opts()), want);
    assert_eq!(payloads(lf, opts()), want);
    let messages = split(crlf, opts()).unwrap();
    assert_eq!(messages[1].line, 3);
    assert_eq!(messages[1].offset, 19);
}

#[test]
fn last_segment_gets_its_cr_and_trailing_whitespace_goes() {
    let data = b"MSH|^~\\&|A\nPID|1\n\n   \n\t\r\n";
    assert_eq!(
        payloads(data, opts()),
        vec![b"MSH|^~\\&|A\rPID|1\r".to_vec()]
    );
    assert_eq!(
        payloads(b"MSH|^~\\&|A\nPID|1", opts()),
        vec![b"MSH|^~\\&|A\rPID|1\r".to_vec()]
    );
}

#[test]
fn blank_lines_are_skipped_anywhere() {
    let data = b"\n\n  \r\nMSH|^~\\&|A\n\nPID|1\n\n\nMSH|^~\\&|B\n";
    let messages = split(data, opts()).unwrap();
    assert_eq!(messages[0].payload, &b"MSH|^~\\&|A\rPID|1\r"[..]);
    assert_eq!(messages[0].line, 4);
    assert_eq!(messages[1].payload, &b"MSH|^~\\&|B\r"[..]);
    assert_eq!(messages[1].line, 9);
}

#[test]
fn raw_passes_bytes_untouched_and_still_splits() {
    let raw = SplitOptions {
        raw: true,
        ..opts()
    };
    let data = b"MSH|^~\\&|A\r\nPID|1\n\nNTE|x\r\n\n\nMSH|^~\\&|B\nPID|2";
    assert_eq!(
        payloads(data, raw),
        vec![
            b"MSH|^~\\&|A\r\nPID|1\n\nNTE|x\r\n".to_vec(),
            b"MSH|^~\\&|B\nPID|2".to_vec()
        ]
    );
}

#[test]
fn framed_input_is_deframed() {
    let data = [b"\x0b", A, b"\x1c\r\x0b", B, b"\x1c\r"].concat();
    let messages = split(&data, opts()).unwrap();
    assert_eq!(messages.len(), 2);
    assert_eq!(&messages[0].payload[..], A);
    assert_eq!(&messages[1].payload[..], B);
    assert_eq!(messages[0].offset, 1);
    assert_eq!(messages[1].offset, A.len() as u64 + 4);
}

#[test]
fn framed_input_tolerates_whitespace_and_lf_between_frames() {
    let data = [b"\r\n \x0b", A, b"\x1c\n\n\x0b", B, b"\x1c\r\n\r\n"].concat();
    assert_eq!(payloads(&data, opts()), vec![A.to_vec(), B.to_vec()]);
    let lf_inside = b"\x0bMSH|^~\\&|A\nPID|1\n\x1c\n";
    assert_eq!(
        payloads(lf_inside, opts()),
        vec![b"MSH|^~\\&|A\rPID|1\r".to_vec()]
    );
}

#[test]
fn framed_input_errors_name_the_line() {
    let between = [b"\x0b", A, b"\x1c\rjunk\r"].concat();
    assert!(matches!(
        error(&between, opts()),
        InputError::TextBetweenFrames { line: 4, .. }
    ));
    let open = [b"\x0b", A].concat();
    assert!(matches!(
        error(&open, opts()),
        InputError::UnterminatedFrame { line: 1, .. }
    ));
    assert!(matches!(
        error(b"\x0b \r\x1c\r", opts()),
        InputError::EmptyFrame { line: 1, .. }
    ));
    let vt_inside = b"\x0bMSH|^~\\&|A\rPID|\x0b1\r\x1c\r";
    assert!(matches!(
        error(vt_inside, opts()),
        InputError::FramingByte {
            line: 2,
            byte: 0x0b,
            ..
        }
    ));
}

const BATCH: &[u8] =
    b"FHS|^~\\&\rBHS|^~\\&\rMSH|^~\\&|A\rPID|1\rMSH|^~\\&|B\rPID|2\rBTS|2\rFTS|1\r";

#[test]
fn batch_is_split_into_its_messages_by_default() {
    assert_eq!(
        payloads(BATCH, opts()),
        vec![
            b"MSH|^~\\&|A\rPID|1\r".to_vec(),
            b"MSH|^~\\&|B\rPID|2\r".to_vec()
        ]
    );
}

#[test]
fn batch_is_kept_whole_with_batch() {
    let batch = SplitOptions {
        batch: true,
        ..opts()
    };
    let data = [BATCH, A].concat();
    let messages = split(&data, batch).unwrap();
    assert_eq!(messages.len(), 2);
    assert_eq!(&messages[0].payload[..], BATCH);
    assert_eq!(&messages[1].payload[..], A);
    assert_eq!(messages[1].line, 9);
    // A BHS-only batch ends at its BTS; one without a trailer at the end of the input.
    let bhs = b"BHS|^~\\&\rMSH|^~\\&|A\rBTS|1\rBHS|^~\\&\rMSH|^~\\&|B\r";
    assert_eq!(payloads(bhs, batch).len(), 2);
}

#[test]
fn text_before_first_msh_is_an_error_naming_the_line() {
    let e = error(b"\n\nhello\rMSH|^~\\&|A\r", opts());
    assert!(matches!(e, InputError::TextBeforeMsh { line: 3, .. }));
    assert_eq!(
        e.to_string(),
        "adt.hl7 line 3: text before the first MSH segment; each message must start with MSH"
    );
    // Text after a batch trailer and before the next MSH too.
    let after = b"BHS|^~\\&\rMSH|^~\\&|A\rBTS|1\rPID|1\r";
    assert!(matches!(
        error(after, opts()),
        InputError::TextBeforeMsh { line: 4, .. }
    ));
    // `MSHX` is not an MSH segment.
    assert!(matches!(
        error(b"MSHX|1\r", opts()),
        InputError::TextBeforeMsh { line: 1, .. }
    ));
}

#[test]
fn errors_never_carry_payload() {
    let e = error(b"SECRET-PATIENT-NAME\r", opts());
    assert!(!e.to_string().contains("SECRET"));
    assert!(!format!("{e:?}").contains("SECRET"));
    let m = split(b"MSH|^~\\&|SECRET\r", opts()).unwrap();
    assert!(!format!("{m:?}").contains("SECRET"));
}

#[test]
fn utf8_byte_order_mark_is_skipped() {
    let data = [b"\xEF\xBB\xBF", A].concat();
    assert_eq!(payloads(&data, opts()), vec![A.to_vec()]);
    assert!(matches!(
        error(b"\xEFMSH|\r", opts()),
        InputError::TextBeforeMsh { line: 1, .. }
    ));
}

#[test]
fn vt_or_fs_in_unframed_content_is_an_error() {
    let e = error(b"MSH|^~\\&|A\rPID|1\x0b\r", opts());
    assert!(matches!(
        e,
        InputError::FramingByte {
            line: 2,
            byte: 0x0b,
            ..
        }
    ));
    assert!(e.to_string().contains("VT byte (0x0B)"));
    let e = error(b"MSH|^~\\&|A\rPID|1\r\x1c\r", opts());
    assert!(matches!(
        e,
        InputError::FramingByte {
            line: 3,
            byte: 0x1c,
            ..
        }
    ));
}

/// Labels of what comes out before the error, and the error's line.
fn until_error(data: &[u8], options: SplitOptions) -> (Vec<u64>, u64) {
    let mut done = Vec::new();
    for item in Splitter::new("s", data, options) {
        match item {
            Ok(m) => done.push(m.index),
            Err(
                InputError::FramingByte { line, .. } | InputError::MessageTooLarge { line, .. },
            ) => return (done, line),
            Err(e) => panic!("{e}"),
        }
    }
    panic!("no error")
}

#[test]
fn a_message_completed_before_a_bad_line_comes_out_before_the_error() {
    // The bad line starts the next message: the one before it is whole.
    let bad_msh = [A, b"MSH|^~\\&|\x0b\r".as_slice()].concat();
    assert_eq!(until_error(&bad_msh, opts()), (vec![1], 3));
    // The bad line is part of the open message: that message is not whole.
    let bad_pid = [A, B, b"PID|\x0b\r".as_slice()].concat();
    assert_eq!(until_error(&bad_pid, opts()), (vec![1], 5));
    let tiny = SplitOptions {
        max_message: 100,
        ..opts()
    };
    let long_msh = [A, b"MSH|".as_slice(), &[b'x'; 200]].concat();
    assert_eq!(until_error(&long_msh, tiny), (vec![1], 3));
    // Inside a batch kept whole, a bad MSH line leaves nothing whole behind it.
    let batch = SplitOptions {
        batch: true,
        ..opts()
    };
    let bad_in_batch = b"BHS|^~\\&\rMSH|^~\\&|A\rMSH|^~\\&|\x0b\r";
    assert_eq!(until_error(bad_in_batch, batch), (vec![], 3));
}

#[test]
fn empty_input_has_no_messages() {
    assert!(matches!(error(b"", opts()), InputError::NoMessages { .. }));
    assert!(matches!(
        error(b" \r\n\n", opts()),
        InputError::NoMessages { .. }
    ));
}

#[test]
fn max_message_size_is_enforced_without_reading_on() {
    let small = SplitOptions {
        max_message: A.len(),
        ..opts()
    };
    assert_eq!(payloads(A, small), vec![A.to_vec()]);
    let data = [B, A, b"NTE|x\r"].concat();
    let mut messages = Splitter::new("adt.hl7", &data[..], small);
    assert!(messages.next().unwrap().is_ok());
    let e = messages.next().unwrap().unwrap_err();
    assert!(matches!(e, InputError::MessageTooLarge { line: 3, max, .. } if max == A.len()));
    assert!(messages.next().is_none());
    // One endless line stops at the limit.
    let endless = [b"MSH|".as_slice(), &vec![b'x'; 10_000]].concat();
    let tiny = SplitOptions {
        max_message: 100,
        ..opts()
    };
    let mut splitter = Splitter::new("big", &endless[..], tiny);
    assert!(matches!(
        splitter.next(),
        Some(Err(InputError::MessageTooLarge { line: 1, .. }))
    ));
    assert!(splitter.peak_buffer_capacity() < 1024);
    // A too-long MSH line is named by its own line, not the message before it.
    let data = [A, b"\r\n", endless.as_slice()].concat();
    let e = error(&data, tiny);
    assert!(
        matches!(e, InputError::MessageTooLarge { line: 4, .. }),
        "{e}"
    );
}

/// Index, line, offset and payload of one message.
type Seen = (u64, u64, u64, Vec<u8>);

/// A reader that returns at most the next of `sizes` bytes per read, cycling.
struct Chunky<'a> {
    data: &'a [u8],
    sizes: Vec<usize>,
    turn: usize,
}

impl Read for Chunky<'_> {
    fn read(&mut self, out: &mut [u8]) -> io::Result<usize> {
        let want = self.sizes[self.turn % self.sizes.len()].max(1);
        self.turn += 1;
        let n = want.min(out.len()).min(self.data.len());
        out[..n].copy_from_slice(&self.data[..n]);
        self.data = &self.data[n..];
        Ok(n)
    }
}

fn outcome(data: &[u8], sizes: Vec<usize>, options: SplitOptions) -> Vec<Result<Seen, String>> {
    let reader = io::BufReader::with_capacity(
        sizes[0].max(1),
        Chunky {
            data,
            sizes,
            turn: 0,
        },
    );
    Splitter::new("p", reader, options)
        .map(|r| {
            r.map(|m| (m.index, m.line, m.offset, m.payload.to_vec()))
                .map_err(|e| e.to_string())
        })
        .collect()
}

fn hl7ish() -> impl Strategy<Value = Vec<u8>> {
    let pieces = prop::sample::select(vec![
        b"MSH|^~\\&|A|B\r".to_vec(),
        b"MSH|^~\\&|C\n".to_vec(),
        b"PID|1||x\r\n".to_vec(),
        b"FHS|^~\\&\r".to_vec(),
        b"BHS|^~\\&\r".to_vec(),
        b"BTS|1\r".to_vec(),
        b"FTS|1\n".to_vec(),
        b"\x0b".to_vec(),
        b"\x1c\r".to_vec(),
        b"\r\n".to_vec(),
        b"  \n".to_vec(),
        b"x".to_vec(),
    ]);
    prop::collection::vec(pieces, 0..24).prop_map(|v| v.concat())
}

proptest! {
    #[test]
    fn splitting_is_independent_of_chunking(
        data in hl7ish(),
        sizes in prop::collection::vec(1usize..7, 1..8),
        raw: bool,
        batch: bool,
    ) {
        let options = SplitOptions { raw, batch, max_message: 64 };
        let whole = outcome(&data, vec![data.len().max(1)], options);
        let chunked = outcome(&data, sizes, options);
        prop_assert_eq!(&whole, &chunked);
        for (_, _, _, payload) in whole.iter().flatten() {
            prop_assert!(!payload.is_empty());
            prop_assert!(!payload.contains(&0x0b) && !payload.contains(&0x1c));
        }
    }
}
