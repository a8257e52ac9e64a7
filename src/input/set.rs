//! The inputs of one run, made ready to be read twice: a validation pass that finds every input
//! problem before anything is sent, then the messages for sending. Stdin is spooled to a
//! temporary file for that, bounded by `max_input`, unless `stream` (read once, unchecked).
//! The validation pass splits each file once and keeps an index of its messages, so the
//! sending pass reads them from where they are instead of splitting again.

use super::collect::InputSource;
use super::control_id::{lacks_control_id, ControlIds, Renamer};
use super::error::InputError;
use super::idle::{IdleRead, STREAM_IDLE};
use super::index::{Index, Replay};
use super::message::{Message, SplitOptions};
use super::split::Splitter;
#[cfg(feature = "sqlite")]
use super::store::{StoreFilter, StoreRows};
use crate::hl7::Filters;
use std::fs::File;
use std::io::{BufRead, BufReader, Read, Seek, SeekFrom};
use std::path::PathBuf;
use std::sync::{Mutex, PoisonError};

/// Largest stdin spooled by default: 1 GiB.
pub(crate) const DEFAULT_MAX_INPUT: u64 = 1024 * 1024 * 1024;

const READ_BUFFER: usize = 64 * 1024;

/// How a run reads its inputs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct InputOptions {
    /// How each source is split into messages.
    pub split: SplitOptions,
    /// Most bytes of stdin spooled.
    pub max_input: u64,
    /// Read stdin directly, once, without validating it first.
    pub stream: bool,
    /// The messages' MSH-10 as given, or fresh ones.
    pub control_ids: ControlIds,
}

impl Default for InputOptions {
    fn default() -> Self {
        InputOptions {
            split: SplitOptions::default(),
            max_input: DEFAULT_MAX_INPUT,
            stream: false,
            control_ids: ControlIds::AsGiven,
        }
    }
}

/// What the validation pass found.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Summary {
    /// Messages found, over all sources checked.
    pub messages: u64,
    /// Payload bytes of all messages.
    pub bytes: u64,
    /// Stdin is streamed and was not part of the pass.
    pub unvalidated_stdin: bool,
    /// Messages the run's filters leave out (not counted in `messages` or `bytes`).
    pub filtered: u64,
}

enum Ready {
    /// The matching rows of a store, read a page at a time on each pass; once checked, the
    /// last row id the check read up to.
    #[cfg(feature = "sqlite")]
    Store(PathBuf, StoreFilter, Checked<i64>),
    /// A file, and once checked, the file kept open with the index of its messages.
    File(PathBuf, Checked<(File, Index)>),
    /// Stdin spooled, and once checked, the index of its messages.
    Spooled(File, Checked<Index>),
    Stream(Option<Box<dyn Read + Send>>),
}

/// What the check learnt about a source, set by [`InputSet::validate`] (which takes `&self`).
type Checked<T> = Mutex<Option<T>>;

/// The sources of one run, in order.
pub struct InputSet {
    sources: Vec<Ready>,
    options: InputOptions,
    /// The messages to keep; a store's rows are chosen by its own [`StoreFilter`].
    filters: Filters,
}

impl InputSet {
    /// Spool the process's stdin if it is among the sources.
    pub fn prepare(sources: Vec<InputSource>, options: InputOptions) -> Result<Self, InputError> {
        InputSet::prepare_with_stdin(sources, options, std::io::stdin())
    }

    /// As [`InputSet::prepare`], with `stdin` standing in for the process's stdin.
    pub fn prepare_with_stdin(
        sources: Vec<InputSource>,
        options: InputOptions,
        stdin: impl Read + Send + 'static,
    ) -> Result<Self, InputError> {
        let mut stdin: Option<Box<dyn Read + Send>> = Some(Box::new(stdin));
        let mut ready = Vec::with_capacity(sources.len());
        for source in sources {
            ready.push(match source {
                InputSource::File(path) => Ready::File(path, Mutex::new(None)),
                InputSource::Stdin => {
                    let reader = stdin.take().ok_or(InputError::StdinTwice)?;
                    if options.stream {
                        Ready::Stream(Some(Box::new(IdleRead::spawn(reader, STREAM_IDLE))))
                    } else {
                        Ready::Spooled(spool(reader, options.max_input)?, Mutex::new(None))
                    }
                }
            });
        }
        Ok(InputSet {
            sources: ready,
            options,
            filters: Filters::default(),
        })
    }

    /// Keep only the messages `filters` admit: the others are counted
    /// ([`Summary::filtered`]), never sent and never refused. A store's rows are chosen by its
    /// [`StoreFilter`] instead.
    pub fn with_filters(mut self, filters: Filters) -> Self {
        self.filters = filters;
        self
    }

    /// The matching rows of the store `file`, as one source read a page at a time.
    #[cfg(feature = "sqlite")]
    pub fn of_store(file: PathBuf, filter: StoreFilter, options: InputOptions) -> Self {
        InputSet {
            sources: vec![Ready::Store(file, filter, Mutex::new(None))],
            options,
            filters: Filters::default(),
        }
    }

