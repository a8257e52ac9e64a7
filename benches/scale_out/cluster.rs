//! The benchmark's PostgreSQL: a throw-away durable cluster (or `MLLP_BENCH_PG`, measured too
//! when `MLLP_BENCH_PG_DATA` names its data directory), and the CPU its processes spent, the
//! whole cluster's and the backends' serving one database, read from `/proc/PID/stat`.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

pub struct Cluster {
    pub url: String,
    /// The postmaster's data directory, when known: its processes are measured.
    data: Option<PathBuf>,
    /// The control script and the scratch directory, when this run started it.
    own: Option<(PathBuf, tempfile::TempDir)>,
}

impl Drop for Cluster {
    fn drop(&mut self) {
        if let Some((ctl, _)) = &self.own {
            let _ = Command::new(ctl).arg("stop").stdout(Stdio::null()).status();
        }
    }
}

impl Cluster {
    /// `MLLP_BENCH_PG`, else a cluster started with `.ci/pg-cluster` and fsync on.
    pub fn start() -> Option<Cluster> {
        if let Ok(url) = std::env::var("MLLP_BENCH_PG") {
            let data = std::env::var_os("MLLP_BENCH_PG_DATA").map(PathBuf::from);
            return Some(Cluster {
                url,
                data,
                own: None,
            });
        }
        let dir = tempfile::tempdir().ok()?;
        let _ = std::fs::set_permissions(
            dir.path(),
            std::os::unix::fs::PermissionsExt::from_mode(0o755),
        );
        let script = Path::new(env!("CARGO_MANIFEST_DIR")).join(".ci/pg-cluster");
        let out = Command::new(script)
            .arg(dir.path().join("pg"))
            .env("PG_FSYNC", "on")
            .stderr(Stdio::inherit())
            .output()
            .ok()?;
        if !out.status.success() {
            return None;
        }
        let text = String::from_utf8_lossy(&out.stdout);
        let value = |name: &str| {
            text.lines()
                .find_map(|l| l.strip_prefix(name)?.strip_prefix('='))
                .map(str::to_string)
        };
        let ctl = PathBuf::from(value("MLLP_TEST_PG_CTL")?);
        let data = dir.path().join("pg/data");
        Some(Cluster {
            url: value("MLLP_TEST_PG")?,
            data: Some(data),
            own: Some((ctl, dir)),
        })
    }

    /// Whether this run started it.
    pub fn own(&self) -> bool {
        self.own.is_some()
    }

    /// CPU ticks of each of the cluster's processes (the postmaster and its children) so far,
    /// with the database a backend serves (`None` for the server's own processes).
    pub fn cpu(&self) -> Option<Cpu> {
        let data = self.data.as_ref()?;
        let postmaster = std::fs::read_to_string(data.join("postmaster.pid"))
            .ok()?
            .lines()
            .next()?
            .trim()
            .to_string();
        let mut ticks = HashMap::new();
        for entry in std::fs::read_dir("/proc").ok()?.flatten() {
            let pid = entry.file_name().to_string_lossy().to_string();
            let Ok(stat) = std::fs::read_to_string(entry.path().join("stat")) else {
                continue;
            };
            // The fields after the command name, which is in parentheses.
            let Some(rest) = stat.rsplit_once(')').map(|(_, r)| r) else {
                continue;
            };
            let f: Vec<&str> = rest.split_whitespace().collect();
            if pid != postmaster && f.get(1) != Some(&postmaster.as_str()) {
                continue;
            }
            let used = f[11].parse::<u64>().unwrap_or(0) + f[12].parse::<u64>().unwrap_or(0);
            // A backend's title: `postgres: USER DATABASE HOST(PORT) STATE`.
            let title = std::fs::read_to_string(entry.path().join("cmdline")).unwrap_or_default();
            let db = title
                .strip_prefix("postgres: ")
                .and_then(|t| t.split_whitespace().nth(1))
                .map(|d| d.trim_end_matches('\0').to_string());
            ticks.insert(pid, (used, db));
        }
        Some(Cpu(ticks))
    }
}

/// The CPU of a cluster's processes at one moment.
pub struct Cpu(HashMap<String, (u64, Option<String>)>);

impl Cpu {
    /// CPU seconds since `before`: the whole cluster's, and its backends' serving `db` (a
    /// process that started meanwhile counts from zero).
    pub fn since(&self, before: &Cpu, db: &str) -> (f64, f64) {
        let (mut all, mut backends) = (0, 0);
        for (pid, (ticks, of)) in &self.0 {
            let spent = ticks - before.0.get(pid).map_or(0, |(t, _)| *t).min(*ticks);
            all += spent;
            if of.as_deref() == Some(db) {
                backends += spent;
            }
        }
        (all as f64 / 100.0, backends as f64 / 100.0)
    }
}
