//! Integration tests: send. Input collection over real directories, stdin spooling, the
//! validation pass, bounded memory on a large file, and the input fuzz corpus replayed.

use crate::support;
use mllp::input::{
    collect_inputs, InputError, InputOptions, InputSet, InputSource, SplitOptions, Splitter,
};
use std::fs;
use std::io::{BufWriter, Write};
use std::path::Path;

const ADT: &[u8] = b"MSH|^~\\&|SEND|FAC|RECV|FAC|20240101120000||ADT^A01|MSG0001|P|2.5\rPID|1||12345^^^H||DOE^JOHN\r";

fn write(path: &Path, data: &[u8]) {
    fs::create_dir_all(path.parent().unwrap()).unwrap();
    fs::write(path, data).unwrap();
}

fn names(sources: &[InputSource], root: &Path) -> Vec<String> {
    sources
        .iter()
        .map(|s| match s {
            InputSource::File(p) => p.strip_prefix(root).unwrap().display().to_string(),
            InputSource::Stdin => "-".into(),
        })
        .collect()
}

fn arg(path: &Path) -> String {
    path.display().to_string()
}

#[test]
fn collect_expands_globs_directories_and_stdin_in_order() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    for name in [
        "b.hl7",
        "a.hl7",
        "c.txt",
        "sub/z.hl7",
        "sub/deeper/y.hl7",
        "sub/.hidden",
        ".dot.hl7",
    ] {
        write(&root.join(name), ADT);
    }

    let globbed = collect_inputs(&[arg(&root.join("*.hl7"))], false).unwrap();
    assert_eq!(names(&globbed, root), ["a.hl7", "b.hl7"]);

    let recursive = collect_inputs(&[arg(&root.join("sub")), "-".into()], true).unwrap();
    assert_eq!(
        names(&recursive, root),
        ["sub/deeper/y.hl7", "sub/z.hl7", "-"]
    );

    assert_eq!(collect_inputs(&[], false).unwrap(), [InputSource::Stdin]);
}

#[test]
fn collect_refuses_what_it_cannot_send() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    write(&root.join("sub/a.hl7"), ADT);
    fs::create_dir(root.join("empty")).unwrap();

    let e = collect_inputs(&[arg(&root.join("sub"))], false).unwrap_err();
    assert!(matches!(e, InputError::IsDirectory { .. }));
    // The library names what is wrong; the command adds the flag that helps.
    assert!(!e.to_string().contains("--"), "{e}");
    let e = collect_inputs(&[arg(&root.join("*.none"))], false).unwrap_err();
    assert!(matches!(e, InputError::NoMatch { .. }));
    let e = collect_inputs(&[arg(&root.join("missing.hl7"))], false).unwrap_err();
    assert!(matches!(e, InputError::NotFound { .. }));
    let e = collect_inputs(&[arg(&root.join("empty"))], true).unwrap_err();
    assert!(matches!(e, InputError::EmptyDirectory { .. }));
    let e = collect_inputs(&["-".into(), "-".into()], false).unwrap_err();
    assert!(matches!(e, InputError::StdinTwice));
}

#[test]
fn validation_finds_a_bad_file_before_any_message_is_taken() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    write(&root.join("1-good.hl7"), &[ADT, ADT].concat());
    write(&root.join("2-bad.hl7"), b"\r\nnot hl7 at all\r\n");
    let sources = collect_inputs(&[arg(&root.join("*.hl7"))], false).unwrap();
    let set =
        InputSet::prepare_with_stdin(sources, InputOptions::default(), std::io::empty()).unwrap();
    let e = set.validate().unwrap_err();
    assert!(
        matches!(e, InputError::TextBeforeMsh { line: 2, .. }),
        "{e}"
    );
    assert!(e.to_string().contains("2-bad.hl7 line 2"), "{e}");
}

#[test]
fn stdin_is_spooled_validated_and_read_twice() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("a.hl7");
    write(&file, ADT);
    let sources = collect_inputs(&[arg(&file), "-".into()], false).unwrap();
    let stdin = [ADT, b"\n", ADT].concat();
    let mut set = InputSet::prepare_with_stdin(
        sources,
        InputOptions::default(),
        std::io::Cursor::new(stdin),
    )
    .unwrap();
    let summary = set.validate().unwrap();
    assert_eq!((summary.messages, summary.bytes), (3, 3 * ADT.len() as u64));
    assert!(!summary.unvalidated_stdin);
    let labels: Vec<String> = set.messages().map(|m| m.unwrap().label()).collect();
    assert_eq!(
        labels,
        [format!("{}#1", file.display()), "-#1".into(), "-#2".into()]
    );
    // The spool is read again from the start.
    assert_eq!(set.messages().count(), 3);
}

#[test]
fn stdin_over_max_input_is_refused() {
    let options = InputOptions {
        max_input: 100,
        ..InputOptions::default()
    };
    let stdin = std::io::Cursor::new(vec![b'x'; 101]);
    let e = InputSet::prepare_with_stdin(vec![InputSource::Stdin], options, stdin)
        .err()
        .unwrap();
    assert!(matches!(e, InputError::StdinTooLarge { max: 100 }));
    assert!(!e.to_string().contains("--"), "{e}");
    let exact = std::io::Cursor::new(vec![b'x'; 100]);
    assert!(InputSet::prepare_with_stdin(vec![InputSource::Stdin], options, exact).is_ok());
}

#[test]
fn streamed_stdin_is_read_once_unvalidated() {
    let options = InputOptions {
        stream: true,
        ..InputOptions::default()
    };
    let stdin = std::io::Cursor::new([ADT, ADT].concat());
    let mut set = InputSet::prepare_with_stdin(vec![InputSource::Stdin], options, stdin).unwrap();
    assert!(set.validate().unwrap().unvalidated_stdin);
    assert_eq!(set.messages().count(), 2);
    assert_eq!(set.messages().count(), 0);
}

/// 200 MB of LF-terminated messages streams through with the splitter's buffer staying small.
#[test]
fn a_large_file_streams_in_bounded_memory() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("big.hl7");
    let lf: Vec<u8> = ADT
        .iter()
        .map(|&b| if b == b'\r' { b'\n' } else { b })
        .collect();
    let count = 200 * 1024 * 1024 / lf.len();
    {
        let mut out = BufWriter::new(fs::File::create(&path).unwrap());
        for _ in 0..count {
            out.write_all(&lf).unwrap();
        }
        out.flush().unwrap();
    }
    let file = fs::File::open(&path).unwrap();
    let mut splitter = Splitter::from_read("big.hl7", file, SplitOptions::default());
    let mut seen = 0usize;
    for message in splitter.by_ref() {
        assert_eq!(message.unwrap().payload.len(), ADT.len());
        seen += 1;
    }
    assert_eq!(seen, count);
    let peak = splitter.peak_buffer_capacity();
    assert!(peak < 64 * 1024, "splitter buffer grew to {peak} bytes");
}

/// Every committed corpus entry of the `input` fuzz target holds its invariants.
#[test]
fn input_fuzz_corpus_replays() {
    let corpus = support::repo_root().join("fuzz/corpus/input");
    let mut entries: Vec<_> = fs::read_dir(&corpus)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    entries.sort();
    assert!(
        entries.len() >= 8,
        "corpus at {} is missing",
        corpus.display()
    );
    for entry in entries {
        mllp::fuzzing::split_input(&fs::read(&entry).unwrap());
    }
}
