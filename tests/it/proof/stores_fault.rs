//! One cell of the store fault matrix: the store's process started on its store, messages sent
//! one at a time, the fault brought on a third of the way in (and, where it can be, taken away
//! two thirds in: the disk freed, write permission or the privilege given back, the process or
//! server killed again), then everything the store holds read back from the path and from
//! wherever the fault put the old file.

use super::stores::{judge, Answer, Sender, Tally};
use crate::listen::postgres_truth::{as_user, documented_setup, role};
use crate::relay::proc::RelayProc;
use crate::support::listen_proc::ListenProc;
use crate::support::pg;
use crate::support::store::Tmpfs;
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// A store of the matrix.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    OutDir,
    Sqlite,
    Postgres,
    Queue,
    Record,
}

/// A fault of the matrix.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fault {
    /// The store's process killed (SIGKILL) mid-commit, twice.
    Crash,
    /// The listener's PostgreSQL backend killed (SIGKILL): the server restarts every session.
    BackendKilled,
    /// `pg_ctl stop -m immediate`, then a start: crash recovery.
    ServerCrashed,
    Moved,
    Replaced,
    Deleted,
    DiskFull,
    /// INSERT revoked from the listener's role.
    Revoked,
    /// A trigger that drops some rows without a word.
    TriggerDrop,
    /// A trigger that refuses some rows with an error.
    TriggerRefuse,
    /// An AFTER INSERT trigger that deletes some rows: the INSERT itself reports them stored.
    TriggerDeletes,
}

impl Kind {
    fn name(self) -> &'static str {
        match self {
            Kind::OutDir => "out-dir",
            Kind::Sqlite => "sqlite",
            Kind::Postgres => "postgres",
            Kind::Queue => "queue",
            Kind::Record => "record",
        }
    }

    /// Whether the fault can befall this store.
    pub fn suffers(self, fault: Fault) -> bool {
        use Fault::*;
        match fault {
            BackendKilled | ServerCrashed | Revoked => self == Kind::Postgres,
            Moved | Replaced | Deleted | DiskFull => self != Kind::Postgres,
            TriggerDrop | TriggerRefuse | TriggerDeletes => self != Kind::OutDir,
            Crash => true,
        }
    }
}

impl Fault {
    fn name(self) -> &'static str {
        match self {
            Fault::Crash => "process killed (SIGKILL)",
            Fault::BackendKilled => "backend killed (SIGKILL)",
            Fault::ServerCrashed => "pg_ctl stop -m immediate",
            Fault::Moved => "moved",
            Fault::Replaced => "replaced",
            Fault::Deleted => "deleted",
            Fault::DiskFull => "disk full (tmpfs)",
            Fault::Revoked => "INSERT privilege revoked",
            Fault::TriggerDrop => "trigger drops rows",
            Fault::TriggerRefuse => "trigger refuses rows",
            Fault::TriggerDeletes => "AFTER trigger deletes rows",
        }
    }

    /// Whether it needs a file system of its own.
    fn needs_tmpfs(self) -> bool {
        matches!(self, Fault::DiskFull)
    }

    /// Whether it kills something mid-commit.
    fn kills(self) -> bool {
        matches!(
            self,
            Fault::Crash | Fault::BackendKilled | Fault::ServerCrashed
        )
    }
}

/// The store's process.
enum Proc {
    Listen(ListenProc),
    Relay(RelayProc),
}

impl Proc {
    fn addr(&self) -> std::net::SocketAddr {
        match self {
            Proc::Listen(p) => p.addr,
            Proc::Relay(p) => p.addr,
        }
    }

    fn kill(&mut self) {
        match self {
            Proc::Listen(p) => p.kill(),
            Proc::Relay(p) => p.kill(),
        }
    }
}

/// The PostgreSQL side of a cell.
struct Pg {
    url: String,
    role: String,
    ctl: Option<String>,
    _one_at_a_time: Option<tokio::sync::MutexGuard<'static, ()>>,
}

