//! Every write to stdout, and the one rule for a stdout that stops taking them: the reader went
//! away (`| head`), so the command ends quietly with the exit code its run earned; never a panic.

use std::fmt::Display;
use std::io::{self, Write};
use std::sync::atomic::{AtomicBool, Ordering};

static CLOSED: AtomicBool = AtomicBool::new(false);

/// Stdout takes no more writes. As an error it ends a command that had nothing to show yet.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Closed;

impl Display for Closed {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("stdout is closed")
    }
}

impl std::error::Error for Closed {}

/// Whether a write to stdout has failed: long runs stop producing output nobody reads.
pub fn is_closed() -> bool {
    CLOSED.load(Ordering::Relaxed)
}

/// Record a failed write. A broken pipe is the reader leaving and says nothing; any other
/// failure (a full disk behind a redirect) is said once on stderr, since output is lost.
fn mark(err: &io::Error) {
    if !CLOSED.swap(true, Ordering::Relaxed) && err.kind() != io::ErrorKind::BrokenPipe {
        let message = format!("writing to stdout: {err}; no more output is written");
        crate::diag::say(
            || format!("mllp: error: {message}"),
            &crate::output::diag::Diagnostic::StdoutError { message: &message },
        );
    }
}

/// Whether `err` is (or was caused by) a closed stdout.
pub fn caused(err: &anyhow::Error) -> bool {
    err.chain().any(|e| e.is::<Closed>())
}

/// `text` and a newline, flushed.
pub fn line(text: impl Display) -> Result<(), Closed> {
    write_all(format!("{text}\n").as_bytes())
}

/// `bytes`, flushed.
pub fn write_all(bytes: &[u8]) -> Result<(), Closed> {
    let mut out = Out;
    out.write_all(bytes)
        .and_then(|()| out.flush())
        .map_err(|_| Closed)
}

/// Stdout as a writer (under a `BufWriter` for streamed records). After the first failure every
/// write fails at once, so nothing is half-written after a gap.
#[derive(Debug, Clone, Copy, Default)]
pub struct Out;

impl Write for Out {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        if is_closed() {
            return Err(io::ErrorKind::BrokenPipe.into());
        }
        io::stdout().lock().write(buf).inspect_err(mark)
    }

    fn flush(&mut self) -> io::Result<()> {
        if is_closed() {
            return Err(io::ErrorKind::BrokenPipe.into());
        }
        io::stdout().lock().flush().inspect_err(mark)
    }
}

/// Stdout through a handle of its own, for a command that writes whole blocks of records:
/// std's stdout is line-buffered and searches each write for a newline first (all of it, when
/// HL7 segments end in CR alone). Where fd 1 cannot be duplicated, std's stdout. A stdout that
/// stops taking writes is marked as through [`Out`].
#[derive(Debug)]
pub struct Blocks(Option<std::fs::File>);

impl Blocks {
    pub fn open() -> Blocks {
        use std::os::fd::AsFd;
        Blocks(
            io::stdout()
                .as_fd()
                .try_clone_to_owned()
                .ok()
                .map(std::fs::File::from),
        )
    }
}

impl Write for Blocks {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        match &mut self.0 {
            _ if is_closed() => Err(io::ErrorKind::BrokenPipe.into()),
            Some(file) => file.write(buf).inspect_err(mark),
            None => Out.write(buf),
        }
    }

    fn flush(&mut self) -> io::Result<()> {
        match &mut self.0 {
            _ if is_closed() => Err(io::ErrorKind::BrokenPipe.into()),
            Some(file) => file.flush().inspect_err(mark),
            None => Out.flush(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn closed_is_found_in_an_error_chain() {
        assert!(caused(&anyhow::Error::new(Closed).context("printing")));
        assert!(!caused(&anyhow::anyhow!("stdout is closed")));
    }
}
