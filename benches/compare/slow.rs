//! Where the engine is the limit: `mllp listen --ack-delay 5ms` (5 ms a message, one at a time
//! per connection), `mllp send` over one connection against `--connections 8 --order-key
//! PID-3`, interleaved, each run's ratio printed with the median.

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Instant;

/// One `mllp send` run against a fresh slow listener: messages per second, spawn to exit.
fn rate(mllp: &Path, file: &Path, messages: usize, extra: &[&str]) -> Result<f64, String> {
    let mut listen = Command::new(mllp)
        .args([
            "--log-format",
            "json",
            "listen",
            "--port",
            "0",
            "--format",
            "raw",
        ])
        .args(["--ack-delay", "5ms"])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| format!("start mllp listen: {e}"))?;
    let mut line = String::new();
    let mut err = BufReader::new(listen.stderr.take().unwrap());
    let _ = err.read_line(&mut line);
    std::thread::spawn(move || for _ in err.lines() {});
    let port = serde_json::from_str::<serde_json::Value>(&line)
        .ok()
        .and_then(|v| v["addr"].as_str()?.rsplit(':').next()?.parse::<u16>().ok())
        .ok_or(format!("mllp listen did not start: {line}"))?;
    let started = Instant::now();
    let out = Command::new(mllp)
        .args(["--quiet", "send", "--progress", "never", "--json"])
        .arg(file)
        .args(["--host", "127.0.0.1", "--port", &port.to_string()])
        .args(extra)
        .output()
        .map_err(|e| format!("start mllp send: {e}"))?;
    let wall = started.elapsed().as_secs_f64();
    let _ = listen.kill();
    let _ = listen.wait();
    let text = String::from_utf8_lossy(&out.stdout);
    let summary: serde_json::Value = text
        .lines()
        .last()
        .and_then(|l| serde_json::from_str(l).ok())
        .ok_or("no summary")?;
    match summary["accepted"].as_u64() {
        Some(n) if n == messages as u64 => Ok(messages as f64 / wall),
        other => Err(format!("accepted {other:?} of {messages}")),
    }
}

/// The rows, `runs` times interleaved; printed as they come and summed up.
pub fn run(mllp: &Path, file: &Path, messages: usize, runs: usize) {
    println!("\nengine at 5 ms a message, one at a time per connection (mllp listen --ack-delay 5ms), {messages} messages");
    let keyed = ["--connections", "8", "--order-key", "PID-3"];
    let mut ratios = Vec::new();
    for r in 0..runs {
        let one = rate(mllp, file, messages, &[]);
        let eight = rate(mllp, file, messages, &keyed);
        match (one, eight) {
            (Ok(one), Ok(eight)) => {
                println!(
                    "  run {}: mllp send {one:.0} msg/s; --connections 8 --order-key PID-3 {eight:.0} msg/s: {:.2}x",
                    r + 1,
                    eight / one
                );
                ratios.push(eight / one);
            }
            (one, eight) => println!("  run {}: failed: {one:?} / {eight:?}", r + 1),
        }
    }
    ratios.sort_by(f64::total_cmp);
    if let Some(m) = ratios.get(ratios.len() / 2) {
        println!("  median: --connections 8 --order-key PID-3 is {m:.2}x one connection");
    }
}
