//! Running the floor from a benchmark: the benchmark binary runs itself as the floor's receiver
//! or sender (`--floor-recv`, `--floor-send`, so every benchmark carries its own floor built with
//! the same profile), and child processes are reaped with their CPU time and peak RSS. The same
//! pair written in C (`floor.c`, compiled here with `cc -O2`) is what the Rust floor is held to.
//! To run it by hand (`perf`, `strace -c`): `cargo bench --bench compare --no-run`, then the
//! binary it names with `--floor-recv [--port P]` or `--floor-send --port P --window W FILE`.

// Each benchmark uses the part of this it needs.
#![allow(dead_code)]

pub mod wire;

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Instant;

/// Runs the floor's receiver or sender when the benchmark was started as one; call first in
/// `main`.
pub fn serve_if_asked() {
    let mut args = std::env::args().skip(1);
    let result = match args.next().as_deref() {
        Some("--floor-recv") => wire::recv_main(args),
        Some("--floor-send") => wire::send_main(args),
        _ => return,
    };
    match result {
        Ok(()) => std::process::exit(0),
        Err(e) => {
            eprintln!("floor: {e}");
            std::process::exit(1)
        }
    }
}

/// What a child process used, from `wait4`: user plus system CPU and peak RSS.
#[derive(Clone, Copy, Debug, Default)]
pub struct Usage {
    pub cpu_s: f64,
    pub max_rss_kb: u64,
    /// Exited with status 0.
    pub success: bool,
}

/// Waits for `child` (killing it first when `kill`) and returns what it used. The child is
/// reaped here: do not call `Child::wait` on it afterwards.
pub fn reap(child: &mut Child, kill: bool) -> Usage {
    if kill {
        let _ = child.kill();
    }
    let mut status = 0;
    // SAFETY: wait4 writes only into the two out-parameters given.
    let usage = unsafe {
        let mut usage: libc::rusage = std::mem::zeroed();
        let pid = child.id() as libc::pid_t;
        while libc::wait4(pid, &mut status, 0, &mut usage) < 0 {
            if std::io::Error::last_os_error().kind() != std::io::ErrorKind::Interrupted {
                break;
            }
        }
        usage
    };
    let secs = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 / 1e6;
    Usage {
        cpu_s: secs(usage.ru_utime) + secs(usage.ru_stime),
        max_rss_kb: usage.ru_maxrss as u64,
        success: libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0,
    }
}

/// CPU seconds a live process has used so far, summed over its threads (nanosecond run times
/// from schedstat, where /proc/PID/stat counts in 10 ms ticks).
pub fn cpu_now(pid: u32) -> f64 {
    let Ok(tasks) = std::fs::read_dir(format!("/proc/{pid}/task")) else {
        return 0.0;
    };
    tasks
        .filter_map(|t| std::fs::read_to_string(t.ok()?.path().join("schedstat")).ok())
        .filter_map(|s| s.split_whitespace().next()?.parse::<u64>().ok())
        .sum::<u64>() as f64
        / 1e9
}

/// The C floor (`floor.c`), compiled once per process with `cc -O2` into the target directory;
/// why not, when there is no C compiler or it failed.
pub fn c_floor() -> Result<PathBuf, String> {
    static BUILT: std::sync::OnceLock<Result<PathBuf, String>> = std::sync::OnceLock::new();
    BUILT
        .get_or_init(|| {
            let source = concat!(env!("CARGO_MANIFEST_DIR"), "/benches/floor/floor.c");
            let exe = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("floor-c");
            let cc = std::env::var("CC").unwrap_or_else(|_| "cc".into());
            let out = Command::new(&cc)
                .args(["-O2", "-o"])
                .arg(&exe)
                .arg(source)
                .output()
                .map_err(|e| format!("skipped: no C compiler (`{cc}`: {e})"))?;
            if !out.status.success() {
                let why = String::from_utf8_lossy(&out.stderr);
                return Err(format!(
                    "skipped: `{cc}` could not build floor.c: {}",
                    why.trim()
                ));
            }
            Ok(exe)
        })
        .clone()
}

/// Which floor pair: the Rust one in this binary, or the C one.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Impl {
    Rust,
    C,
}

impl Impl {
    fn command(self, role: &str) -> Command {
        match self {
            Impl::Rust => {
                let mut c = Command::new(std::env::current_exe().unwrap());
                c.arg(format!("--floor-{role}"));
                c
            }
            Impl::C => {
                let mut c = Command::new(c_floor().expect("the C floor is built"));
                c.arg(role);
                c
            }
        }
    }
}

/// A running floor receiver, killed when dropped.
pub struct Receiver {
    child: Option<Child>,
    pub port: u16,
}

impl Receiver {
    pub fn start() -> Receiver {
        Receiver::start_impl(Impl::Rust)
    }

