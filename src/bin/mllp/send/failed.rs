//! `--failed-out DIR`: every message that did not end accepted, one file each, named after its
//! `source#n`, holding exactly the bytes that were sent, so a rerun sends only those.

use anyhow::Context;
use std::path::{Path, PathBuf};

pub struct FailedOut {
    dir: PathBuf,
}

impl FailedOut {
    /// Make sure DIR exists and is writable before anything is sent.
    pub fn create(dir: &Path) -> anyhow::Result<FailedOut> {
        std::fs::create_dir_all(dir).with_context(|| {
            format!(
                "--failed-out {}: cannot create the directory",
                dir.display()
            )
        })?;
        let probe = tempfile::NamedTempFile::new_in(dir)
            .with_context(|| format!("--failed-out {}: cannot write there", dir.display()))?;
        drop(probe);
        Ok(FailedOut { dir: dir.into() })
    }

    /// Write one message. The file name is its label with path separators made safe.
    pub fn write(&self, label: &str, payload: &[u8]) -> std::io::Result<PathBuf> {
        let path = self.dir.join(file_name(label));
        std::fs::write(&path, payload)?;
        Ok(path)
    }
}

/// `in/adt.hl7#2` -> `in_adt.hl7#2.hl7`; `-#1` -> `stdin#1.hl7`.
pub fn file_name(label: &str) -> String {
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
    format!("{safe}.hl7")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_flat_and_keep_the_label() {
        assert_eq!(file_name("adt.hl7#2"), "adt.hl7#2.hl7");
        assert_eq!(file_name("in/sub/adt.hl7#2"), "in_sub_adt.hl7#2.hl7");
        assert_eq!(file_name("/tmp/x#1"), "tmp_x#1.hl7");
        assert_eq!(file_name("../x#1"), "x#1.hl7");
        assert_eq!(file_name("-#3"), "stdin#3.hl7");
    }
}
