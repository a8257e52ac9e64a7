//! What a running process holds, read from /proc: resident memory and open descriptors, sampled
//! once a second into a CSV, and the least-squares slope that says whether memory grows.

use std::io::Write;
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// Resident set size in KiB (`VmRSS`), or None once the process is gone.
pub fn rss_kib(pid: u32) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let line = status.lines().find(|l| l.starts_with("VmRSS:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

/// Open descriptors (entries of /proc/PID/fd), or None once the process is gone.
pub fn open_fds(pid: u32) -> Option<u64> {
    Some(std::fs::read_dir(format!("/proc/{pid}/fd")).ok()?.count() as u64)
}

/// One process's reading at one moment.
#[derive(Debug, Clone, Copy)]
pub struct Sample {
    /// Seconds since sampling started.
    pub t: f64,
    pub rss_kib: u64,
    pub fds: u64,
}

/// Samples of several named processes, taken by a thread every second and appended to a CSV
/// (`t_s,process,pid,rss_kib,fds`).
pub struct Sampler {
    /// The clock of the samples' `t`.
    pub started: Instant,
    pub samples: Arc<Mutex<Vec<(String, Sample)>>>,
    stop: Arc<AtomicBool>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Sampler {
    pub fn start(csv: &Path, processes: Arc<Mutex<Vec<(String, u32)>>>) -> Sampler {
        let mut out = std::fs::File::create(csv).expect("create the samples CSV");
        writeln!(out, "t_s,process,pid,rss_kib,fds").unwrap();
        let samples = Arc::new(Mutex::new(Vec::new()));
        let stop = Arc::new(AtomicBool::new(false));
        let (kept, stopping) = (samples.clone(), stop.clone());
        let started = Instant::now();
        let thread = std::thread::spawn(move || {
            let start = started;
            let mut tick = start;
            while !stopping.load(Ordering::Relaxed) {
                let t = start.elapsed().as_secs_f64();
                for (name, pid) in processes.lock().unwrap().iter() {
                    let (Some(rss_kib), Some(fds)) = (rss_kib(*pid), open_fds(*pid)) else {
                        continue;
                    };
                    writeln!(out, "{t:.1},{name},{pid},{rss_kib},{fds}").unwrap();
                    let sample = Sample { t, rss_kib, fds };
                    kept.lock().unwrap().push((name.clone(), sample));
                }
                out.flush().unwrap();
                tick += Duration::from_secs(1);
                std::thread::sleep(tick.saturating_duration_since(Instant::now()));
            }
        });
        Sampler {
            started,
            samples,
            stop,
            thread: Some(thread),
        }
    }

    /// The samples of `name`, in time order.
    pub fn of(&self, name: &str) -> Vec<Sample> {
        let all = self.samples.lock().unwrap();
        all.iter()
            .filter(|(n, _)| n == name)
            .map(|(_, s)| *s)
            .collect()
    }

    pub fn stop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(thread) = self.thread.take() {
            thread.join().unwrap();
        }
    }
}

impl Drop for Sampler {
    fn drop(&mut self) {
        self.stop();
    }
}

/// Least-squares slope of `y` over `x`; None with fewer than two distinct x.
pub fn slope(points: &[(f64, f64)]) -> Option<f64> {
    let n = points.len() as f64;
    let mean_x = points.iter().map(|p| p.0).sum::<f64>() / n;
    let mean_y = points.iter().map(|p| p.1).sum::<f64>() / n;
    let sxx: f64 = points.iter().map(|p| (p.0 - mean_x).powi(2)).sum();
    let sxy: f64 = points.iter().map(|p| (p.0 - mean_x) * (p.1 - mean_y)).sum();
    (sxx > 0.0).then(|| sxy / sxx)
}

#[test]
fn slope_of_a_line_is_its_gradient() {
    let line: Vec<(f64, f64)> = (0..10).map(|x| (x as f64, 3.0 * x as f64 + 7.0)).collect();
    assert!((slope(&line).unwrap() - 3.0).abs() < 1e-9);
    assert_eq!(slope(&[(1.0, 5.0), (1.0, 9.0)]), None);
}
