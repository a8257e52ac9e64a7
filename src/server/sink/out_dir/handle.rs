//! One open directory and every file step done relative to it (create, rename, remove), so a
//! directory renamed or replaced under the path never splits a commit between two directories,
//! and whether the path still names it is one comparison of device and inode.

use std::ffi::CString;
use std::fs::File;
use std::io::{Error, ErrorKind, Result};
use std::os::fd::{AsRawFd, FromRawFd};
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
use std::path::Path;

/// An open directory and the identity it had when opened.
#[derive(Debug)]
pub(super) struct DirHandle {
    dir: File,
    id: (u64, u64),
}

impl DirHandle {
    /// Open the directory `path` names now (never a symbolic link's target as the last step).
    pub(super) fn open(path: &Path) -> Result<DirHandle> {
        let dir = std::fs::OpenOptions::new()
            .read(true)
            .custom_flags(libc::O_DIRECTORY | libc::O_CLOEXEC)
            .open(path)?;
        let meta = dir.metadata()?;
        Ok(DirHandle {
            dir,
            id: (meta.dev(), meta.ino()),
        })
    }

    /// Whether `path` still names this directory (not renamed away, replaced or removed).
    pub(super) fn is_at(&self, path: &Path) -> bool {
        std::fs::metadata(path).is_ok_and(|m| (m.dev(), m.ino()) == self.id)
    }

    /// Create `name` here for writing; fails if it exists, never follows a link.
    pub(super) fn create_new(&self, name: &str) -> Result<File> {
        let name = c_name(name)?;
        let flags =
            libc::O_WRONLY | libc::O_CREAT | libc::O_EXCL | libc::O_CLOEXEC | libc::O_NOFOLLOW;
        // SAFETY: a valid descriptor and a NUL-terminated name; the result is checked.
        let fd = unsafe { libc::openat(self.dir.as_raw_fd(), name.as_ptr(), flags, 0o600) };
        if fd < 0 {
            return Err(Error::last_os_error());
        }
        // SAFETY: `fd` was just opened and is owned by nothing else.
        Ok(unsafe { File::from_raw_fd(fd) })
    }

    /// Rename `from` to `to` in this directory, failing if `to` exists.
    pub(super) fn rename_noclobber(&self, from: &str, to: &str) -> Result<()> {
        let (from, to) = (c_name(from)?, c_name(to)?);
        let fd = self.dir.as_raw_fd();
        #[cfg(all(target_os = "linux", target_env = "gnu"))]
        {
            // SAFETY: valid descriptors and NUL-terminated names; the result is checked.
            let done = unsafe {
                libc::renameat2(fd, from.as_ptr(), fd, to.as_ptr(), libc::RENAME_NOREPLACE)
            };
            if done == 0 {
                return Ok(());
            }
            let e = Error::last_os_error();
            // A file system without the flag falls back to link-and-unlink below.
            if !matches!(e.raw_os_error(), Some(libc::EINVAL) | Some(libc::ENOSYS)) {
                return Err(e);
            }
        }
        // SAFETY: as above.
        if unsafe { libc::linkat(fd, from.as_ptr(), fd, to.as_ptr(), 0) } != 0 {
            return Err(Error::last_os_error());
        }
        // The new name holds the file now; the old one is only a leftover name.
        let _ = self.remove(from.to_str().unwrap_or_default());
        Ok(())
    }

    /// Remove `name` from this directory (wherever the directory is now).
    pub(super) fn remove(&self, name: &str) -> Result<()> {
        let name = c_name(name)?;
        // SAFETY: a valid descriptor and a NUL-terminated name; the result is checked.
        if unsafe { libc::unlinkat(self.dir.as_raw_fd(), name.as_ptr(), 0) } != 0 {
            return Err(Error::last_os_error());
        }
        Ok(())
    }

    /// Make this directory's entries durable.
    pub(super) fn sync(&self) -> Result<()> {
        self.dir.sync_all()
    }
}

fn c_name(name: &str) -> Result<CString> {
    if name.contains('/') {
        return Err(Error::new(ErrorKind::InvalidInput, "a name with a slash"));
    }
    CString::new(Path::new(name).as_os_str().as_bytes())
        .map_err(|_| Error::new(ErrorKind::InvalidInput, "a name with a NUL byte"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn steps_follow_the_directory_not_the_path() {
        let root = tempfile::tempdir().unwrap();
        let inbox = root.path().join("inbox");
        std::fs::create_dir(&inbox).unwrap();
        let handle = DirHandle::open(&inbox).unwrap();
        assert!(handle.is_at(&inbox));
        std::fs::rename(&inbox, root.path().join("inbox.1")).unwrap();
        assert!(!handle.is_at(&inbox));
        std::fs::create_dir(&inbox).unwrap();
        assert!(
            !handle.is_at(&inbox),
            "a new directory at the path is another one"
        );
        use std::io::Write;
        handle.create_new("a.tmp").unwrap().write_all(b"x").unwrap();
        handle.rename_noclobber("a.tmp", "a.hl7").unwrap();
        assert!(root.path().join("inbox.1/a.hl7").exists());
        assert!(std::fs::read_dir(&inbox).unwrap().next().is_none());
        handle.create_new("b.tmp").unwrap();
        let clash = handle.rename_noclobber("b.tmp", "a.hl7").unwrap_err();
        assert_eq!(clash.kind(), ErrorKind::AlreadyExists);
        handle.remove("b.tmp").unwrap();
        handle.remove("a.hl7").unwrap();
        assert!(std::fs::read_dir(root.path().join("inbox.1"))
            .unwrap()
            .next()
            .is_none());
    }
}
