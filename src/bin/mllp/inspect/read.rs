//! The messages of `show`'s and `check`'s inputs, one at a time: each file and stdin split as
//! `send` splits them, a store read a page of rows at a time. Memory stays bounded by the
//! largest message, whatever the input's size. A source that breaks off is reported and the
//! next one read; a store's row that is no message is reported and the next row read.

use super::InspectArgs;
use mllp::hl7::Filters;
use mllp::input::{
    collect_inputs, InputError, InputSource, Message, SplitOptions, Splitter, StoreFilter,
    StoreReadError, StoreRows,
};
use mllp::server::PostgresRows;
use std::fs::File;
use std::io::Read;

/// One message read, or a source that broke off (the messages before the break came first).
pub enum Item {
    /// A message the filters admit.
    Message(Message),
    /// The source could not be read on from here: what, and where.
    Broken(String),
    /// A store's row that is no message: what, and which row. The rows after it are read.
    BadRow(String),
}

/// Where the next messages come from.
enum Current {
    Split(Splitter<std::io::BufReader<Box<dyn Read + Send>>>),
    Store(StoreRows),
    Postgres(PostgresRows),
}

/// A store to read instead of files.
enum Store {
    Sqlite(StoreRows),
    Postgres(PostgresRows),
}

/// The messages of every input, in order, the filters applied.
pub struct Inputs {
    sources: std::vec::IntoIter<InputSource>,
    store: Option<Store>,
    current: Option<Current>,
    split: SplitOptions,
    filters: Filters,
    /// Messages the filters left out.
    pub filtered: u64,
    /// Messages read (kept or left out).
    pub read: u64,
    /// Sources that broke off, and store rows that were no message.
    pub broken: u64,
}