    /// Read every input once (streamed stdin excepted) and report the first problem, or what is
    /// there to send. Each file's messages are indexed as they are checked, so
    /// [`InputSet::messages`] sends them without splitting again.
    pub fn validate(&self) -> Result<Summary, InputError> {
        let mut summary = Summary::default();
        let options = self.options;
        for source in &self.sources {
            match source {
                Ready::Stream(_) => summary.unvalidated_stdin = true,
                #[cfg(feature = "sqlite")]
                Ready::Store(file, filter, checked) => {
                    // Each row split and checked as a file of its payload is, then as any
                    // message; rows a live store takes in after this are not sent.
                    let rows = StoreRows::open(file, filter.clone(), options.split)?;
                    let last = rows.last_id().unwrap_or(i64::MIN);
                    let mut rows = rows.upto(last);
                    for row in rows.by_ref() {
                        let row = row?;
                        check(&options, &row.message.payload, || row.message.label())?;
                        summary.messages += 1;
                        summary.bytes += row.message.payload.len() as u64;
                    }
                    summary.filtered += rows.filtered();
                    *lock(checked) = Some(last);
                }
                Ready::File(path, checked) => {
                    let name = path.display().to_string();
                    let file = File::open(path).map_err(|error| InputError::Read {
                        name: name.clone(),
                        error,
                    })?;
                    let index = check_source(&options, &self.filters, &name, &file, &mut summary)?;
                    *lock(checked) = Some((file, index));
                }
                Ready::Spooled(file, checked) => {
                    let index = check_source(&options, &self.filters, "-", file, &mut summary)?;
                    *lock(checked) = Some(index);
                }
            }
        }
        Ok(summary)
    }

    /// All messages of all sources, in order, with fresh control IDs when the options ask. A
    /// streamed stdin can be read only once: a second call yields nothing from it.
    pub fn messages(&mut self) -> Messages<'_> {
        let renamer = match self.options.control_ids {
            ControlIds::Fresh { run } => Some(Renamer::new(run)),
            ControlIds::AsGiven => None,
        };
        Messages {
            sources: self.sources.iter_mut(),
            replay: None,
            #[cfg(feature = "sqlite")]
            rows: None,
            current: None,
            options: self.options.split,
            failed: false,
            renamer,
            unchecked: false,
            filters: &self.filters,
        }
    }
}

fn lock<T>(checked: &Checked<T>) -> std::sync::MutexGuard<'_, Option<T>> {
    checked.lock().unwrap_or_else(PoisonError::into_inner)
}

/// What the check refuses in one message beyond its splitting: an MSH-10 no ACK could name,
/// unless fresh ones are given.
#[cfg(feature = "sqlite")]
fn check(
    options: &InputOptions,
    payload: &[u8],
    label: impl FnOnce() -> String,
) -> Result<(), InputError> {
    if options.control_ids == ControlIds::AsGiven && lacks_control_id(payload) {
        return Err(InputError::EmptyControlId { label: label() });
    }
    Ok(())
}

/// Split and check all of `file` (read from its start), counting into `summary`; the index of
/// its messages (those `filters` leave out included, so each keeps its place in the source).
fn check_source(
    options: &InputOptions,
    filters: &Filters,
    name: &str,
    file: &File,
    summary: &mut Summary,
) -> Result<Index, InputError> {
    let io_error = |error| InputError::Read {
        name: name.to_string(),
        error,
    };
    let mut index = Index::new(file).map_err(io_error)?;
    let mut reader = file;
    reader.seek(SeekFrom::Start(0)).map_err(io_error)?;
    let mut splitter = Splitter::new(
        name,
        BufReader::with_capacity(READ_BUFFER, reader),
        options.split,
    );
    while let Some(next) = splitter.next_record() {
        let record = next?;
        if !filters.admits(record.payload) {
            summary.filtered += 1;
        } else {
            if options.control_ids == ControlIds::AsGiven && record.lacks_control_id() {
                return Err(InputError::EmptyControlId {
                    label: format!("{name}#{}", record.index),
                });
            }
            summary.messages += 1;
            summary.bytes += record.payload.len() as u64;
        }
        index.push(&record).map_err(io_error)?;
    }
    index.finish().map_err(io_error)?;
    Ok(index)
}

fn open_file(path: &PathBuf) -> Result<Box<dyn BufRead + Send + '_>, InputError> {
    let file = File::open(path).map_err(|error| InputError::Read {
        name: path.display().to_string(),
        error,
    })?;
    Ok(Box::new(BufReader::with_capacity(READ_BUFFER, file)))
}

fn rewind(file: &File) -> Result<Box<dyn BufRead + Send + '_>, InputError> {
    let mut handle = file;
    handle.seek(SeekFrom::Start(0)).map_err(stdin_error)?;
    Ok(Box::new(BufReader::with_capacity(READ_BUFFER, handle)))
}