pub struct Cell {
    kind: Kind,
    fault: Fault,
    messages: usize,
    tag: String,
    root: tempfile::TempDir,
    tmpfs: Option<Tmpfs>,
    pg: Option<Pg>,
    upstream: Option<ListenProc>,
}

/// Control IDs of table `table` in the SQLite file `file`, if it is one.
fn sqlite_ids(file: &Path, table: &str) -> BTreeSet<String> {
    let Ok(db) =
        rusqlite::Connection::open_with_flags(file, rusqlite::OpenFlags::SQLITE_OPEN_READ_WRITE)
    else {
        return BTreeSet::new();
    };
    let Ok(mut q) = db.prepare(&format!("SELECT control_id FROM {table}")) else {
        return BTreeSet::new();
    };
    let ids = q.query_map([], |r| r.get::<_, Option<String>>(0));
    ids.map(|rows| rows.filter_map(|r| r.ok().flatten()).collect())
        .unwrap_or_default()
}

/// Control IDs of the `.hl7` files in `dir`.
fn file_ids(dir: &Path) -> BTreeSet<String> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return BTreeSet::new();
    };
    entries
        .filter_map(|e| e.ok())
        .filter(|e| e.file_name().to_string_lossy().ends_with(".hl7"))
        .filter_map(|e| std::fs::read(e.path()).ok())
        .map(|m| {
            String::from_utf8_lossy(&m)
                .split('|')
                .nth(9)
                .unwrap_or("")
                .to_string()
        })
        .collect()
}

impl Cell {
    pub fn new(kind: Kind, fault: Fault, messages: usize, tag: &str) -> Cell {
        Cell {
            kind,
            fault,
            messages,
            tag: tag.to_string(),
            root: tempfile::tempdir().unwrap(),
            tmpfs: None,
            pg: None,
            upstream: None,
        }
    }

    /// Where the store's files live: the cell's tmpfs, when it has one.
    fn dir(&self) -> PathBuf {
        match &self.tmpfs {
            Some(t) => t.path().to_path_buf(),
            None => self.root.path().to_path_buf(),
        }
    }

    /// The path the store is given.
    fn path(&self) -> PathBuf {
        self.dir().join(match self.kind {
            Kind::OutDir => "inbox",
            Kind::Sqlite => "rx.db",
            _ => "q.db",
        })
    }

    /// Where the fault moves the old file or directory.
    fn moved(&self) -> PathBuf {
        self.dir().join("moved")
    }

    /// Get the store ready; why not, when the cell cannot run here.
    async fn prepare(&mut self) -> Result<(), String> {
        if self.fault.needs_tmpfs() {
            self.tmpfs = Some(Tmpfs::mount(&self.tag, 8 << 20).ok_or("no tmpfs (needs root)")?);
        }
        if self.kind == Kind::OutDir {
            std::fs::create_dir(self.path()).unwrap();
        }
        if self.kind == Kind::Record {
            self.upstream = Some(ListenProc::start(&[]));
        }
        if self.kind == Kind::Postgres {
            let crashes = matches!(self.fault, Fault::BackendKilled | Fault::ServerCrashed);
            let (server, ctl) = if crashes {
                let (Some(server), Some(ctl)) = (
                    pg::required("MLLP_TEST_PG_OUTAGE"),
                    pg::required("MLLP_TEST_PG_OUTAGE_CTL"),
                ) else {
                    return Err("no PostgreSQL outage cluster configured".into());
                };
                (server, Some(ctl))
            } else {
                (
                    pg::required("MLLP_TEST_PG").ok_or("no PostgreSQL configured")?,
                    None,
                )
            };
            let lock = match crashes {
                true => Some(crate::listen::postgres_link::OUTAGE.lock().await),
                false => None,
            };
            let url = pg::fresh_database(&server, &self.tag.to_lowercase()).await;
            let admin = pg::connect(&url).await;
            let role = role(&admin, &url, "mllp_matrix").await;
            admin.batch_execute(&documented_setup(&role)).await.unwrap();
            self.pg = Some(Pg {
                url,
                role,
                ctl,
                _one_at_a_time: lock,
            });
        }
        Ok(())
    }

