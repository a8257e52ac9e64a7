//! Where de-identified messages go: stdout, or a directory with one file per input, each
//! written under a temporary name and renamed when whole, so a file there is never half of
//! one.

use crate::stdout::Blocks;
use std::fs::File;
use std::io::{self, BufWriter, Write};
use std::path::{Path, PathBuf};

/// The run's output.
pub enum Output {
    Stdout(BufWriter<Blocks>),
    Dir(PathBuf),
}

/// Why a directory cannot take the output.
pub fn check_dir(dir: &Path) -> Result<(), String> {
    match std::fs::read_dir(dir) {
        Ok(mut entries) => match entries.next() {
            None => Ok(()),
            Some(_) => Err(format!(
                "--out {}: the directory is not empty; give each run a new one, so runs never mix",
                dir.display()
            )),
        },
        Err(e) if e.kind() == io::ErrorKind::NotFound => std::fs::create_dir_all(dir)
            .map_err(|e| format!("--out {}: cannot create it: {e}", dir.display())),
        Err(e) if e.kind() == io::ErrorKind::NotADirectory => Err(format!(
            "--out {}: not a directory; name a directory, or `-` for stdout",
            dir.display()
        )),
        Err(e) => Err(format!("--out {}: {e}", dir.display())),
    }
}

/// One input's output file, whole once [`OutFile::finish`]ed; removed if dropped before.
pub struct OutFile {
    partial: PathBuf,
    path: PathBuf,
    file: Option<BufWriter<File>>,
}

impl OutFile {
    pub fn create(dir: &Path, name: &Path) -> io::Result<OutFile> {
        let path = dir.join(name);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent)?;
        }
        let mut partial_name = std::ffi::OsString::from(".");
        partial_name.push(path.file_name().unwrap_or_default());
        partial_name.push(".partial");
        let partial = path.with_file_name(partial_name);
        let file = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&partial)?;
        Ok(OutFile {
            partial,
            path,
            file: Some(BufWriter::with_capacity(256 * 1024, file)),
        })
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    pub fn write(&mut self, bytes: &[u8]) -> io::Result<()> {
        match &mut self.file {
            Some(file) => file.write_all(bytes),
            None => Err(io::Error::other("written after it was finished")),
        }
    }

    /// Flushed, synced and under its own name.
    pub fn finish(mut self) -> io::Result<()> {
        if let Some(file) = self.file.take() {
            let file = file.into_inner().map_err(|e| e.into_error())?;
            file.sync_all()?;
            std::fs::rename(&self.partial, &self.path)?;
        }
        Ok(())
    }
}

impl Drop for OutFile {
    fn drop(&mut self) {
        if self.file.take().is_some() {
            let _ = std::fs::remove_file(&self.partial);
        }
    }
}
