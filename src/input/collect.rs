//! Command-line arguments to input sources: files, globs (expanded here too, for shells that do
//! not), directories (with `recursive`), and `-` or nothing for stdin.

use super::error::InputError;
use super::natural::natural_path_cmp;
use std::collections::HashSet;
use std::path::{Path, PathBuf};

/// Where messages come from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum InputSource {
    /// A file, by the path it was found at.
    File(PathBuf),
    /// The process's standard input.
    Stdin,
}

impl InputSource {
    /// How labels and errors name the source: the path as found, or `-`.
    pub fn name(&self) -> String {
        match self {
            InputSource::File(path) => path.display().to_string(),
            InputSource::Stdin => "-".to_string(),
        }
    }
}

/// Expand arguments in order. An existing path is taken literally, even when it holds glob
/// characters; otherwise a pattern with `*`, `?` or `[` is expanded (in natural order, a leading
/// dot must be matched literally). Directories are walked in natural order (`x#9` before `x#10`)
/// with `recursive` (hidden entries, whose names start with a dot, skipped), and refused without
/// it. Arguments keep the order given. No arguments means stdin.
pub fn collect_inputs(args: &[String], recursive: bool) -> Result<Vec<InputSource>, InputError> {
    if args.is_empty() {
        return Ok(vec![InputSource::Stdin]);
    }
    let mut sources = Vec::new();
    let mut stdin_seen = false;
    for arg in args {
        if arg == "-" {
            if stdin_seen {
                return Err(InputError::StdinTwice);
            }
            stdin_seen = true;
            sources.push(InputSource::Stdin);
            continue;
        }
        let path = Path::new(arg);
        if path.exists() {
            add_path(path, recursive, &mut sources)?;
        } else if arg.contains(['*', '?', '[']) {
            let matches = expand_glob(arg)?;
            if matches.is_empty() {
                return Err(InputError::NoMatch {
                    pattern: arg.clone(),
                });
            }
            for found in matches {
                add_path(&found, recursive, &mut sources)?;
            }
        } else {
            return Err(InputError::NotFound { path: path.into() });
        }
    }
    Ok(sources)
}

fn expand_glob(pattern: &str) -> Result<Vec<PathBuf>, InputError> {
    let options = glob::MatchOptions {
        require_literal_leading_dot: true,
        ..glob::MatchOptions::new()
    };
    let paths = glob::glob_with(pattern, options).map_err(|e| InputError::BadPattern {
        pattern: pattern.to_string(),
        reason: e.msg.to_string(),
    })?;
    let mut found = Vec::new();
    for entry in paths {
        let path = entry.map_err(|e| InputError::Read {
            name: e.path().display().to_string(),
            error: e.into(),
        })?;
        found.push(path);
    }
    found.sort_by(|a, b| natural_path_cmp(a, b));
    Ok(found)
}

fn add_path(
    path: &Path,
    recursive: bool,
    sources: &mut Vec<InputSource>,
) -> Result<(), InputError> {
    if !path.is_dir() {
        sources.push(InputSource::File(path.to_path_buf()));
        return Ok(());
    }
    if !recursive {
        return Err(InputError::IsDirectory { path: path.into() });
    }
    let before = sources.len();
    let mut visited = HashSet::new();
    walk(path, &mut visited, sources)?;
    if sources.len() == before {
        return Err(InputError::EmptyDirectory { path: path.into() });
    }
    Ok(())
}

/// Depth-first, entries in natural order of their names; a directory reached twice (a symlink loop) is walked once.
fn walk(
    dir: &Path,
    visited: &mut HashSet<PathBuf>,
    sources: &mut Vec<InputSource>,
) -> Result<(), InputError> {
    let unreadable = |error| InputError::Read {
        name: dir.display().to_string(),
        error,
    };
    let canonical = dir.canonicalize().map_err(unreadable)?;
    if !visited.insert(canonical) {
        return Ok(());
    }
    let mut entries = Vec::new();
    for entry in std::fs::read_dir(dir).map_err(unreadable)? {
        let entry = entry.map_err(unreadable)?;
        if entry.file_name().to_string_lossy().starts_with('.') {
            continue;
        }
        entries.push(entry.path());
    }
    entries.sort_by(|a, b| natural_path_cmp(a, b));
    for path in entries {
        if path.is_dir() {
            walk(&path, visited, sources)?;
        } else {
            sources.push(InputSource::File(path));
        }
    }
    Ok(())
}