    fn start(&self, port: u16) -> Proc {
        let path = self.path().to_str().unwrap().to_string();
        let listen = |args: &[&str]| match port {
            0 => ListenProc::start(args),
            port => ListenProc::start_at(port, args),
        };
        let relay = |to: &str, args: &[&str]| match port {
            0 => RelayProc::start(to, args),
            port => RelayProc::start_at(port, to, args),
        };
        match self.kind {
            Kind::OutDir => Proc::Listen(listen(&["--out-dir", &path])),
            Kind::Sqlite => Proc::Listen(listen(&["--sqlite", &path])),
            Kind::Postgres => {
                let pg = self.pg.as_ref().unwrap();
                Proc::Listen(listen(&["--postgres", &as_user(&pg.url, &pg.role)]))
            }
            // Nothing listens upstream: every message stays in the queue.
            Kind::Queue => Proc::Relay(relay("127.0.0.1:9", &["--queue", &path])),
            Kind::Record => {
                let to = self.upstream.as_ref().unwrap().addr.to_string();
                Proc::Relay(relay(&to, &["--record", &path]))
            }
        }
    }

    /// The SQL (SQLite or PostgreSQL) of the fault's trigger on the store's table.
    fn trigger(&self) -> String {
        let (drop, refuse) = ("RAISE(IGNORE)", "RAISE(ABORT, 'refused')");
        let table = if self.kind == Kind::Sqlite {
            "messages"
        } else {
            "queue"
        };
        let (when, action) = match self.fault {
            Fault::TriggerDrop => ("BEFORE", format!("SELECT {drop}")),
            Fault::TriggerDeletes => ("AFTER", format!("DELETE FROM {table} WHERE id = NEW.id")),
            _ => ("BEFORE", format!("SELECT {refuse}")),
        };
        format!(
            "CREATE TRIGGER matrix {when} INSERT ON {table}
               WHEN NEW.control_id LIKE '%3' OR NEW.control_id LIKE '%7'
               BEGIN {action}; END"
        )
    }

    async fn pg_sql(&self, sql: &str) {
        let pg = self.pg.as_ref().unwrap();
        pg::connect(&pg.url).await.batch_execute(sql).await.unwrap();
    }

