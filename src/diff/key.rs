//! What pairs a message of one side with one of the other: the values of one or more paths
//! (MSH-10 unless told), escape sequences decoded.

use crate::hl7::{Message, Path};
use std::fmt;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

/// The paths whose values make a message's key.
#[derive(Debug, Clone)]
pub struct KeyPaths {
    paths: Vec<Path>,
    /// For each path, the messages that had no value there: a path no message has pairs
    /// nothing, and is worth saying.
    missing: Arc<[AtomicU64]>,
}

/// A message's key: each path's value, decoded. `Debug` shows its length alone.
#[derive(Clone, PartialEq, Eq, Hash)]
pub struct Key(pub(super) Box<[u8]>);

/// Between the values of a key's paths, and between the values of one path under `*`.
const PATH_END: u8 = 0;
const VALUE_END: u8 = 0x1f;

impl KeyPaths {
    /// A key of these paths, in order; MSH-10 when none is given.
    pub fn new(paths: Vec<Path>) -> KeyPaths {
        let paths = match paths.is_empty() {
            true => vec![Path::of("MSH", 10, None, None).unwrap_or_else(|| unreachable!())],
            false => paths,
        };
        let missing = paths.iter().map(|_| AtomicU64::new(0)).collect();
        KeyPaths { paths, missing }
    }

    /// Each path with how many messages had no value for it so far.
    pub fn missing(&self) -> impl Iterator<Item = (&Path, u64)> {
        let counts = self.missing.iter().map(|n| n.load(Ordering::Relaxed));
        self.paths.iter().zip(counts)
    }

    /// The paths.
    pub fn paths(&self) -> &[Path] {
        &self.paths
    }

    /// The key of `message` into `out` (cleared first).
    pub(super) fn key_of(&self, message: &Message<'_>, out: &mut Vec<u8>) {
        out.clear();
        for (i, path) in self.paths.iter().enumerate() {
            if i > 0 {
                out.push(PATH_END);
            }
            let before = out.len();
            for (j, value) in message.values(path).enumerate() {
                if j > 0 {
                    out.push(VALUE_END);
                }
                out.extend_from_slice(&value.decoded());
            }
            if out[before..].iter().all(|&b| b == VALUE_END) {
                self.missing[i].fetch_add(1, Ordering::Relaxed);
            }
        }
    }
}

impl Key {
    /// Each path's value as text (`~` between the values of a path under `*`).
    pub fn values(&self) -> Vec<String> {
        self.0
            .split(|&b| b == PATH_END)
            .map(|v| {
                let parts: Vec<_> = v.split(|&b| b == VALUE_END).collect();
                let joined = parts.join(&b'~');
                String::from_utf8_lossy(&joined).into_owned()
            })
            .collect()
    }
}

impl fmt::Debug for Key {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Key").field("bytes", &self.0.len()).finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_of_each_path_in_order() {
        let m = Message::new(b"MSH|^~\\&|A||||t||ADT^A01|C7|P|2.5\rPID|1||11~22||D\\S\\E\r");
        let paths = |s: &[&str]| KeyPaths::new(s.iter().map(|p| p.parse().unwrap()).collect());
        let mut out = Vec::new();
        paths(&[]).key_of(&m, &mut out);
        assert_eq!(Key(out.clone().into()).values(), ["C7"]);
        paths(&["PID-3(*)", "MSH-9", "PID-5"]).key_of(&m, &mut out);
        assert_eq!(Key(out.into()).values(), ["11~22", "ADT^A01", "D^E"]);
    }
}
