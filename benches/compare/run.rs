//! One measurement: a fresh server, one client sending the message file to it to the end, and
//! what each side used. Every sender checks every ACK (AA naming the MSH-10 it sent); a pairing
//! that does not deliver them all is an error carrying the reason.

use crate::floor::{self, reap, Usage};
use crate::install::Peers;
use crate::peer::{Client, Server};
use std::io::{BufRead, BufReader, Read};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// What one pairing measured in one run.
#[derive(Clone, Copy, Debug)]
pub struct Sample {
    pub rate: f64,
    pub p50_us: Option<f64>,
    pub p99_us: Option<f64>,
    pub client_cpu_us: f64,
    pub server_cpu_us: f64,
    pub client_rss_kb: u64,
    pub server_rss_kb: u64,
}

pub struct Setup<'a> {
    pub mllp: PathBuf,
    pub peers: &'a Peers,
    pub file: PathBuf,
    pub messages: usize,
    pub timeout: Duration,
}

pub fn measure(
    setup: &Setup,
    client: Client,
    server: Server,
    window: usize,
) -> Result<Sample, String> {
    let mut running = start_server(setup, server)?;
    let result = run_client(setup, client, running.port, window);
    let died = exited(running.child.id());
    let usage = reap(&mut running.child, true);
    // A server that went away on its own says why on its stderr.
    let sent = result.map_err(|e| match died {
        true => format!("{e}; {} exited: {}", server.label(), running.stderr_tail()),
        false => e,
    })?;
    let per_msg = |cpu: f64| cpu * 1e6 / setup.messages as f64;
    Ok(Sample {
        rate: sent.rate,
        p50_us: sent.p50_us,
        p99_us: sent.p99_us,
        client_cpu_us: per_msg(sent.cpu_s),
        server_cpu_us: per_msg(usage.cpu_s - running.ready_cpu),
        client_rss_kb: sent.rss_kb,
        server_rss_kb: usage.max_rss_kb,
    })
}

/// Whether a child has exited (a zombie not yet reaped).
fn exited(pid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .ok()
        .and_then(|s| Some(s.rsplit_once(") ")?.1.starts_with('Z')))
        .unwrap_or(true)
}

struct Running {
    child: Child,
    port: u16,
    /// CPU the server used starting up, not counted against the messages.
    ready_cpu: f64,
    stderr: Arc<Mutex<String>>,
}

impl Running {
    fn stderr_tail(&self) -> String {
        let text = self.stderr.lock().unwrap();
        let lines: Vec<&str> = text.lines().filter(|l| !l.trim().is_empty()).collect();
        lines[lines.len().saturating_sub(2)..].join(" | ")
    }
}

fn python(setup: &Setup, script: &str) -> Result<Command, String> {
    let (python, dir) = setup.peers.python.as_ref().map_err(|e| e.clone())?;
    let mut cmd = Command::new(python);
    cmd.arg(dir.join(script));
    Ok(cmd)
}

fn node(setup: &Setup, script: &str) -> Result<Command, String> {
    let dir = setup.peers.node.as_ref().map_err(|e| e.clone())?;
    let mut cmd = Command::new("node");
    cmd.arg(dir.join(script)).current_dir(dir);
    Ok(cmd)
}

fn start_server(setup: &Setup, server: Server) -> Result<Running, String> {
    let mut cmd = match server {
        Server::Floor => {
            let mut c = Command::new(std::env::current_exe().unwrap());
            c.arg("--floor-recv");
            c
        }
        Server::FloorC => {
            let mut c = Command::new(floor::c_floor()?);
            c.arg("recv");
            c
        }
        Server::Listen => {
            let mut c = Command::new(&setup.mllp);
            c.args([
                "--log-format",
                "json",
                "listen",
                "--port",
                "0",
                "--format",
                "raw",
            ]);
            c
        }
        Server::PyAsyncio => python(setup, "py_server.py")?,
        Server::NodeHl7 => node(setup, "node_server.js")?,
        Server::SimpleHl7 => node(setup, "simple_server.js")?,
    };
    // `mllp listen` writes every message to stdout: to /dev/null, as a user measuring would.
    let stdout = match server {
        Server::Listen => Stdio::null(),
        _ => Stdio::piped(),
    };
    let mut child = cmd
        .stdin(Stdio::null())
        .stdout(stdout)
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| format!("start {}: {e}", server.label()))?;
    let stderr = Arc::new(Mutex::new(String::new()));
    let (tx, lines) = mpsc::channel();
    // `mllp listen` names its address on stderr, the others print their port on stdout.
    let (port_tx, err_tx) = match server {
        Server::Listen => (None, Some(tx)),
        _ => (Some(tx), None),
    };
    if let Some(out) = child.stdout.take() {
        drain(out, port_tx, None);
    }
    drain(child.stderr.take().unwrap(), err_tx, Some(stderr.clone()));
    let first = lines.recv_timeout(Duration::from_secs(20));
    let port = first.ok().and_then(|line| match server {
        Server::Listen => serde_json::from_str::<serde_json::Value>(&line).ok()?["addr"]
            .as_str()?
            .rsplit(':')
            .next()?
            .parse()
            .ok(),
        _ => line.trim().parse().ok(),
    });
    let Some(port) = port else {
        reap(&mut child, true);
        let text = stderr.lock().unwrap().trim().to_string();
        return Err(format!("{} did not start: {text}", server.label()));
    };
    let ready_cpu = floor::cpu_now(child.id());
    Ok(Running {
        child,
        port,
        ready_cpu,
        stderr,
    })
}