    /// Bring the fault on (`on`) or take it away.
    async fn fault(&mut self, on: bool, proc: &mut Proc) {
        let path = self.path();
        let sqlite_files =
            |p: &Path| ["", "-wal", "-shm"].map(|s| PathBuf::from(format!("{}{s}", p.display())));
        match (self.fault, on) {
            (Fault::Crash, _) => {
                let port = proc.addr().port();
                proc.kill();
                *proc = self.start(port);
            }
            (Fault::BackendKilled, _) => {
                let pg = self.pg.as_ref().unwrap();
                let admin = pg::connect(&pg.url).await;
                let pids = admin
                    .query(
                        "SELECT pid FROM pg_stat_activity
                         WHERE datname = current_database() AND pid <> pg_backend_pid()",
                        &[],
                    )
                    .await
                    .unwrap();
                for row in pids {
                    let pid: i32 = row.get(0);
                    let _ = std::process::Command::new("kill")
                        .args(["-KILL", &pid.to_string()])
                        .status();
                }
            }
            (Fault::ServerCrashed, _) => {
                let ctl = self.pg.as_ref().unwrap().ctl.clone().unwrap();
                tokio::task::spawn_blocking(move || {
                    pg::ctl(&ctl, "crash");
                    pg::ctl(&ctl, "start");
                })
                .await
                .unwrap();
            }
            (Fault::Moved, true) => {
                std::fs::rename(&path, self.moved()).unwrap();
                if self.kind == Kind::OutDir {
                    std::fs::create_dir(&path).unwrap();
                }
            }
            (Fault::Replaced, true) => {
                std::fs::rename(&path, self.moved()).unwrap();
                let fresh = self.dir().join("fresh");
                match self.kind {
                    Kind::OutDir => std::fs::create_dir(&fresh).unwrap(),
                    _ => rusqlite::Connection::open(&fresh)
                        .unwrap()
                        .execute_batch("CREATE TABLE notes (x)")
                        .unwrap(),
                }
                std::fs::rename(&fresh, &path).unwrap();
            }
            (Fault::Deleted, true) => match self.kind {
                Kind::OutDir => std::fs::remove_dir_all(&path).unwrap(),
                _ => {
                    for f in sqlite_files(&path) {
                        let _ = std::fs::remove_file(f);
                    }
                }
            },
            (Fault::DiskFull, true) => self.tmpfs.as_ref().unwrap().fill(),
            (Fault::DiskFull, false) => self.tmpfs.as_ref().unwrap().free(),
            (Fault::Revoked, true) => {
                let role = self.pg.as_ref().unwrap().role.clone();
                self.pg_sql(&format!("REVOKE INSERT ON messages FROM {role}"))
                    .await;
            }
            (Fault::Revoked, false) => {
                let role = self.pg.as_ref().unwrap().role.clone();
                self.pg_sql(&format!("GRANT INSERT ON messages TO {role}"))
                    .await;
            }
            (Fault::TriggerDrop | Fault::TriggerRefuse, true) if self.kind == Kind::Postgres => {
                let body = if self.fault == Fault::TriggerDrop {
                    "RETURN NULL"
                } else {
                    "RAISE EXCEPTION 'refused'"
                };
                self.pg_sql(&format!(
                    "CREATE FUNCTION matrix() RETURNS trigger LANGUAGE plpgsql AS
                       $$ BEGIN IF NEW.control_id LIKE '%3' OR NEW.control_id LIKE '%7'
                          THEN {body}; END IF; RETURN NEW; END $$;
                     CREATE TRIGGER matrix BEFORE INSERT ON messages
                       FOR EACH ROW EXECUTE FUNCTION matrix();"
                ))
                .await;
            }
            (Fault::TriggerDeletes, true) if self.kind == Kind::Postgres => {
                // Its owner's rights: the listener's role may not delete.
                self.pg_sql(
                    "CREATE FUNCTION matrix() RETURNS trigger LANGUAGE plpgsql SECURITY DEFINER AS
                       $$ BEGIN IF NEW.control_id LIKE '%3' OR NEW.control_id LIKE '%7'
                          THEN DELETE FROM messages WHERE id = NEW.id; END IF; RETURN NULL; END $$;
                     CREATE TRIGGER matrix AFTER INSERT ON messages
                       FOR EACH ROW EXECUTE FUNCTION matrix();",
                )
                .await;
            }
            (Fault::TriggerDrop | Fault::TriggerRefuse | Fault::TriggerDeletes, true) => {
                let db = rusqlite::Connection::open(&path).unwrap();
                db.busy_timeout(Duration::from_secs(5)).unwrap();
                db.execute_batch(&self.trigger()).unwrap();
            }
            _ => {}
        }
    }

    /// Send message `id`; with a fault that kills, the kill lands `delay` after the message
    /// was written, while it is being committed.
    async fn send_killing(
        &mut self,
        sender: Sender,
        id: String,
        delay: Duration,
        proc: &mut Proc,
    ) -> (Sender, Answer) {
        let mut sender = sender;
        let sending = tokio::spawn(async move {
            let answer = sender.send(&id).await;
            (sender, answer)
        });
        tokio::time::sleep(delay).await;
        self.fault(true, proc).await;
        sending.await.unwrap()
    }

