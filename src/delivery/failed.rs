//! The failed-messages directory (`send --failed-out DIR`): every message that did not end
//! accepted, one file each, named after its place in the input and its `source#n`
//! (`000006-adt.hl7#6.hl7`), holding exactly the bytes that were sent, so a rerun of DIR sends
//! only those, in their first order.

use std::path::{Path, PathBuf};

/// A directory that takes the messages a run did not get accepted.
#[derive(Debug, Clone)]
pub struct FailedOut {
    dir: PathBuf,
}

/// A directory that cannot take failed messages; says which and why.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum FailedOutError {
    #[error("{}: cannot create the directory: {error}", .dir.display())]
    Create { dir: PathBuf, error: std::io::Error },
    #[error("{}: cannot write there: {error}", .dir.display())]
    Write { dir: PathBuf, error: std::io::Error },
}

impl FailedOut {
    /// Make sure `dir` exists and is writable before anything is sent.
    pub fn create(dir: &Path) -> Result<FailedOut, FailedOutError> {
        std::fs::create_dir_all(dir).map_err(|error| FailedOutError::Create {
            dir: dir.into(),
            error,
        })?;
        let probe =
            tempfile::NamedTempFile::new_in(dir).map_err(|error| FailedOutError::Write {
                dir: dir.into(),
                error,
            })?;
        drop(probe);
        Ok(FailedOut { dir: dir.into() })
    }

    /// Write one message, the `seq`th of the input. The file name is `seq`, zero-padded so that
    /// names sort in input order, and its label with path separators made safe.
    pub fn write(&self, seq: u64, label: &str, payload: &[u8]) -> std::io::Result<PathBuf> {
        let path = self.dir.join(file_name(seq, label));
        std::fs::write(&path, payload)?;
        Ok(path)
    }
}

/// `(7, in/adt.hl7#2)` -> `000007-in_adt.hl7#2.hl7`; `(1, -#1)` -> `000001-stdin#1.hl7`.
pub fn file_name(seq: u64, label: &str) -> String {
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
