//! Where the engine is the limit: `mllp listen --ack-delay 5ms` (5 ms a message, one at a time
//! per connection), `mllp send` over one connection against `--connections 8 --order-key
//! PID-3`, for three spreads of patients (one each; 50 patients taking turns; three patients
//! sending 80 % of the messages), and with `--baseline MLLP` the keyed run of another build
//! beside it. Every run interleaved; each run's ratios printed, then their medians.

use super::workload;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
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

/// How the messages of a workload are spread over patients: message `i` (from 1) is patient
/// `patient(i)`.
struct Spread {
    name: &'static str,
    patient: fn(usize) -> usize,
}

const SPREADS: [Spread; 3] = [
    Spread {
        name: "a patient each",
        patient: |i| i,
    },
    Spread {
        name: "50 patients taking turns",
        patient: |i| i % 50,
    },
    Spread {
        name: "3 patients send 80 %, 47 the rest",
        patient: |i| if i % 5 == 0 { 3 + (i / 5) % 47 } else { i % 3 },
    },
];

/// The rows, `runs` times interleaved; printed as they come and summed up. `baseline` is
/// another build whose keyed run goes beside this one's.
pub fn run(mllp: &Path, dir: &Path, messages: usize, runs: usize, baseline: Option<PathBuf>) {
    println!("\nengine at 5 ms a message, one at a time per connection (mllp listen --ack-delay 5ms), {messages} messages");
    let keyed = ["--connections", "8", "--order-key", "PID-3"];
    for (i, spread) in SPREADS.iter().enumerate() {
        let file = dir.join(format!("slow-{i}.hl7"));
        workload::write_keyed_workload(&file, messages, super::MESSAGE_BYTES, spread.patient);
        println!("  {}:", spread.name);
        let (mut ratios, mut before) = (Vec::new(), Vec::new());
        for r in 0..runs {
            let one = rate(mllp, &file, messages, &[]);
            let eight = rate(mllp, &file, messages, &keyed);
            let old = baseline
                .as_deref()
                .map(|b| rate(b, &file, messages, &keyed));
            match (one, eight) {
                (Ok(one), Ok(eight)) => {
                    let mut line = format!(
                        "    run {}: one connection {one:.0} msg/s; --connections 8 --order-key PID-3 {eight:.0} msg/s: {:.2}x",
                        r + 1,
                        eight / one
                    );
                    ratios.push(eight / one);
                    if let Some(old) = old {
                        match old {
                            Ok(old) => {
                                line += &format!("; baseline {old:.0} msg/s: {:.2}x", old / one);
                                before.push(old / one);
                            }
                            Err(e) => line += &format!("; baseline failed: {e}"),
                        }
                    }
                    println!("{line}");
                }
                (one, eight) => println!("    run {}: failed: {one:?} / {eight:?}", r + 1),
            }
        }
        let median = |v: &mut Vec<f64>| {
            v.sort_by(f64::total_cmp);
            v.get(v.len() / 2).copied()
        };
        if let Some(m) = median(&mut ratios) {
            let old = median(&mut before).map_or(String::new(), |b| format!(" (baseline {b:.2}x)"));
            println!(
                "    median: --connections 8 --order-key PID-3 is {m:.2}x one connection{old}"
            );
        }
    }
}
