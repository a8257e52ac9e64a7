//! One open directory and every file step done relative to it (create, rename, remove), so a
//! directory renamed or replaced under the path never splits a commit between two directories,
//! and whether the path still names it is one comparison of device and inode.

use rustix::fs::{AtFlags, Mode, OFlags, RenameFlags};
use rustix::io::Errno;
use std::fs::File;
use std::io::{Error, ErrorKind, Result};
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
        let flags = OFlags::DIRECTORY | OFlags::CLOEXEC;
        let dir = std::fs::OpenOptions::new()
            .read(true)
            .custom_flags(flags.bits() as i32)
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
        let flags =
            OFlags::WRONLY | OFlags::CREATE | OFlags::EXCL | OFlags::CLOEXEC | OFlags::NOFOLLOW;
        let fd = rustix::fs::openat(&self.dir, plain(name)?, flags, Mode::from_raw_mode(0o600))?;
        Ok(File::from(fd))
    }

    /// Rename `from` to `to` in this directory, failing if `to` exists.
    pub(super) fn rename_noclobber(&self, from: &str, to: &str) -> Result<()> {
        let (from, to) = (plain(from)?, plain(to)?);
        let dir = &self.dir;
        match rustix::fs::renameat_with(dir, from, dir, to, RenameFlags::NOREPLACE) {
            Ok(()) => return Ok(()),
            // A file system without the flag falls back to link-and-unlink below.
            Err(Errno::INVAL | Errno::NOSYS) => {}
            Err(e) => return Err(e.into()),
        }
        rustix::fs::linkat(dir, from, dir, to, AtFlags::empty())?;
        // The new name holds the file now; the old one is only a leftover name.
        let _ = self.remove(from);
        Ok(())
    }

    /// Remove `name` from this directory (wherever the directory is now).
    pub(super) fn remove(&self, name: &str) -> Result<()> {
        rustix::fs::unlinkat(&self.dir, plain(name)?, AtFlags::empty())?;
        Ok(())
    }

    /// Make this directory's entries durable.
    pub(super) fn sync(&self) -> Result<()> {
        self.dir.sync_all()
    }
}

/// `name` when it names an entry of this directory: no slash, no NUL.
fn plain(name: &str) -> Result<&str> {
    if name.contains('/') {
        return Err(Error::new(ErrorKind::InvalidInput, "a name with a slash"));
    }
    if name.contains('\0') {
        return Err(Error::new(
            ErrorKind::InvalidInput,
            "a name with a NUL byte",
        ));
    }
    Ok(name)
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
