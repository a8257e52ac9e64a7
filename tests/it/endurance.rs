//! Endurance, opt-in: `soak` with chaos against `listen --sqlite --dedupe` for a long while,
//! both processes' memory and descriptors sampled every second, nothing lost and nothing grown.
//! Run: `MLLP_ENDURANCE=30m nice -n 10 cargo test --test it endurance:: -- --ignored --nocapture`
//! (the debug binary; samples in target/endurance/samples.csv, the soak report beside them).

use crate::support::proc_sample::{slope, Sample, Sampler};
use crate::support::{mllp_bin, repo_root};
use serde_json::Value;
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// Light on a shared machine: a modest rate over a few connections.
const RATE: &str = "1000";
const CONNECTIONS: &str = "4";
/// Every fault the proxy in front of a real peer can inject, often enough to matter.
const CHAOS: &str = "reset=0.0002,delay=0.01:20ms,stall=0.0001:2s,drop=0.00005:3s";
/// Memory may wobble; a leak of a few bytes per message would show far above this.
const MAX_RSS_SLOPE_KIB_PER_MIN: f64 = 256.0;
/// Descriptors the runtime or the database may open lazily after the start.
const FD_MARGIN: u64 = 4;
const WARM_UP: Duration = Duration::from_secs(120);

fn run_length() -> Duration {
    match std::env::var("MLLP_ENDURANCE") {
        Ok(text) => humantime::parse_duration(&text).expect("MLLP_ENDURANCE: a duration like 30m"),
        Err(_) => Duration::from_secs(30 * 60),
    }
}