    /// What the store holds: at the path now, and anywhere (the moved copy too).
    async fn stored(&self) -> (BTreeSet<String>, BTreeSet<String>) {
        let path = self.path();
        let (at_path, moved) = match self.kind {
            Kind::OutDir => (file_ids(&path), file_ids(&self.moved())),
            Kind::Sqlite => (
                sqlite_ids(&path, "messages"),
                sqlite_ids(&self.moved(), "messages"),
            ),
            Kind::Queue | Kind::Record => (
                sqlite_ids(&path, "queue"),
                sqlite_ids(&self.moved(), "queue"),
            ),
            Kind::Postgres => {
                let url = &self.pg.as_ref().unwrap().url;
                let ids = pg::rows(url).await.into_iter().map(|(id, _)| id).collect();
                (ids, BTreeSet::new())
            }
        };
        let anywhere = at_path.union(&moved).cloned().collect();
        (at_path, anywhere)
    }

    pub async fn run(mut self) -> Tally {
        let mut tally = Tally {
            store: self.kind.name(),
            fault: self.fault.name(),
            ..Tally::default()
        };
        if let Err(why) = self.prepare().await {
            tally.skipped = Some(why);
            return tally;
        }
        let mut proc = self.start(0);
        let mut sender = Sender::new(proc.addr());
        let third = self.messages / 3;
        let mut answers = Vec::with_capacity(self.messages);
        for n in 0..self.messages {
            let id = format!("{}{n}", self.tag);
            if self.fault.kills() && (n == third || n == 2 * third) {
                let delay = Duration::from_millis(if n == third { 0 } else { 2 });
                let (back, answer) = self.send_killing(sender, id, delay, &mut proc).await;
                sender = back;
                answers.push(answer);
                continue;
            }
            if n == third {
                self.fault(true, &mut proc).await;
            } else if n == 2 * third {
                self.fault(false, &mut proc).await;
            }
            answers.push(sender.send(&id).await);
        }
        // A record says its failed writes once a second.
        if self.kind == Kind::Record {
            tokio::time::sleep(Duration::from_millis(1500)).await;
        }
        proc.kill();
        let (at_path, anywhere) = self.stored().await;
        let free_before = if self.fault.kills() { 0 } else { third };
        let gone = self.fault == Fault::Deleted;
        judge(&mut tally, &answers, &at_path, &anywhere, free_before, gone);
        if let Proc::Relay(relay) = &proc {
            if self.kind == Kind::Record {
                let judged = (&at_path, &anywhere);
                record_rules(&mut tally, relay, &answers, judged, free_before, gone);
            }
        }
        tally
    }
}

/// A record never changes an answer, so its rule is its own: every message answered downstream
/// is recorded (where the path named) or counted in a `store_error` saying the record failed.
fn record_rules(
    tally: &mut Tally,
    relay: &RelayProc,
    answers: &[Answer],
    (at_path, anywhere): (&BTreeSet<String>, &BTreeSet<String>),
    free_before: usize,
    gone: bool,
) {
    let mut said = 0usize;
    while let Ok(event) = relay.events.try_recv() {
        let detail = event["detail"].as_str().unwrap_or_default();
        if event["event"] == "store_error" {
            if let Some(n) = detail
                .strip_prefix("record: ")
                .and_then(|d| d.split(' ').next())
                .and_then(|n| n.parse::<usize>().ok())
            {
                said += n;
            }
        }
    }
    let unrecorded: Vec<String> = answers
        .iter()
        .enumerate()
        .filter(|(n, (id, code))| {
            let recorded = match *n < free_before {
                true => gone || anywhere.contains(id),
                false => at_path.contains(id),
            };
            code.is_some() && !recorded
        })
        .map(|(_, (id, _))| id.clone())
        .collect();
    tally.kept.clear();
    tally.lost = if unrecorded.len() <= said {
        Vec::new()
    } else {
        unrecorded
    };
}