fn stdin_error(error: std::io::Error) -> InputError {
    InputError::Read {
        name: "-".to_string(),
        error,
    }
}

/// Copy `reader` to an anonymous temporary file, refusing more than `max` bytes.
fn spool(reader: impl Read, max: u64) -> Result<File, InputError> {
    let mut file = tempfile::tempfile().map_err(stdin_error)?;
    let copied =
        std::io::copy(&mut reader.take(max.saturating_add(1)), &mut file).map_err(stdin_error)?;
    if copied > max {
        return Err(InputError::StdinTooLarge { max });
    }
    Ok(file)
}

/// Iterator over the messages of an [`InputSet`]; ends after the first error.
pub struct Messages<'a> {
    sources: std::slice::IterMut<'a, Ready>,
    /// The current source, checked: its messages from the check's index.
    replay: Option<Replay<'a>>,
    #[cfg(feature = "sqlite")]
    rows: Option<StoreRows>,
    current: Option<Splitter<Box<dyn BufRead + Send + 'a>>>,
    options: SplitOptions,
    failed: bool,
    renamer: Option<Renamer>,
    /// The current source is a stream the check never saw: its messages are checked here.
    unchecked: bool,
    /// The messages to keep (a store's rows come chosen already).
    filters: &'a Filters,
}

impl<'a> Messages<'a> {
    fn open_next(&mut self) -> Option<Result<(), InputError>> {
        let source = self.sources.next()?;
        self.unchecked = matches!(source, Ready::Stream(_));
        let opened = match source {
            #[cfg(feature = "sqlite")]
            Ready::Store(file, filter, checked) => {
                let last = *checked.get_mut().unwrap_or_else(PoisonError::into_inner);
                return Some(
                    StoreRows::open(file, filter.clone(), self.options)
                        .map(|rows| self.rows = Some(rows.upto(last.unwrap_or(i64::MAX))))
                        .map_err(InputError::from),
                );
            }
            Ready::File(path, checked) => match checked.get_mut() {
                Ok(Some((file, index))) => {
                    let replay = index.replay(&path.display().to_string(), file);
                    return Some(replay.map(|replay| self.replay = Some(replay)));
                }
                _ => open_file(path).map(|r| (path.display().to_string(), r)),
            },
            Ready::Spooled(file, checked) => match checked.get_mut() {
                Ok(Some(index)) => {
                    let replay = index.replay("-", file);
                    return Some(replay.map(|replay| self.replay = Some(replay)));
                }
                _ => rewind(file).map(|r| ("-".to_string(), r)),
            },
            Ready::Stream(stdin) => match stdin.take() {
                Some(reader) => {
                    let reader: Box<dyn BufRead + Send + 'a> =
                        Box::new(BufReader::with_capacity(READ_BUFFER, reader));
                    Ok(("-".to_string(), reader))
                }
                None => return Some(Ok(())),
            },
        };
        Some(opened.map(|(name, reader)| {
            self.current = Some(Splitter::new(&name, reader, self.options));
        }))
    }
}

impl Messages<'_> {
    fn ready(&mut self, message: Message) -> Message {
        match self.renamer.as_mut() {
            Some(renamer) => renamer.rename(message),
            None => message,
        }
    }
}

impl Iterator for Messages<'_> {
    type Item = Result<Message, InputError>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.failed {
            return None;
        }
        loop {
            if let Some(replay) = self.replay.as_mut() {
                match replay.next() {
                    Some(Ok(message)) if !self.filters.admits(&message.payload) => continue,
                    Some(Ok(message)) => return Some(Ok(self.ready(message))),
                    Some(Err(e)) => {
                        self.failed = true;
                        return Some(Err(e));
                    }
                    None => self.replay = None,
                }
            }
            #[cfg(feature = "sqlite")]
            if let Some(rows) = self.rows.as_mut() {
                match rows.next() {
                    Some(Ok(row)) => return Some(Ok(self.ready(row.message))),
                    Some(Err(e)) => {
                        self.failed = true;
                        return Some(Err(e));
                    }
                    None => self.rows = None,
                }
            }
            if let Some(splitter) = self.current.as_mut() {
                match splitter.next() {
                    Some(Ok(message)) if !self.filters.admits(&message.payload) => continue,
                    Some(Ok(message)) if self.unchecked && self.renamer.is_none() => {
                        if lacks_control_id(&message.payload) {
                            self.failed = true;
                            return Some(Err(InputError::EmptyControlId {
                                label: message.label(),
                            }));
                        }
                        return Some(Ok(message));
                    }
                    Some(Ok(message)) => return Some(Ok(self.ready(message))),
                    Some(Err(e)) => {
                        self.failed = true;
                        return Some(Err(e));
                    }
                    None => self.current = None,
                }
            }
            match self.open_next()? {
                Ok(()) => {}
                Err(e) => {
                    self.failed = true;
                    return Some(Err(e));
                }
            }
        }
    }
}
