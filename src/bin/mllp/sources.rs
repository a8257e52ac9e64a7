//! The inputs `diff` and `deid` read, as `send` reads them: files, globs, directories,
//! stdin, framed captures and batches (split into their messages), and a receiver's or
//! relay's SQLite store, each source with the name its output takes.

use crate::diag::Diag;
use mllp::input::{collect_inputs, InputError, InputSource, Message, SplitOptions, Splitter};
use mllp::input::{StoreFilter, StoreRows};
use std::fs::File;
use std::path::{Path, PathBuf};

/// One source of messages.
#[derive(Debug, Clone)]
pub struct Source {
    pub kind: Kind,
    /// Found in a directory the arguments named, rather than named itself.
    pub walked: bool,
    /// The name an output written for this source takes, relative to the output directory:
    /// the file's path under the directory given, or its name.
    pub output_name: PathBuf,
}

#[derive(Debug, Clone)]
pub enum Kind {
    File(PathBuf),
    Stdin,
    Store(PathBuf),
}

/// The messages of a source, in order; ends after the first error.
pub type Messages = Box<dyn Iterator<Item = Result<Message, InputError>>>;

/// The first bytes of every SQLite database file.
const SQLITE_MAGIC: &[u8] = b"SQLite format 3\0";

/// A file that is a SQLite database: a store of `listen --sqlite` or `relay`.
fn is_store(path: &Path) -> bool {
    let mut head = [0u8; 16];
    File::open(path)
        .and_then(|mut f| std::io::Read::read_exact(&mut f, &mut head))
        .is_ok_and(|()| head == SQLITE_MAGIC)
}

/// The sources the arguments name, in order (none: stdin). A directory is walked when
/// `recursive`; a store file is read as its messages.
pub fn collect(args: &[String], recursive: bool) -> Result<Vec<Source>, InputError> {
    if args.is_empty() {
        return collect(&["-".to_string()], recursive);
    }
    let mut sources = Vec::new();
    for arg in args {
        let root = Path::new(arg);
        for found in collect_inputs(std::slice::from_ref(arg), recursive)? {
            sources.push(match found {
                InputSource::Stdin => Source {
                    kind: Kind::Stdin,
                    walked: false,
                    output_name: PathBuf::from("stdin.hl7"),
                },
                InputSource::File(path) => {
                    let output_name = match root.is_dir() {
                        true => path.strip_prefix(root).unwrap_or(&path).to_path_buf(),
                        false => path.file_name().map(PathBuf::from).unwrap_or_default(),
                    };
                    if is_store(&path) {
                        let mut name = output_name.into_os_string();
                        name.push(".hl7");
                        Source {
                            kind: Kind::Store(path),
                            walked: root.is_dir(),
                            output_name: name.into(),
                        }
                    } else {
                        Source {
                            kind: Kind::File(path),
                            walked: root.is_dir(),
                            output_name,
                        }
                    }
                }
            });
        }
    }
    Ok(sources)
}

impl Source {
    /// How messages and errors name the source.
    pub fn name(&self) -> String {
        match &self.kind {
            Kind::File(path) | Kind::Store(path) => path.display().to_string(),
            Kind::Stdin => "-".to_string(),
        }
    }

    /// Bytes the source holds, to tell the smaller of two; stdin counts as the largest.
    pub fn size(&self) -> u64 {
        match &self.kind {
            Kind::File(path) | Kind::Store(path) => {
                std::fs::metadata(path).map_or(u64::MAX, |m| m.len())
            }
            Kind::Stdin => u64::MAX,
        }
    }

    /// The source's messages. Segment ends are kept as they are (`raw`) when asked.
    pub fn messages(&self, split: SplitOptions) -> Result<Messages, InputError> {
        self.items(split, false)
    }

    /// As [`Source::messages`], with each batch envelope segment (FHS, BHS, BTS, FTS) of a
    /// file given out on its own between them.
    pub fn messages_and_envelope(&self, split: SplitOptions) -> Result<Messages, InputError> {
        self.items(split, true)
    }

    fn items(&self, split: SplitOptions, envelope: bool) -> Result<Messages, InputError> {
        let splitter = |name: &str, read: Box<dyn std::io::Read>| {
            let splitter = Splitter::from_read(name, read, split);
            match envelope {
                true => splitter.keeping_envelope(),
                false => splitter,
            }
        };
        let name = self.name();
        let read_error = |error| InputError::Read {
            name: name.clone(),
            error,
        };
        Ok(match &self.kind {
            Kind::File(path) => {
                let file = File::open(path).map_err(read_error)?;
                Box::new(splitter(&name, Box::new(file)))
            }
            Kind::Stdin => Box::new(splitter("-", Box::new(std::io::stdin()))),
            Kind::Store(path) => {
                let store_error = |e: mllp::input::StoreReadError| InputError::Read {
                    name: e.file,
                    error: std::io::Error::other(e.what),
                };
                let rows =
                    StoreRows::open(path, StoreFilter::default(), split).map_err(store_error)?;
                Box::new(rows.map(|row| row.map(|r| r.message)))
            }
        })
    }
}

/// The messages of several sources, one after the other.
pub fn chain(sources: &[Source], split: SplitOptions) -> Messages {
    let sources = sources.to_vec();
    let mut at = 0;
    let mut current: Option<Messages> = None;
    let mut failed = false;
    Box::new(std::iter::from_fn(move || loop {
        if failed {
            return None;
        }
        if let Some(messages) = current.as_mut() {
            match messages.next() {
                Some(Err(e)) => {
                    failed = true;
                    return Some(Err(e));
                }
                Some(ok) => return Some(ok),
                None => current = None,
            }
        }
        let source = sources.get(at)?;
        at += 1;
        match source.messages(split) {
            Ok(messages) => current = Some(messages),
            Err(e) => {
                failed = true;
                return Some(Err(e));
            }
        }
    }))
}

/// The sources without the files that hold no HL7 at all: a README or an empty file beside the
/// messages in a directory is left out with a warning naming it; a file named itself is kept
/// (it is read, and said to be wrong) unless `empty_is_none` and it is empty, which is then
/// no messages.
pub fn without_strays(sources: Vec<Source>, empty_is_none: bool, diag: &Diag) -> Vec<Source> {
    sources
        .into_iter()
        .filter(|source| {
            let Kind::File(path) = &source.kind else {
                return true;
            };
            let first = source
                .messages(SplitOptions::default())
                .and_then(|mut m| m.next().transpose());
            let empty = matches!(first, Err(InputError::NoMessages { .. }));
            let not_hl7 = empty || matches!(first, Err(InputError::TextBeforeMsh { line: 1, .. }));
            if !source.walked {
                return !(empty && empty_is_none);
            }
            if not_hl7 {
                let file = path.display().to_string();
                let what = if empty {
                    "empty"
                } else {
                    "not HL7 (no MSH first)"
                };
                diag.event(
                    "warning",
                    || {
                        format!(
                            "{} MLLP_NOT_HL7: {file}: {what}; left out",
                            diag.paint("warning:", "33")
                        )
                    },
                    serde_json::json!({ "code": "MLLP_NOT_HL7", "file": file }),
                );
            }
            !not_hl7
        })
        .collect()
}