    pub fn start_impl(which: Impl) -> Receiver {
        let mut child = which
            .command("recv")
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .spawn()
            .expect("start the floor receiver");
        let mut line = String::new();
        BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut line)
            .unwrap();
        let port = line.trim().parse().expect("the floor receiver's port");
        Receiver {
            child: Some(child),
            port,
        }
    }

    pub fn pid(&self) -> u32 {
        self.child.as_ref().map_or(0, Child::id)
    }

    /// Kills the receiver and returns what it used.
    pub fn stop(mut self) -> Usage {
        reap(self.child.as_mut().unwrap(), true)
    }
}

impl Drop for Receiver {
    fn drop(&mut self) {
        if let Some(mut child) = self.child.take() {
            if child.try_wait().ok().flatten().is_none() {
                reap(&mut child, true);
            }
        }
    }
}

/// One floor sender run.
#[derive(Clone, Copy, Debug)]
pub struct Sent {
    pub messages: u64,
    /// Spawn to exit, as the benchmarks time `mllp send`.
    pub wall_s: f64,
    /// Connect to last ACK, as the sender timed it: the link alone, without its start-up.
    pub link_s: f64,
    pub p50_us: f64,
    pub p99_us: f64,
    pub usage: Usage,
}

impl Sent {
    pub fn rate(&self) -> f64 {
        self.messages as f64 / self.wall_s
    }
}

/// Starts the floor sender on the messages of `file`; `finish` waits for it.
pub fn start_send(port: u16, file: &Path, window: usize) -> (Child, Instant) {
    start_send_impl(Impl::Rust, port, file, window)
}

/// Starts the Rust or the C floor sender.
pub fn start_send_impl(which: Impl, port: u16, file: &Path, window: usize) -> (Child, Instant) {
    let started = Instant::now();
    let child = which
        .command("send")
        .args(["--port", &port.to_string()])
        .args(["--window", &window.to_string()])
        .arg(file)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start the floor sender");
    (child, started)
}

/// Waits for a floor sender started by `start_send`; its report, or why it failed.
pub fn finish(mut child: Child, started: Instant) -> Result<Sent, String> {
    use std::io::Read;
    let (mut out, mut err) = (String::new(), String::new());
    let _ = child.stdout.take().unwrap().read_to_string(&mut out);
    let _ = child.stderr.take().unwrap().read_to_string(&mut err);
    let usage = reap(&mut child, false);
    let wall_s = started.elapsed().as_secs_f64();
    if !usage.success {
        return Err(err.trim().to_string());
    }
    let report: serde_json::Value =
        serde_json::from_str(out.trim()).map_err(|e| format!("floor report {out:?}: {e}"))?;
    Ok(Sent {
        messages: report["messages"].as_u64().unwrap_or(0),
        wall_s,
        link_s: report["elapsed_s"].as_f64().unwrap_or(wall_s),
        p50_us: report["p50_us"].as_f64().unwrap_or(f64::NAN),
        p99_us: report["p99_us"].as_f64().unwrap_or(f64::NAN),
        usage,
    })
}

/// The floor sender against the server on `port`, to the end.
pub fn send(port: u16, file: &Path, window: usize) -> Result<Sent, String> {
    let (child, started) = start_send(port, file, window);
    finish(child, started)
}

/// A floor run over one or more pairs side by side.
#[derive(Clone, Copy, Debug)]
pub struct Pairs {
    pub messages: u64,
    pub elapsed_s: f64,
    pub send_cpu_s: f64,
    pub recv_cpu_s: f64,
}

impl Pairs {
    pub fn rate(&self) -> f64 {
        self.messages as f64 / self.elapsed_s
    }
}

/// The floor pair, one per file side by side (a receiver each, every sender on its own file,
/// window `window`), to the end.
pub fn pairs(files: &[&Path], window: usize) -> Pairs {
    let receivers: Vec<Receiver> = files.iter().map(|_| Receiver::start()).collect();
    let started = Instant::now();
    let senders: Vec<_> = files
        .iter()
        .zip(&receivers)
        .map(|(file, r)| start_send(r.port, file, window))
        .collect();
    let sent: Vec<Sent> = senders
        .into_iter()
        .map(|(c, s)| finish(c, s).unwrap_or_else(|e| panic!("floor sender: {e}")))
        .collect();
    let elapsed_s = started.elapsed().as_secs_f64();
    Pairs {
        messages: sent.iter().map(|s| s.messages).sum(),
        elapsed_s,
        send_cpu_s: sent.iter().map(|s| s.usage.cpu_s).sum(),
        recv_cpu_s: receivers.into_iter().map(|r| r.stop().cpu_s).sum(),
    }
}

/// Writes payloads back to back into `path`, in the layout `mllp send` and the floor read.
pub fn write_messages<'a>(path: &Path, payloads: impl IntoIterator<Item = &'a [u8]>) {
    use std::io::Write;
    let mut file = std::io::BufWriter::new(std::fs::File::create(path).unwrap());
    for p in payloads {
        file.write_all(p).unwrap();
    }
    file.flush().unwrap();
}
