//! The runs gathered per pairing and mode, and what is printed: medians with their spread over
//! the runs, ratios to the floor measured in the same run, and the reason for any failure.

use crate::peer::{Client, Server};
use crate::run::Sample;
use serde_json::{json, Value};
use std::fmt::Write;

/// One pairing in one mode: a client, a server, a window (1: one message at a time).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Cell {
    pub client: Client,
    pub server: Server,
    pub window: usize,
}

impl Cell {
    pub fn label(&self) -> String {
        format!("{} -> {}", self.client.label(), self.server.label())
    }

    fn is_floor(&self) -> bool {
        self.client == Client::Floor && self.server == Server::Floor
    }
}

/// Every cell's outcome in every run.
pub struct Results {
    pub cells: Vec<Cell>,
    /// `runs[cell][run]`
    runs: Vec<Vec<Option<Result<Sample, String>>>>,
    /// `startup[cell][run]`: client CPU µs of a one-message run of the cell after that run.
    startup: Vec<Vec<Option<f64>>>,
    messages: usize,
}

/// Median, lowest and highest of some numbers.
#[derive(Clone, Copy, Debug)]
struct Spread {
    median: f64,
    min: f64,
    max: f64,
}

fn spread(mut values: Vec<f64>) -> Option<Spread> {
    values.retain(|v| v.is_finite());
    if values.is_empty() {
        return None;
    }
    values.sort_by(f64::total_cmp);
    let n = values.len();
    let median = if n % 2 == 1 {
        values[n / 2]
    } else {
        (values[n / 2 - 1] + values[n / 2]) / 2.0
    };
    Some(Spread {
        median,
        min: values[0],
        max: values[n - 1],
    })
}

/// A cell summed up over its runs.
struct Summary {
    cell: Cell,
    failure: Option<String>,
    rate: Option<Spread>,
    x_floor: Option<Spread>,
    p50_ms: Option<Spread>,
    p99_ms: Option<Spread>,
    client_cpu_us: Option<Spread>,
    server_cpu_us: Option<Spread>,
    /// The client's CPU µs in a one-message run: its start-up.
    client_start_us: Option<Spread>,
    /// The client's CPU µs per message net of that start-up.
    client_net_us: Option<Spread>,
    client_rss_mb: Option<Spread>,
    server_rss_mb: Option<Spread>,
}

impl Results {
    pub fn new(cells: Vec<Cell>, runs: usize, messages: usize) -> Results {
        Results {
            runs: cells.iter().map(|_| vec![None; runs]).collect(),
            startup: cells.iter().map(|_| vec![None; runs]).collect(),
            cells,
            messages,
        }
    }

    pub fn record_startup(&mut self, cell: usize, run: usize, client_cpu_us: f64) {
        self.startup[cell][run] = Some(client_cpu_us);
    }

    pub fn record(&mut self, cell: usize, run: usize, outcome: Result<Sample, String>) {
        self.runs[cell][run] = Some(outcome);
    }

    pub fn failed(&self, cell: usize) -> bool {
        self.runs[cell].iter().flatten().any(|r| r.is_err())
    }

    fn floor_rate(&self, window: usize, run: usize) -> Option<f64> {
        let i = self
            .cells
            .iter()
            .position(|c| c.is_floor() && c.window == window)?;
        match &self.runs[i][run] {
            Some(Ok(s)) => Some(s.rate),
            _ => None,
        }
    }

    fn summaries(&self) -> Vec<Summary> {
        self.cells
            .iter()
            .zip(&self.runs)
            .zip(&self.startup)
            .map(|((cell, runs), startup)| {
                let failures: Vec<&String> = runs
                    .iter()
                    .flatten()
                    .filter_map(|r| r.as_ref().err())
                    .collect();
                let ok: Vec<(usize, &Sample)> = runs
                    .iter()
                    .enumerate()
                    .filter_map(|(i, r)| Some((i, r.as_ref()?.as_ref().ok()?)))
                    .collect();
                let failure = failures.first().map(|why| {
                    let tried = runs.iter().flatten().count();
                    match failures.len() == tried {
                        true => why.to_string(),
                        false => format!("failed in {} of {tried} runs: {why}", failures.len()),
                    }
                });
                let of = |f: &dyn Fn(&Sample) -> Option<f64>| {
                    spread(ok.iter().filter_map(|(_, s)| f(s)).collect())
                };
                let x_floor = spread(
                    ok.iter()
                        .filter_map(|(run, s)| Some(s.rate / self.floor_rate(cell.window, *run)?))
                        .collect(),
                );
                // Whole CPU less the one-message run's, over the other messages.
                let n = self.messages as f64;
                let net = spread(
                    ok.iter()
                        .filter_map(|(run, s)| {
                            let start = startup[*run]?;
                            Some((s.client_cpu_us * n - start) / (n - 1.0).max(1.0))
                        })
                        .collect(),
                );
                Summary {
                    cell: *cell,
                    client_start_us: spread(startup.iter().flatten().copied().collect()),
                    client_net_us: net,
                    failure,
                    rate: of(&|s| Some(s.rate)),
                    x_floor,
                    p50_ms: of(&|s| s.p50_us.map(|v| v / 1e3)),
                    p99_ms: of(&|s| s.p99_us.map(|v| v / 1e3)),
                    client_cpu_us: of(&|s| Some(s.client_cpu_us)),
                    server_cpu_us: of(&|s| Some(s.server_cpu_us)),
                    client_rss_mb: of(&|s| Some(s.client_rss_kb as f64 / 1024.0)),
                    server_rss_mb: of(&|s| Some(s.server_rss_kb as f64 / 1024.0)),
                }
            })
            .collect()
    }

