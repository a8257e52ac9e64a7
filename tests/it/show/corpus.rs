//! The reader beside python-hl7 on third-party messages (`tests/hl7-corpus`): every field,
//! repetition, component and subcomponent python-hl7 reads, the same value, except where the
//! HL7 notation and python-hl7 part ways; each such place is listed here with the rule that
//! decides it.

use crate::support::repo_root;
use mllp::hl7::{Message, Path};
use mllp::input::{SplitOptions, Splitter};
use std::collections::{BTreeMap, BTreeSet};
use std::process::{Command, Stdio};

#[derive(serde::Deserialize)]
struct Corpus {
    #[serde(rename = "python-hl7")]
    version: String,
    messages: Vec<Entry>,
}

#[derive(serde::Deserialize)]
struct Entry {
    file: String,
    message: usize,
    text: String,
    #[serde(default)]
    values: Option<Vec<(String, String, String)>>,
    #[serde(default)]
    python_hl7_fails: Option<String>,
}

/// Where the two part ways, and the rule that decides: (file, path, rule).
const DISAGREEMENTS: &[(&str, &str, &str)] = &[(
    "hl7apy/test_to_string-msh-highlighted.hl7",
    "MSH(1)-8(1).1.1",
    // python-hl7 writes `_` for each; the notation's `\H\` and `\N\` only switch
    // highlighting on and off (HL7 v2.5 section 2.7.3), so the text is the words alone.
    "\\H\\ and \\N\\ are formatting, not text",
)];

/// Messages python-hl7 cannot read at all (it asserts on MSH-2 declaring one character twice),
/// with what the reader reads there instead: MSH-2 as written and MSH-10.
const PYTHON_HL7_FAILS: &[(&str, &str)] = &[
    ("hl7apy/test_parser-09.hl7", "AssertionError"),
    ("hl7apy/test_parser-10.hl7", "AssertionError"),
];

fn corpus_dir() -> std::path::PathBuf {
    repo_root().join("tests/hl7-corpus")
}

fn committed() -> Corpus {
    let text = std::fs::read_to_string(corpus_dir().join("python-hl7-values.json"))
        .expect("read the committed values");
    serde_json::from_str(&text).expect("the committed values are JSON")
}

/// The messages of a corpus file as `mllp show` reads them.
fn messages_of(file: &str) -> Vec<Vec<u8>> {
    let path = corpus_dir().join(file);
    let bytes = std::fs::File::open(&path).expect("open a corpus file");
    Splitter::from_read(file, bytes, SplitOptions::default())
        .map(|m| m.expect("a corpus file splits").payload.to_vec())
        .collect()
}

/// The reader's value for one of python-hl7's.
fn ours(message: &Message<'_>, path: &str, kind: &str) -> String {
    let parsed: Path = path.parse().expect("the corpus paths are paths");
    let bytes = match kind {
        // The whole field, every repetition.
        "field" => {
            let segment = message
                .segments()
                .filter(|s| s.name() == parsed.segment())
                .nth(match parsed.occurrence() {
                    mllp::hl7::Occurrence::Nth(n) => n - 1,
                    mllp::hl7::Occurrence::Every => unreachable!(),
                })
                .expect("the segment is there");
            segment
                .field(parsed.field())
                .map(|v| v.raw().to_vec())
                .unwrap_or_default()
        }
        "raw" => message.get(&parsed).raw().to_vec(),
        _ => message.get(&parsed).decoded().into_owned(),
    };
    String::from_utf8(bytes).expect("the corpus is UTF-8")
}

#[test]
fn field_values_are_python_hl7s_where_the_notation_agrees() {
    let corpus = committed();
    let mut files: BTreeMap<&str, Vec<Vec<u8>>> = BTreeMap::new();
    let mut disagreements = BTreeSet::new();
    let mut fails = BTreeSet::new();
    let mut compared = 0usize;
    for entry in &corpus.messages {
        let split = files
            .entry(&entry.file)
            .or_insert_with(|| messages_of(&entry.file));
        let payload = &split[entry.message - 1];
        // The same message python-hl7 was given: `show` ends the last segment with a CR.
        assert_eq!(
            payload.strip_suffix(b"\r").unwrap_or(payload),
            entry.text.as_bytes(),
            "{}#{}: split as python-hl7's script splits it",
            entry.file,
            entry.message
        );
        let message = Message::new(payload);
        if let Some(failure) = &entry.python_hl7_fails {
            fails.insert((entry.file.as_str(), failure.as_str()));
            assert_eq!(ours(&message, "MSH-10", "raw"), "0123456789");
            assert!(ours(&message, "MSH-2", "raw").starts_with("^&&^"));
            continue;
        }
        for (path, kind, want) in entry.values.iter().flatten() {
            compared += 1;
            let got = ours(&message, path, kind);
            if &got != want {
                disagreements.insert((entry.file.clone(), path.clone(), got, want.clone()));
            }
        }
    }
    assert!(compared > 5000, "{compared} values compared");
    let known: BTreeSet<(String, String)> = DISAGREEMENTS
        .iter()
        .map(|(f, p, _)| (f.to_string(), p.to_string()))
        .collect();
    let found: BTreeSet<(String, String)> = disagreements
        .iter()
        .map(|(f, p, ..)| (f.clone(), p.clone()))
        .collect();
    let unexplained: Vec<_> = disagreements
        .iter()
        .filter(|(f, p, ..)| !known.contains(&(f.clone(), p.clone())))
        .collect();
    assert!(
        unexplained.is_empty(),
        "values that differ from python-hl7's (file, path, ours, python-hl7's): {unexplained:#?}"
    );
    let stale: Vec<_> = known.difference(&found).collect();
    assert!(
        stale.is_empty(),
        "listed disagreements that are gone: {stale:?}"
    );
    let known_fails: BTreeSet<(&str, &str)> = PYTHON_HL7_FAILS.iter().copied().collect();
    assert_eq!(fails, known_fails, "messages python-hl7 cannot read");
    assert_eq!(corpus.version, crate::support::python_peer::PINNED);
}

/// The committed values are python-hl7's own: the script run again gives the same file. Needs
/// python-hl7 0.4.5 (`.ci/run` installs it); skipped with a note without it, failed under CI.
#[test]
fn the_committed_values_are_what_python_hl7_reads() {
    let probe = Command::new("python3")
        .args(["-c", "import hl7; print(hl7.__version__)"])
        .stdin(Stdio::null())
        .output();
    let version = probe
        .ok()
        .filter(|o| o.status.success())
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string());
    if version.as_deref() != Some(crate::support::python_peer::PINNED) {
        let why = format!(
            "python-hl7 {} is not installed (found {version:?})",
            crate::support::python_peer::PINNED
        );
        assert!(std::env::var_os("CI").is_none(), "{why}");
        eprintln!("skipped: {why}");
        return;
    }
    let out = Command::new("python3")
        .arg(corpus_dir().join("python_hl7_values.py"))
        .stdin(Stdio::null())
        .output()
        .expect("run the script");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let committed = std::fs::read(corpus_dir().join("python-hl7-values.json")).unwrap();
    assert!(
        out.stdout == committed,
        "tests/hl7-corpus/python-hl7-values.json is stale: run the script again"
    );
}
