//! What a receiver kept, read back from its `--out-dir` or `--sqlite` store: every stored
//! message's bytes, and what a crash may have left behind (temporary files).

use super::peer_wire::control_id;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// Where `listen` keeps messages.
#[derive(Debug, Clone)]
pub enum Store {
    OutDir(PathBuf),
    Sqlite(PathBuf),
}

impl Store {
    /// A fresh store of the kind named under `root`: "out-dir" or "sqlite".
    pub fn new(kind: &str, root: &Path) -> Store {
        match kind {
            "out-dir" => {
                let dir = root.join("inbox");
                std::fs::create_dir_all(&dir).unwrap();
                Store::OutDir(dir)
            }
            "sqlite" => Store::Sqlite(root.join("rx.db")),
            other => panic!("no store {other}"),
        }
    }

    pub fn kind(&self) -> &'static str {
        match self {
            Store::OutDir(_) => "out-dir",
            Store::Sqlite(_) => "sqlite",
        }
    }

    /// The `listen` arguments that select this store.
    pub fn args(&self) -> Vec<String> {
        let (flag, path) = match self {
            Store::OutDir(p) => ("--out-dir", p),
            Store::Sqlite(p) => ("--sqlite", p),
        };
        vec![flag.to_string(), path.to_str().unwrap().to_string()]
    }

    /// Every stored message's bytes, in arrival order.
    pub fn messages(&self) -> Vec<Vec<u8>> {
        match self {
            Store::OutDir(dir) => {
                let mut names: Vec<String> = std::fs::read_dir(dir)
                    .unwrap()
                    .map(|e| e.unwrap().file_name().into_string().unwrap())
                    .filter(|n| n.ends_with(".hl7"))
                    .collect();
                names.sort();
                names
                    .iter()
                    .map(|n| std::fs::read(dir.join(n)).unwrap())
                    .collect()
            }
            Store::Sqlite(file) => {
                if !file.exists() {
                    return Vec::new();
                }
                let db = rusqlite::Connection::open(file).unwrap();
                let check: String = db
                    .query_row("PRAGMA integrity_check", [], |r| r.get(0))
                    .unwrap();
                assert_eq!(check, "ok", "the database is damaged");
                let mut rows = db
                    .prepare("SELECT payload FROM messages ORDER BY id")
                    .unwrap();
                let payloads = rows
                    .query_map([], |r| r.get::<_, Vec<u8>>(0))
                    .unwrap()
                    .collect::<Result<Vec<_>, _>>()
                    .unwrap();
                payloads
            }
        }
    }

    /// Temporary files in the store's directory (a crash's leftovers, or a write under way).
    pub fn temporaries(&self) -> Vec<String> {
        let Store::OutDir(dir) = self else {
            return Vec::new();
        };
        std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().into_string().unwrap())
            .filter(|n| n.ends_with(".tmp"))
            .collect()
    }
}

/// Stored messages by control ID: how many copies of each, and whether all copies are alike.
pub struct Kept {
    pub copies: BTreeMap<String, Vec<Vec<u8>>>,
    /// Stored messages with no control ID at all (none should exist).
    pub unnamed: usize,
}

impl Kept {
    pub fn of(messages: Vec<Vec<u8>>) -> Kept {
        let mut copies: BTreeMap<String, Vec<Vec<u8>>> = BTreeMap::new();
        let mut unnamed = 0;
        for m in messages {
            match control_id(&m) {
                Some(id) if !id.is_empty() => copies.entry(id).or_default().push(m),
                _ => unnamed += 1,
            }
        }
        Kept { copies, unnamed }
    }

    pub fn stored(&self) -> usize {
        self.copies.values().map(Vec::len).sum::<usize>() + self.unnamed
    }

    /// Copies beyond the first of each message.
    pub fn duplicates(&self) -> usize {
        self.copies.values().map(|c| c.len() - 1).sum()
    }

    /// Whether `id` is stored with exactly these bytes (every copy of it).
    pub fn holds(&self, id: &str, bytes: &[u8]) -> bool {
        self.copies
            .get(id)
            .is_some_and(|c| c.iter().all(|m| m == bytes))
    }
}

/// A small tmpfs mounted for one test: a real file system that runs out of space. Mounting
/// needs root (CI has it); elsewhere the test is skipped with one line.
pub struct Tmpfs {
    dir: tempfile::TempDir,
}

impl Tmpfs {
    /// Mount `bytes` of tmpfs for `test`; `None` after one line when this user may not.
    pub fn mount(test: &str, bytes: u64) -> Option<Tmpfs> {
        let dir = tempfile::tempdir().unwrap();
        let mounted = std::process::Command::new("mount")
            .args(["-t", "tmpfs", "-o", &format!("size={bytes}")])
            .arg(format!("mllp-{test}"))
            .arg(dir.path())
            .stderr(std::process::Stdio::null())
            .status()
            .is_ok_and(|s| s.success());
        if !mounted {
            eprintln!("skipped: cannot mount a tmpfs here (needs root) for a disk that fills");
            return None;
        }
        Some(Tmpfs { dir })
    }

    pub fn path(&self) -> &Path {
        self.dir.path()
    }

    /// Take the space left with a filler file, so the next write that needs a block fails.
    pub fn fill(&self) {
        use std::io::Write;
        let mut filler = std::fs::File::create(self.path().join("filler")).unwrap();
        let block = vec![0u8; 64 << 10];
        while filler.write_all(&block).is_ok() {}
        let small = [0u8; 512];
        while filler.write_all(&small).is_ok() {}
        let _ = filler.sync_all();
    }

    /// Give the filler's space back.
    pub fn free(&self) {
        let _ = std::fs::remove_file(self.path().join("filler"));
    }
}

impl Drop for Tmpfs {
    fn drop(&mut self) {
        // Lazily: a process still holding a file there must not keep the mount.
        let _ = std::process::Command::new("umount")
            .arg("-l")
            .arg(self.dir.path())
            .status();
    }
}