    pub fn table(&self, header: &str, windows: &[usize]) -> String {
        let mut out = String::new();
        let _ = writeln!(out, "{header}");
        let summaries = self.summaries();
        for &window in windows {
            let mode = match window {
                1 => "one message at a time (window 1)".to_string(),
                w => format!("pipelined (window {w})"),
            };
            let _ = writeln!(out, "\n{mode}");
            let _ = writeln!(
                out,
                "{:<60} {:>9} {:>19} {:>17} {:>7} {:>7} {:>8} {:>8} {:>6} {:>6} {:>9} {:>7}",
                "client -> server",
                "msg/s",
                "min..max",
                "x floor",
                "p50 ms",
                "p99 ms",
                "cli us",
                "srv us",
                "cli MB",
                "srv MB",
                "start us",
                "net us"
            );
            for s in summaries.iter().filter(|s| s.cell.window == window) {
                let _ = writeln!(out, "{}", row(s));
            }
        }
        let _ = writeln!(
            out,
            "\nFigures are medians over the runs; min..max is the spread of msg/s. msg/s: messages over \
             spawn to exit for floor send and mllp send, over connect to last ACK for the interpreted \
             clients (their start-up left out). x floor: the median of each run's ratio to the floor \
             pair of that run, its spread in brackets. p50/p99: send to ACK as the client saw it (- \
             where it does not record it). cli/srv us: CPU microseconds per message (client: the \
             whole process for floor send and mllp send, the measured interval for the interpreted \
             clients; server: from ready to the end). MB: peak RSS. start us: the client's CPU \
             microseconds in a one-message run of the same pairing (its fixed start-up; - for \
             the interpreted clients, whose start-up is already left out); net us: cli us net of \
             it, (whole CPU - start) / (messages - 1)."
        );
        out
    }

    pub fn json(&self, head: Value) -> Value {
        let rows: Vec<Value> = self
            .summaries()
            .iter()
            .zip(&self.runs)
            .map(|(s, runs)| {
                let per_run: Vec<Value> = runs
                    .iter()
                    .map(|r| match r {
                        Some(Ok(sample)) => json!(sample.rate),
                        _ => Value::Null,
                    })
                    .collect();
                let sp = |v: Option<Spread>| match v {
                    Some(v) => json!({"median": v.median, "min": v.min, "max": v.max}),
                    None => Value::Null,
                };
                json!({
                    "client": s.cell.client.label(),
                    "server": s.cell.server.label(),
                    "window": s.cell.window,
                    "ok": s.failure.is_none(),
                    "failure": s.failure,
                    "msg_per_s": sp(s.rate),
                    "msg_per_s_by_run": per_run,
                    "x_floor": sp(s.x_floor),
                    "p50_ms": sp(s.p50_ms),
                    "p99_ms": sp(s.p99_ms),
                    "client_cpu_us_per_msg": sp(s.client_cpu_us),
                    "server_cpu_us_per_msg": sp(s.server_cpu_us),
                    "client_startup_cpu_us": sp(s.client_start_us),
                    "client_cpu_us_per_msg_net_of_startup": sp(s.client_net_us),
                    "client_peak_rss_mb": sp(s.client_rss_mb),
                    "server_peak_rss_mb": sp(s.server_rss_mb),
                })
            })
            .collect();
        let mut head = head;
        head["rows"] = Value::Array(rows);
        head
    }
}

fn row(s: &Summary) -> String {
    let label = s.cell.label();
    if let Some(why) = &s.failure {
        if s.rate.is_none() {
            return format!("{label:<60} FAILED: {why}");
        }
    }
    let num = |v: Option<Spread>, digits: usize| match v {
        Some(v) => format!("{:.*}", digits, v.median),
        None => "-".into(),
    };
    let rate = s.rate.unwrap();
    let x = match s.x_floor {
        Some(x) => format!("{:.2} [{:.2}-{:.2}]", x.median, x.min, x.max),
        None => "-".into(),
    };
    let mut line = format!(
        "{label:<60} {:>9.0} {:>19} {x:>17} {:>7} {:>7} {:>8} {:>8} {:>6} {:>6} {:>9} {:>7}",
        rate.median,
        format!("{:.0}..{:.0}", rate.min, rate.max),
        num(s.p50_ms, 2),
        num(s.p99_ms, 2),
        num(s.client_cpu_us, 1),
        num(s.server_cpu_us, 1),
        num(s.client_rss_mb, 1),
        num(s.server_rss_mb, 1),
        num(s.client_start_us, 0),
        num(s.client_net_us, 2),
    );
    if let Some(why) = &s.failure {
        let _ = write!(line, "  ({why})");
    }
    line
}
