//! Unit tests of the splitter's errors: what they name, what comes out before them, and that
//! they never carry payload.

use super::*;

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