/// The inputs cannot be used at all: nothing was read.
#[derive(Debug, thiserror::Error)]
pub enum OpenError {
    /// A file, glob or directory refused.
    #[error(transparent)]
    Input(#[from] InputError),
    /// The store cannot be opened.
    #[error(transparent)]
    Store(#[from] StoreReadError),
}

/// The inputs of `command` (`show`, `check`), or the usage error that ends the run: nothing
/// named while stdin is a terminal, or an input refused before anything is read.
pub fn open_or_refuse(
    args: &InspectArgs,
    split: SplitOptions,
    command: &str,
) -> Result<Inputs, crate::exit::Exit> {
    use crate::diag::Fatal;
    use crate::exit::Exit;
    use std::io::IsTerminal;
    let named = !args.files.is_empty() || args.from_db.is_some() || args.postgres.is_some();
    if !named && std::io::stdin().is_terminal() {
        let no_input = format!(
            "no input: name the files or directories to {command} (mllp {command} adt/*.hl7), \
             or pipe messages in (cat adt.hl7 | mllp {command}); `-` reads the terminal itself, \
             ended by Ctrl-D"
        );
        return Err(Fatal::new(Exit::Usage, no_input).report());
    }
    Inputs::open(args, split).map_err(|err| Fatal::new(Exit::Usage, err).report())
}

impl Item {
    /// The message; else, after `flush` writes out what came before, say that an input broke
    /// off (what, and that what it held before was `done`: `shown`), or that a store's row was
    /// no message (the rows after it are read).
    pub fn or_say<E>(
        self,
        diag: &crate::diag::Diag,
        done: &str,
        flush: impl FnOnce() -> Result<(), E>,
    ) -> Option<Message> {
        let (what, row) = match self {
            Item::Message(message) => return Some(message),
            Item::Broken(what) => (what, false),
            Item::BadRow(what) => (what, true),
        };
        // A failed write ends the run at the next message written, not here.
        let _ = flush();
        diag.event(
            "input_broken",
            || match row {
                true => format!("mllp: error: {what}; left out, and the rows after it {done}"),
                false => format!("mllp: error: {what}; what came before it was {done}"),
            },
            serde_json::json!({ "error": what }),
        );
        None
    }
}

impl Inputs {
    /// The inputs `args` names, split by `split` (a batch kept whole with `split.batch`).
    pub fn open(args: &InspectArgs, split: SplitOptions) -> Result<Inputs, OpenError> {
        let filter = StoreFilter {
            select: args.filters(),
            ..StoreFilter::default()
        };
        let (sources, store) = match (&args.from_db, &args.postgres) {
            (Some(file), _) => (
                Vec::new(),
                Some(Store::Sqlite(StoreRows::open(file, filter, split)?)),
            ),
            (None, Some(url)) => (
                Vec::new(),
                Some(Store::Postgres(PostgresRows::open(url, filter)?)),
            ),
            (None, None) => (collect_inputs(&args.files, args.recursive)?, None),
        };
        let from_store = store.is_some();
        Ok(Inputs {
            sources: sources.into_iter(),
            store,
            current: None,
            split,
            // A store's rows are chosen by the store's own filter.
            filters: if from_store {
                Filters::default()
            } else {
                args.filters()
            },
            filtered: 0,
            read: 0,
            broken: 0,
        })
    }

    fn open_next(&mut self) -> Option<Result<(), String>> {
        if let Some(store) = self.store.take() {
            self.current = Some(match store {
                Store::Sqlite(rows) => Current::Store(rows),
                Store::Postgres(rows) => Current::Postgres(rows),
            });
            return Some(Ok(()));
        }
        let source = self.sources.next()?;
        let (name, reader): (String, Box<dyn Read + Send>) = match source {
            InputSource::Stdin => ("-".into(), Box::new(std::io::stdin())),
            InputSource::File(path) => {
                let name = path.display().to_string();
                match File::open(&path) {
                    Ok(file) => (name, Box::new(file)),
                    Err(e) => return Some(Err(format!("{name}: {e}"))),
                }
            }
        };
        self.current = Some(Current::Split(Splitter::from_read(
            &name, reader, self.split,
        )));
        Some(Ok(()))
    }
}

impl Iterator for Inputs {
    type Item = Item;

    fn next(&mut self) -> Option<Item> {
        loop {
            let next = match self.current.as_mut() {
                None => match self.open_next()? {
                    Ok(()) => continue,
                    Err(e) => {
                        self.broken += 1;
                        return Some(Item::Broken(e));
                    }
                },
                Some(Current::Split(splitter)) => {
                    splitter.next().map(|m| m.map_err(|e| broken(&e)))
                }
                Some(Current::Store(rows)) => rows
                    .next()
                    .map(|r| r.map(|s| s.message).map_err(|e| e.to_string())),
                Some(Current::Postgres(rows)) => rows
                    .next()
                    .map(|r| r.map(|s| s.message).map_err(|e| e.to_string())),
            };
            match next {
                None => {
                    let store_filtered = match &self.current {
                        Some(Current::Store(rows)) => rows.filtered(),
                        Some(Current::Postgres(rows)) => rows.filtered(),
                        _ => 0,
                    };
                    self.filtered += store_filtered;
                    self.read += store_filtered;
                    self.current = None;
                }
                Some(Err(e)) => {
                    self.broken += 1;
                    // A store's row that is no message is that row alone: the store reads on
                    // (a store that cannot be read ends by itself). A file cannot be read on.
                    if matches!(self.current, Some(Current::Split(_))) {
                        self.current = None;
                        return Some(Item::Broken(e));
                    }
                    return Some(Item::BadRow(e));
                }
                Some(Ok(message)) => {
                    if let Some(each) = self
                        .split
                        .batch
                        .then(|| batch_admitted(&self.filters, &message.payload))
                        .flatten()
                    {
                        // A batch read whole is kept while the filters admit one of its
                        // messages; the others are counted as left out.
                        let left = each.iter().filter(|admitted| !**admitted).count() as u64;
                        self.read += each.len() as u64;
                        self.filtered += left;
                        if left > 0 && left == each.len() as u64 {
                            continue;
                        }
                        return Some(Item::Message(message));
                    }
                    self.read += 1;
                    if !self.filters.admits(&message.payload) {
                        self.filtered += 1;
                        continue;
                    }
                    return Some(Item::Message(message));
                }
            }
        }
    }
}

/// What a splitter's error says, with the flag that helps where one does.
fn broken(err: &InputError) -> String {
    match err {
        InputError::MessageTooLarge { .. } => format!("{err} (--max-frame-size)"),
        _ => err.to_string(),
    }
}

/// For a batch (a payload with an envelope segment), whether `filters` admit each of its
/// messages, in the order [`mllp::hl7::split_batch`] gives them; `None` for a message alone.
pub fn batch_admitted(filters: &Filters, payload: &[u8]) -> Option<Vec<bool>> {
    mllp::hl7::segments(payload)
        .any(|(_, s)| mllp::hl7::is_envelope_segment(s))
        .then(|| {
            mllp::hl7::split_batch(payload)
                .into_iter()
                .map(|m| filters.admits(m))
                .collect()
        })
}