/// Reads a child's output line by line to its end: the lines to `lines` while anyone listens,
/// the text to `keep`.
fn drain(
    from: impl Read + Send + 'static,
    lines: Option<mpsc::Sender<String>>,
    keep: Option<Arc<Mutex<String>>>,
) {
    std::thread::spawn(move || {
        for line in BufReader::new(from).lines() {
            let Ok(line) = line else { break };
            if let Some(tx) = &lines {
                let _ = tx.send(line.clone());
            }
            if let Some(keep) = &keep {
                let mut text = keep.lock().unwrap();
                if text.len() < 64 * 1024 {
                    text.push_str(&line);
                    text.push('\n');
                }
            }
        }
    });
}

struct Sent {
    rate: f64,
    p50_us: Option<f64>,
    p99_us: Option<f64>,
    cpu_s: f64,
    rss_kb: u64,
}

fn client_command(
    setup: &Setup,
    client: Client,
    port: u16,
    window: usize,
) -> Result<Command, String> {
    let port = port.to_string();
    let window_arg = window.to_string();
    let file = setup.file.as_os_str();
    let mut cmd = match client {
        Client::Floor => {
            let mut c = Command::new(std::env::current_exe().unwrap());
            c.args(["--floor-send", "--port", &port, "--window", &window_arg])
                .arg(file);
            c
        }
        Client::FloorC => {
            let mut c = Command::new(floor::c_floor()?);
            c.args(["send", "--port", &port, "--window", &window_arg])
                .arg(file);
            c
        }
        Client::Send | Client::SendKeyed => {
            let mut c = Command::new(&setup.mllp);
            c.args(["--quiet", "send", "--progress", "never", "--json"])
                .arg(file)
                .args(["--host", "127.0.0.1", "--port", &port])
                // A peer that stops answering fails the run within the harness's timeout.
                .args(["--ack-timeout", "5s"]);
            if client == Client::SendKeyed {
                c.args(["--connections", "4", "--order-key", "PID-3"]);
            }
            // One at a time is `--window 1`: one frame in flight, as the other clients send.
            // `--no-pipeline` would add its wait of up to 250 ms after a connection's first
            // answer (for engines that close after each answer), once a run here.
            c.args(["--window", &window.to_string()]);
            c
        }
        Client::PyAsyncio | Client::PyMllpSend => {
            let mut c = python(setup, "py_client.py")?;
            let mode = if client == Client::PyAsyncio {
                "asyncio"
            } else {
                "mllp_send"
            };
            c.args([mode, &port]).arg(file).arg(&window_arg);
            c
        }
        Client::NodeHl7 | Client::SimpleHl7 => {
            let script = if client == Client::NodeHl7 {
                "node_client.js"
            } else {
                "simple_client.js"
            };
            let mut c = node(setup, script)?;
            c.arg(&port).arg(file).arg(&window_arg);
            c
        }
    };
    cmd.stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    Ok(cmd)
}