/// Start `listen` on a free port and return it with its address, once it listens.
fn start_listen(dir: &std::path::Path) -> (Child, String) {
    let log = dir.join("listen.log");
    let child = Command::new(mllp_bin())
        .args([
            "-q",
            "--log-format",
            "json",
            "listen",
            "--port",
            "0",
            "--dedupe",
        ])
        .arg("--sqlite")
        .arg(dir.join("rx.db"))
        .env("MLLP_TEST", "1")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(std::fs::File::create(&log).unwrap())
        .spawn()
        .expect("start mllp listen");
    let deadline = Instant::now() + Duration::from_secs(15);
    let mut child = child;
    let first = loop {
        let text = std::fs::read_to_string(&log).unwrap_or_default();
        if let Some(first) = text.lines().next() {
            break serde_json::from_str::<Value>(first).ok();
        }
        if Instant::now() > deadline {
            break None;
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    match first {
        Some(event) if event["event"] == "listening" => {
            (child, event["addr"].as_str().unwrap().to_string())
        }
        other => {
            let _ = child.kill();
            let _ = child.wait();
            panic!("listen did not start: {other:?}");
        }
    }
}

/// RSS after warm-up, its slope in KiB/min, and descriptors before, at peak and after.
struct Figures {
    rss_first: u64,
    rss_last: u64,
    slope_kib_min: f64,
    fds_before: u64,
    fds_peak: u64,
    fds_after: u64,
}

fn figures(samples: &[Sample], warm_up_end: f64, steady_end: f64) -> Figures {
    let steady: Vec<&Sample> = samples
        .iter()
        .filter(|s| s.t >= warm_up_end && s.t <= steady_end)
        .collect();
    assert!(steady.len() >= 10, "too few samples after warm-up");
    let points: Vec<(f64, f64)> = steady
        .iter()
        .map(|s| (s.t / 60.0, s.rss_kib as f64))
        .collect();
    Figures {
        rss_first: steady[0].rss_kib,
        rss_last: steady[steady.len() - 1].rss_kib,
        slope_kib_min: slope(&points).unwrap(),
        fds_before: samples[0].fds,
        fds_peak: samples.iter().map(|s| s.fds).max().unwrap(),
        fds_after: samples[samples.len() - 1].fds,
    }
}

fn print_figures(name: &str, f: &Figures) {
    println!(
        "{name:>6}: RSS after warm-up {} -> {} KiB, slope {:+.1} KiB/min; \
         descriptors before {}, peak {}, after {}",
        f.rss_first, f.rss_last, f.slope_kib_min, f.fds_before, f.fds_peak, f.fds_after
    );
}

#[test]
#[ignore = "runs for MLLP_ENDURANCE (default 30m); opt-in"]
fn soak_with_chaos_against_sqlite_dedupe_leaks_nothing() {
    let length = run_length();
    let warm_up = WARM_UP.min(length / 4);
    let dir = repo_root().join("target/endurance");
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();

    let (mut listen, addr) = start_listen(&dir);
    let processes = Arc::new(Mutex::new(vec![("listen".to_string(), listen.id())]));
    let mut sampler = Sampler::start(&dir.join("samples.csv"), processes.clone());
    // A few idle readings of the listener before any traffic: its descriptor baseline.
    std::thread::sleep(Duration::from_secs(3));

    let (host, port) = addr.rsplit_once(':').unwrap();
    let report_path = dir.join("report.json");
    let started = Instant::now();
    let mut soak = Command::new(mllp_bin())
        .args(["-q", "--log-format", "json", "soak", "--allow-synthetic"])
        .args(["--host", host, "--port", port])
        .args([
            "--connections",
            CONNECTIONS,
            "--rate",
            RATE,
            "--chaos",
            CHAOS,
        ])
        .args(["--ack-timeout", "5s", "--seed", "13", "--live", "never"])
        .arg("--duration")
        .arg(humantime::format_duration(length).to_string())
        .arg("--report")
        .arg(&report_path)
        .env("MLLP_TEST", "1")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(std::fs::File::create(dir.join("soak.log")).unwrap())
        .spawn()
        .expect("start mllp soak");
    let soak_started_at = sampler.started.elapsed().as_secs_f64();
    processes
        .lock()
        .unwrap()
        .push(("soak".to_string(), soak.id()));
    let status = soak.wait().unwrap();
    let soak_ran = started.elapsed();
    // Closed connections are reaped; then the listener's descriptors are read once more.
    std::thread::sleep(Duration::from_secs(3));
    sampler.stop();
    let _ = Command::new("kill")
        .args(["-TERM", &listen.id().to_string()])
        .status();
    let listen_status = listen.wait().unwrap();

    let report: Value =
        serde_json::from_str(&std::fs::read_to_string(&report_path).expect("the soak report"))
            .expect("the soak report is JSON");
    let db = rusqlite::Connection::open(dir.join("rx.db")).unwrap();
    let rows: u64 = db
        .query_row("SELECT COUNT(*) FROM messages", [], |r| r.get(0))
        .unwrap();
    let distinct: u64 = db
        .query_row("SELECT COUNT(DISTINCT control_id) FROM messages", [], |r| {
            r.get(0)
        })
        .unwrap();

    let steady_end = soak_started_at + length.as_secs_f64();
    let warm_up_end = soak_started_at + warm_up.as_secs_f64();
    let listen_figures = figures(&sampler.of("listen"), warm_up_end, steady_end);
    let soak_figures = figures(&sampler.of("soak"), warm_up_end, steady_end);
    let count = |key: &str| report[key].as_u64().unwrap_or(0);

    println!("endurance: {length:?} at {RATE}/s over {CONNECTIONS} connections, chaos {CHAOS}");
    println!("  soak exit {status}, ran {soak_ran:.0?}; listen exit {listen_status}");
    print_figures("listen", &listen_figures);
    print_figures("soak", &soak_figures);
    println!(
        "  soak report: accounting_ok {}, generated {}, accepted {}, negative {}, \
         committed_only {}, unknown_fate {}, never_delivered {}, refused {}",
        report["accounting_ok"],
        count("generated"),
        count("accepted"),
        count("negative"),
        count("committed_only"),
        count("unknown_fate"),
        count("never_delivered"),
        count("refused"),
    );
    println!(
        "  reconnects {}, errors {}, outcomes {}",
        report["reconnects"], report["errors_by_cause"], report["outcomes_by_cause"]
    );
    println!("  database: {rows} rows, {distinct} distinct control IDs");
    println!("  samples: {}", dir.join("samples.csv").display());

    assert_eq!(report["accounting_ok"], true, "{}", report["accounting"]);
    assert!(status.success(), "soak: {status}");
    assert!(
        rows >= count("accepted"),
        "accepted messages missing: {} accepted, {rows} stored",
        count("accepted")
    );
    assert_eq!(rows, distinct, "--dedupe stored a message twice");
    let may_be_stored = count("generated") - count("refused") - count("negative");
    assert!(rows <= may_be_stored, "more stored than ever sent");
    for (name, f) in [("listen", &listen_figures), ("soak", &soak_figures)] {
        assert!(
            f.slope_kib_min < MAX_RSS_SLOPE_KIB_PER_MIN,
            "{name}: RSS grows {:.1} KiB/min",
            f.slope_kib_min
        );
    }
    let f = &listen_figures;
    assert!(
        f.fds_after <= f.fds_before + FD_MARGIN,
        "listen: {} descriptors before, {} after",
        f.fds_before,
        f.fds_after
    );
    let soak_samples = sampler.of("soak");
    let soak_warm: u64 = soak_samples
        .iter()
        .filter(|s| s.t < warm_up_end)
        .map(|s| s.fds)
        .max()
        .unwrap();
    let soak_end = soak_samples.last().unwrap().fds;
    assert!(
        soak_end <= soak_warm + FD_MARGIN,
        "soak: at most {soak_warm} descriptors in warm-up, {soak_end} at the end"
    );
}
