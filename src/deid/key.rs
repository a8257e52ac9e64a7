//! The de-identification key: 32 random bytes kept in a file of their own as 64 hexadecimal
//! digits. The same key gives the same replacements in every run; another key, other ones.

use rand::RngCore;
use std::fmt;
use std::io::Write;
use std::path::{Path, PathBuf};

/// Bytes in a key.
pub(crate) const KEY_BYTES: usize = 32;

/// A de-identification key. `Debug` never shows it.
#[derive(Clone, PartialEq, Eq)]
pub struct Key([u8; KEY_BYTES]);

/// A key file that cannot be read, written or used.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum KeyError {
    /// The file could not be read or written.
    #[error("{}: {error}", path.display())]
    Io {
        /// The key file.
        path: PathBuf,
        /// What the system said.
        error: std::io::Error,
    },
    /// A new key would replace one that is there: the replacements it gave would be lost.
    #[error("{}: a file is already there; a key is never overwritten", path.display())]
    Exists {
        /// The key file.
        path: PathBuf,
    },
    /// The file does not hold a key.
    #[error("{}: not a key file: {what}", path.display())]
    Malformed {
        /// The key file.
        path: PathBuf,
        /// What is wrong with it (never its content).
        what: &'static str,
    },
}

impl Key {
    /// A new key from the operating system's random source.
    pub fn generate() -> Key {
        let mut bytes = [0u8; KEY_BYTES];
        rand::rngs::OsRng.fill_bytes(&mut bytes);
        Key(bytes)
    }

    /// A key from its bytes (tests, embedders that keep keys elsewhere).
    pub fn from_bytes(bytes: [u8; KEY_BYTES]) -> Key {
        Key(bytes)
    }

    pub(super) fn bytes(&self) -> &[u8; KEY_BYTES] {
        &self.0
    }

    /// The key as its file holds it: 64 hexadecimal digits and a newline.
    pub(crate) fn to_text(&self) -> String {
        let mut text: String = self.0.iter().map(|b| format!("{b:02x}")).collect();
        text.push('\n');
        text
    }

    /// A key from its file's text: 64 hexadecimal digits, whitespace around them ignored.
    pub(crate) fn from_text(path: &Path, text: &[u8]) -> Result<Key, KeyError> {
        let malformed = |what| KeyError::Malformed {
            path: path.to_path_buf(),
            what,
        };
        let digits = text.trim_ascii();
        if digits.len() != 2 * KEY_BYTES {
            return Err(malformed("a key is 64 hexadecimal digits on one line"));
        }
        let mut bytes = [0u8; KEY_BYTES];
        for (byte, pair) in bytes.iter_mut().zip(digits.chunks_exact(2)) {
            let digit = |b: u8| (b as char).to_digit(16);
            match (digit(pair[0]), digit(pair[1])) {
                (Some(high), Some(low)) => *byte = (high << 4 | low) as u8,
                _ => return Err(malformed("a key holds hexadecimal digits only")),
            }
        }
        Ok(Key(bytes))
    }

    /// Read the key in `path`.
    pub fn load(path: &Path) -> Result<Key, KeyError> {
        let text = std::fs::read(path).map_err(|error| KeyError::Io {
            path: path.to_path_buf(),
            error,
        })?;
        Key::from_text(path, &text)
    }

    /// Write a new key to `path`, readable by its owner alone; never over an existing file.
    pub fn create(path: &Path) -> Result<Key, KeyError> {
        let key = Key::generate();
        let io = |error| KeyError::Io {
            path: path.to_path_buf(),
            error,
        };
        let mut options = std::fs::OpenOptions::new();
        options.write(true).create_new(true);
        #[cfg(unix)]
        std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
        let mut file = options.open(path).map_err(|error| match error.kind() {
            std::io::ErrorKind::AlreadyExists => KeyError::Exists {
                path: path.to_path_buf(),
            },
            _ => io(error),
        })?;
        file.write_all(key.to_text().as_bytes()).map_err(io)?;
        file.sync_all().map_err(io)?;
        Ok(key)
    }
}

/// Whether others than the owner may read `path` (group or world permission bits).
pub fn readable_by_others(path: &Path) -> std::io::Result<bool> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        Ok(std::fs::metadata(path)?.permissions().mode() & 0o077 != 0)
    }
    #[cfg(not(unix))]
    {
        let _ = path;
        Ok(false)
    }
}

impl fmt::Debug for Key {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Key(..)")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_key_reads_back_and_never_shows() {
        let key = Key::generate();
        let path = Path::new("k");
        assert_eq!(Key::from_text(path, key.to_text().as_bytes()).unwrap(), key);
        assert_eq!(format!("{key:?}"), "Key(..)");
        assert_ne!(Key::generate(), key);
        for bad in [&b""[..], b"00", &[b'g'; 64]] {
            let e = Key::from_text(path, bad).unwrap_err();
            assert!(matches!(e, KeyError::Malformed { .. }), "{e}");
        }
    }

    #[test]
    fn a_new_key_is_private_and_never_overwrites() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("deid.key");
        let key = Key::create(&path).unwrap();
        assert_eq!(Key::load(&path).unwrap(), key);
        assert!(!readable_by_others(&path).unwrap());
        assert!(matches!(Key::create(&path), Err(KeyError::Exists { .. })));
        assert_eq!(Key::load(&path).unwrap(), key);
    }
}