fn run_client(setup: &Setup, client: Client, port: u16, window: usize) -> Result<Sent, String> {
    let mut cmd = client_command(setup, client, port, window)?;
    let started = Instant::now();
    let mut child = cmd
        .spawn()
        .map_err(|e| format!("start {}: {e}", client.label()))?;
    let pid = child.id();
    let (mut out, mut err) = (child.stdout.take().unwrap(), child.stderr.take().unwrap());
    let out = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = out.read_to_string(&mut s);
        s
    });
    let err = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = err.read_to_string(&mut s);
        s
    });
    let (tx, done) = mpsc::channel();
    std::thread::spawn(move || {
        let usage = reap(&mut child, false);
        let _ = tx.send((usage, Instant::now()));
    });
    let (usage, ended, timed_out) = match done.recv_timeout(setup.timeout) {
        Ok((usage, ended)) => (usage, ended, false),
        Err(_) => {
            // An interrupt first: `mllp send` then stops and still prints its summary.
            // SAFETY: kill only signals the child this function started and has not reaped.
            unsafe { libc::kill(pid as libc::pid_t, libc::SIGINT) };
            let (usage, ended) = done
                .recv_timeout(Duration::from_secs(10))
                .unwrap_or_else(|_| {
                    // SAFETY: as above; the child has not been reaped yet.
                    unsafe { libc::kill(pid as libc::pid_t, libc::SIGKILL) };
                    done.recv().unwrap()
                });
            (usage, ended, true)
        }
    };
    let wall_s = (ended - started).as_secs_f64();
    let (out, err) = (out.join().unwrap(), err.join().unwrap());
    let last_err = err
        .lines()
        .rev()
        .find(|l| !l.trim().is_empty())
        .unwrap_or("");
    let timed_out = match timed_out {
        true => format!("timed out after {} s: ", setup.timeout.as_secs()),
        false => String::new(),
    };
    if matches!(client, Client::Send | Client::SendKeyed) {
        return send_outcome(setup, &out, usage, wall_s, last_err).map_err(|e| timed_out + &e);
    }
    if !timed_out.is_empty() {
        return Err(format!("{timed_out}{last_err}")
            .trim_end_matches([' ', ':'])
            .into());
    }
    if !usage.success {
        return Err(if last_err.is_empty() {
            "exited with a failure and no reason".into()
        } else {
            last_err.into()
        });
    }
    let report: serde_json::Value = serde_json::from_str(out.lines().last().unwrap_or(""))
        .map_err(|e| format!("unreadable report ({e}): {out:?}"))?;
    let messages = report["messages"].as_u64().unwrap_or(0) as usize;
    if messages != setup.messages {
        return Err(format!("sent {messages} of {} messages", setup.messages));
    }
    let rate = match client {
        // The native senders are timed from spawn to exit, as a user would time them.
        Client::Floor | Client::FloorC => messages as f64 / wall_s,
        // Interpreters are timed from connect to last ACK, their start-up left out.
        _ => messages as f64 / report["elapsed_s"].as_f64().unwrap_or(f64::NAN),
    };
    let cpu_s = match client {
        Client::Floor | Client::FloorC => usage.cpu_s,
        _ => report["cpu_s"].as_f64().unwrap_or(f64::NAN),
    };
    Ok(Sent {
        rate,
        p50_us: report["p50_us"].as_f64(),
        p99_us: report["p99_us"].as_f64(),
        cpu_s,
        rss_kb: usage.max_rss_kb,
    })
}

/// `mllp send --json --quiet` prints only its summary: every message must be accepted.
fn send_outcome(
    setup: &Setup,
    out: &str,
    usage: Usage,
    wall_s: f64,
    last_err: &str,
) -> Result<Sent, String> {
    let summary = out
        .lines()
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .find(|v| v["type"] == "summary");
    let Some(s) = summary else {
        return Err(format!("no summary; {last_err}"));
    };
    let n = |k: &str| s[k].as_u64().unwrap_or(0);
    if !usage.success || n("accepted") != setup.messages as u64 {
        let mut why = format!("accepted {} of {}", n("accepted"), setup.messages);
        for k in [
            "negative",
            "committed_only",
            "unknown_fate",
            "never_delivered",
            "refused",
            "resent",
            "reconnects",
        ] {
            if n(k) > 0 {
                why.push_str(&format!(", {k} {}", n(k)));
            }
        }
        if let Some(cause) = s["gave_up"].as_str() {
            why.push_str(&format!(", gave up: {cause}"));
        }
        return Err(why);
    }
    Ok(Sent {
        rate: setup.messages as f64 / wall_s,
        p50_us: None,
        p99_us: None,
        cpu_s: usage.cpu_s,
        rss_kb: usage.max_rss_kb,
    })
}
