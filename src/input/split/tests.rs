//! Unit tests of the splitter's rules for each input shape; the error rules are in `errors`,
//! independence from the reader's chunking in `chunking`.

mod chunking;
mod errors;
mod model;

use super::*;
use crate::input::{InputError, Message, SplitOptions};

/// A reader that returns at most the next of `sizes` bytes per read, cycling.
pub(super) struct Chunky<'a> {
    pub(super) data: &'a [u8],
    pub(super) sizes: Vec<usize>,
    pub(super) turn: usize,
}

impl std::io::Read for Chunky<'_> {
    fn read(&mut self, out: &mut [u8]) -> std::io::Result<usize> {
        let want = self.sizes[self.turn % self.sizes.len()].max(1);
        self.turn += 1;
        let n = want.min(out.len()).min(self.data.len());
        out[..n].copy_from_slice(&self.data[..n]);
        self.data = &self.data[n..];
        Ok(n)
    }
}

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
fn utf8_byte_order_mark_is_skipped() {
    let data = [b"\xEF\xBB\xBF", A].concat();
    assert_eq!(payloads(&data, opts()), vec![A.to_vec()]);
    assert!(matches!(
        error(b"\xEFMSH|\r", opts()),
        InputError::TextBeforeMsh { line: 1, .. }
    ));
}
