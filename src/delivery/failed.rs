//! The failed-messages directory: every message that did not end
//! accepted, one file each, named after its place in the input and its `source#n`
//! (`000006-adt.hl7#6.hl7`), holding exactly the bytes that were sent, so a rerun of it sends
//! only those, in their first order. The directory is new or empty and holds none of the
//! inputs, so the files of two runs never mix.

use crate::input::InputSource;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Probe files written to learn what one file costs.
const PROBES: usize = 8;

/// A directory that takes the messages a run did not get accepted.
#[derive(Debug, Clone)]
pub struct FailedOut {
    dir: PathBuf,
    /// What writing one file costs here, in nanoseconds, averaged over the writes so far (the
    /// first from a probe file): a deadline leaves this much room per file still to write.
    cost_ns: Arc<AtomicU64>,
}

/// A directory that cannot take failed messages; says which and why.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum FailedOutError {
    /// The directory is absent and cannot be created.
    #[error("{}: cannot create the directory: {error}", .dir.display())]
    Create {
        /// The directory as given.
        dir: PathBuf,
        /// Why creating it failed.
        error: std::io::Error,
    },
    /// A probe file cannot be written to the directory.
    #[error("{}: cannot write there: {error}", .dir.display())]
    Write {
        /// The directory as given.
        dir: PathBuf,
        /// Why writing failed.
        error: std::io::Error,
    },
    /// Files of an earlier run would mix with this run's, and a rerun would send both.
    #[error(
        "{}: not empty ({entries} {}): each run needs a new or empty directory, so runs never mix",
        .dir.display(),
        if *.entries == 1 { "entry" } else { "entries" }
    )]
    NotEmpty {
        /// The directory as given.
        dir: PathBuf,
        /// How many entries it holds.
        entries: usize,
    },
    /// The run would write its failures among the messages it is sending.
    #[error("{}: holds {} of the inputs: the failures would mix with the messages being sent", .dir.display(), .input.display())]
    HoldsInput {
        /// The directory as given.
        dir: PathBuf,
        /// The first input found inside it, as given.
        input: PathBuf,
    },
}

impl FailedOut {
    /// Make sure `dir` holds none of `inputs`, is absent or empty, exists and is writable,
    /// before anything is sent.
    pub fn create(dir: &Path, inputs: &[InputSource]) -> Result<FailedOut, FailedOutError> {
        if let Ok(canonical) = dir.canonicalize() {
            let held = inputs.iter().find_map(|source| match source {
                InputSource::File(path) => path
                    .canonicalize()
                    .is_ok_and(|p| p.starts_with(&canonical))
                    .then(|| path.clone()),
                InputSource::Stdin => None,
            });
            if let Some(input) = held {
                return Err(FailedOutError::HoldsInput {
                    dir: dir.into(),
                    input,
                });
            }
        }
        if let Ok(entries) = std::fs::read_dir(dir) {
            let entries = entries.count();
            if entries > 0 {
                return Err(FailedOutError::NotEmpty {
                    dir: dir.into(),
                    entries,
                });
            }
        }
        std::fs::create_dir_all(dir).map_err(|error| FailedOutError::Create {
            dir: dir.into(),
            error,
        })?;
        let write_error = |error| FailedOutError::Write {
            dir: dir.into(),
            error,
        };
        // The slowest of a few probe files: a busy disk's writes vary widely, and a deadline
        // planned on the fast ones would be overrun.
        // Files kept until all are written, as the run's are: a file created and removed at
        // once costs a disk far less than one that stays.
        let probes = tempfile::Builder::new()
            .prefix(".probe")
            .tempdir_in(dir)
            .map_err(write_error)?;
        let mut cost = 0;
        for n in 0..PROBES {
            let started = Instant::now();
            std::fs::write(probes.path().join(n.to_string()), [b'x'; 512]).map_err(write_error)?;
            cost = cost.max(started.elapsed().as_nanos().min(u128::from(u64::MAX / 8)) as u64);
        }
        drop(probes);
        Ok(FailedOut {
            dir: dir.into(),
            cost_ns: Arc::new(AtomicU64::new(cost)),
        })
    }

    /// What writing one more file is likely to cost, from the writes so far, twice over: a
    /// busy disk's writes vary widely, and a deadline planned on the average is overrun.
    pub(crate) fn cost_per_file(&self) -> Duration {
        Duration::from_nanos(self.cost_ns.load(Ordering::Relaxed)).saturating_mul(2)
    }

    /// Write one message, the `seq`th of the input. The file name is `seq`, zero-padded so that
    /// names sort in input order, and its label with path separators made safe.
    pub fn write(&self, seq: u64, label: &str, payload: &[u8]) -> std::io::Result<PathBuf> {
        let path = self.dir.join(file_name(seq, label));
        let started = Instant::now();
        std::fs::write(&path, payload)?;
        // A moving average, an eighth per write: follows the disk without jumping on one
        // slow write.
        let cost = started.elapsed().as_nanos().min(u128::from(u64::MAX / 8)) as u64;
        let old = self.cost_ns.load(Ordering::Relaxed);
        self.cost_ns
            .store(old - old / 8 + cost / 8, Ordering::Relaxed);
        Ok(path)
    }
}

/// `(7, in/adt.hl7#2)` -> `000007-in_adt.hl7#2.hl7`; `(1, -#1)` -> `000001-stdin#1.hl7`.
pub(crate) fn file_name(seq: u64, label: &str) -> String {
    let label = label
        .strip_prefix("-#")
        .map_or_else(|| label.to_string(), |rest| format!("stdin#{rest}"));
    let safe: String = label
        .trim_start_matches(['/', '.'])
        .chars()
        .map(|c| {
            if matches!(c, '/' | '\\' | ':') {
                '_'
            } else {
                c
            }
        })
        .collect();
    format!("{seq:06}-{safe}.hl7")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_directory_with_files_or_inputs_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let fresh = dir.path().join("retry1");
        assert!(FailedOut::create(&fresh, &[]).is_ok());
        // Made by the first run and now empty: still fine.
        assert!(FailedOut::create(&fresh, &[]).is_ok());
        std::fs::write(fresh.join("000001-x#1.hl7"), b"x").unwrap();
        let input = InputSource::File(fresh.join("000001-x#1.hl7"));
        assert!(matches!(
            FailedOut::create(&fresh, std::slice::from_ref(&input)),
            Err(FailedOutError::HoldsInput { .. })
        ));
        let err = FailedOut::create(&fresh, &[]).unwrap_err();
        assert!(matches!(err, FailedOutError::NotEmpty { entries: 1, .. }));
        assert!(err.to_string().contains("not empty (1 entry)"), "{err}");
    }

    #[test]
    fn names_are_flat_and_keep_the_label() {
        assert_eq!(file_name(2, "adt.hl7#2"), "000002-adt.hl7#2.hl7");
        assert_eq!(
            file_name(9, "in/sub/adt.hl7#2"),
            "000009-in_sub_adt.hl7#2.hl7"
        );
        assert_eq!(file_name(1, "/tmp/x#1"), "000001-tmp_x#1.hl7");
        assert_eq!(file_name(1, "../x#1"), "000001-x#1.hl7");
        assert_eq!(file_name(3, "-#3"), "000003-stdin#3.hl7");
        let mut names: Vec<String> = [10, 6, 9, 40]
            .iter()
            .map(|&n| file_name(n, &format!("x.hl7#{n}")))
            .collect();
        names.sort();
        assert_eq!(names[0], "000006-x.hl7#6.hl7");
        assert_eq!(names[3], "000040-x.hl7#40.hl7");
    }
}
