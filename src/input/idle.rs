//! A stream read as it comes, that says when it pauses: a live feed (`tail -f`) leaves its last
//! message waiting for the next `MSH`, which may not come for hours. The splitter takes a pause
//! at a line end as the end of the message it holds.

use std::io::{self, Read};
use std::sync::mpsc;
use std::time::Duration;

/// How long a streamed input must be quiet before the message it ends with is sent.
pub(crate) const STREAM_IDLE: Duration = Duration::from_millis(300);

/// Chunks read ahead of the splitter, at most.
const AHEAD: usize = 4;
const CHUNK: usize = 64 * 1024;

/// Reads its source on a thread of its own; a read that waits longer than the idle time after
/// data came fails once with [`io::ErrorKind::TimedOut`], then waits on.
pub(crate) struct IdleRead {
    chunks: mpsc::Receiver<io::Result<Vec<u8>>>,
    pending: Vec<u8>,
    at: usize,
    idle: Duration,
    /// The pause since the last data was reported already.
    told: bool,
    done: bool,
}

impl IdleRead {
    pub(crate) fn spawn(mut source: Box<dyn Read + Send>, idle: Duration) -> IdleRead {
        let (tx, chunks) = mpsc::sync_channel(AHEAD);
        std::thread::spawn(move || loop {
            let mut buf = vec![0; CHUNK];
            match source.read(&mut buf) {
                Ok(0) => break,
                Ok(n) => {
                    buf.truncate(n);
                    if tx.send(Ok(buf)).is_err() {
                        break;
                    }
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => {
                    let _ = tx.send(Err(e));
                    break;
                }
            }
        });
        IdleRead {
            chunks,
            pending: Vec::new(),
            at: 0,
            idle,
            // Before the first data there is nothing to end.
            told: true,
            done: false,
        }
    }
}

/// Whether a read failed only because the input paused.
pub(crate) fn is_idle(error: &io::Error) -> bool {
    error.kind() == io::ErrorKind::TimedOut
}

impl Read for IdleRead {
    fn read(&mut self, out: &mut [u8]) -> io::Result<usize> {
        if self.at == self.pending.len() {
            if self.done {
                return Ok(0);
            }
            let next = if self.told {
                self.chunks.recv().ok()
            } else {
                match self.chunks.recv_timeout(self.idle) {
                    Ok(next) => Some(next),
                    Err(mpsc::RecvTimeoutError::Timeout) => {
                        self.told = true;
                        return Err(io::Error::new(io::ErrorKind::TimedOut, "input idle"));
                    }
                    Err(mpsc::RecvTimeoutError::Disconnected) => None,
                }
            };
            match next {
                Some(Ok(chunk)) => {
                    self.pending = chunk;
                    self.at = 0;
                    self.told = false;
                }
                Some(Err(e)) => {
                    self.done = true;
                    return Err(e);
                }
                None => {
                    self.done = true;
                    return Ok(0);
                }
            }
        }
        let n = out.len().min(self.pending.len() - self.at);
        out[..n].copy_from_slice(&self.pending[self.at..self.at + n]);
        self.at += n;
        Ok(n)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::input::{SplitOptions, Splitter};

    /// A source that blocks until the test gives it more.
    struct Feed(mpsc::Receiver<Vec<u8>>);

    impl Read for Feed {
        fn read(&mut self, out: &mut [u8]) -> io::Result<usize> {
            match self.0.recv() {
                Ok(bytes) => {
                    out[..bytes.len()].copy_from_slice(&bytes);
                    Ok(bytes.len())
                }
                Err(_) => Ok(0),
            }
        }
    }

    #[test]
    fn a_pause_after_a_line_end_completes_the_message_held() {
        let (tx, rx) = mpsc::channel();
        // It ends with a CR: whether an LF follows is not known when the pause comes.
        tx.send(b"MSH|^~\\&|A|B|C|D|2024||ADT^A01|X1|P\rPID|1\r".to_vec())
            .unwrap();
        let read = IdleRead::spawn(Box::new(Feed(rx)), Duration::from_millis(20));
        let mut split = Splitter::from_read("-", read, SplitOptions::default());
        // The source is still open: only the pause can end the message.
        let first = split.next().unwrap().unwrap();
        assert_eq!(
            &first.payload[..],
            b"MSH|^~\\&|A|B|C|D|2024||ADT^A01|X1|P\rPID|1\r"
        );
        tx.send(b"\nMSH|^~\\&|A|B|C|D|2024||ADT^A01|X2|P\r".to_vec())
            .unwrap();
        drop(tx);
        let second = split.next().unwrap().unwrap();
        assert_eq!(second.index, 2);
        assert!(second.payload.starts_with(b"MSH"));
        assert!(split.next().is_none());
    }

    #[test]
    fn a_pause_completes_the_message_held_whatever_its_line_ends() {
        for end in ["\r", "\n", "\r\n"] {
            let (tx, rx) = mpsc::channel();
            let message = "MSH|^~\\&|A|B|C|D|2024||ADT^A01|X1|P\rPID|1\r".replace('\r', end);
            tx.send(message.into_bytes()).unwrap();
            let read = IdleRead::spawn(Box::new(Feed(rx)), Duration::from_millis(20));
            // The source stays open: the message comes only if the pause ends it.
            let (first_tx, first) = mpsc::channel();
            std::thread::spawn(move || {
                let mut split = Splitter::from_read("-", read, SplitOptions::default());
                let _ = first_tx.send(split.next().map(|m| m.map(|m| m.payload)));
                split.count()
            });
            let first = first.recv_timeout(Duration::from_secs(5));
            let payload = first.unwrap_or_else(|_| panic!("{end:?}: held")).unwrap();
            let want = b"MSH|^~\\&|A|B|C|D|2024||ADT^A01|X1|P\rPID|1\r";
            assert_eq!(&payload.unwrap()[..], want, "{end:?}");
            drop(tx);
        }
    }
}
