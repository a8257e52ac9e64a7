//! Per-message results on stdout: an aligned line each (coloured on a terminal), or one NDJSON
//! record each. The ACK payload only with `--print-ack`; MSH-10 and the ACK's
//! MSA-3 text appear here and nowhere else.

use super::SendArgs;
use crate::diag::Diag;
use crate::stdout::Out;
use indicatif::ProgressBar;
use mllp::client::{Fate, Population};
use mllp::delivery::Item;
use serde_json::{json, Value};
use std::io::{BufWriter, Write};

pub struct Output {
    json: bool,
    /// No per-message records (`--quiet`).
    quiet: bool,
    print_ack: bool,
    color: bool,
    label_width: usize,
    id_width: usize,
    out: BufWriter<Out>,
    /// The progress bar on stderr: stdout is written with it cleared, so a line never lands
    /// on or under a stale bar when both share a terminal.
    bar: Option<ProgressBar>,
}

/// Buffered bytes past which lines are written out before the next, with the bar cleared.
const FLUSH_AT: usize = 48 * 1024;

/// What one message's record says, whatever the format.
struct Record<'a> {
    label: String,
    control_id: Option<String>,
    fate: &'a Fate,
    cause: Option<&'a str>,
    /// The client's own reason when `cause` is the contract cause it folds into.
    cause_detail: Option<&'a str>,
    /// MSA-3 and ERR-3 of a negative or committed-only ACK.
    text: Option<String>,
    error_code: Option<String>,
}

impl Output {
    pub fn new(args: &SendArgs, diag: &Diag, label_width: usize) -> Output {
        Output {
            json: args.json,
            quiet: diag.quiet,
            print_ack: args.print_ack,
            color: diag.stdout_color && !args.json,
            label_width,
            id_width: 12,
            out: BufWriter::with_capacity(64 * 1024, Out),
            bar: None,
        }
    }

    /// Write around `bar` from now on.
    pub fn around(&mut self, bar: Option<ProgressBar>) {
        self.bar = bar;
    }

    pub fn json(&self) -> bool {
        self.json
    }

    /// One message's final outcome. `cause` overrides the fate's own cause name.
    pub fn message(&mut self, item: &Item, fate: &Fate, cause: Option<&str>) {
        if self.quiet {
            return;
        }
        // The buffer never fills and flushes by itself, under the bar.
        if self.out.buffer().len() > FLUSH_AT {
            self.flush();
        }
        let ack = fate.ack().and_then(|a| mllp::hl7::scan_ack(a.bytes()));
        let shows_text = !matches!(fate.population(), Population::Accepted);
        let lossy = |b: &[u8]| String::from_utf8_lossy(b).into_owned();
        let record = Record {
            label: item.label(),
            control_id: item.control_id(),
            fate,
            cause: cause.or(fate.contract_cause()),
            cause_detail: fate.cause_detail().filter(|_| cause.is_none()),
            text: ack
                .as_ref()
                .and_then(|a| a.text)
                .filter(|_| shows_text)
                .map(lossy),
            error_code: ack
                .as_ref()
                .and_then(|a| a.error_code)
                .filter(|_| shows_text)
                .map(lossy),
        };
        let _ = if self.json {
            let value = self.json_record(item, &record);
            writeln!(self.out, "{value}")
        } else {
            let line = self.human_line(&record);
            writeln!(self.out, "{line}")
        };
        if self.print_ack && !self.json {
            if let Some(ack) = fate.ack() {
                for segment in ack.bytes().split(|&b| b == b'\r' || b == b'\n') {
                    if !segment.is_empty() {
                        let _ = writeln!(self.out, "    {}", lossy(segment));
                    }
                }
            }
        }
    }

    fn json_record(&self, item: &Item, r: &Record<'_>) -> Value {
        let mut value = json!({
            "type": "message",
            "source": r.label,
            "control_id": r.control_id,
            "bytes": item.payload.len(),
            "outcome": r.fate.population().as_str(),
            "ack_code": r.fate.ack_code().map(|c| c.as_str()),
            "latency_ms": r.fate.latency().map(ms),
            "cause": r.cause,
            "cause_detail": r.cause_detail,
            "ack_text": r.text,
            "error_code": r.error_code,
            "attempts": item.resends + item.rewrites + 1,
        });
        if self.print_ack {
            value["ack"] = r
                .fate
                .ack()
                .map(|a| Value::String(String::from_utf8_lossy(a.bytes()).into_owned()))
                .unwrap_or(Value::Null);
        }
        value
    }

    fn human_line(&mut self, r: &Record<'_>) -> String {
        let id = r.control_id.as_deref().unwrap_or("-");
        self.id_width = self.id_width.max(id.len().min(40));
        let code = r.fate.ack_code().map_or("--", |c| c.as_str());
        let latency = r
            .fate
            .latency()
            .map_or_else(|| "-".to_string(), |d| format!("{:.1}ms", ms(d)));
        let sgr = match r.fate.population() {
            Population::Accepted => "32",
            Population::Negative => "31",
            _ => "33",
        };
        let code = if self.color {
            format!("\x1b[{sgr}m{code}\x1b[0m")
        } else {
            code.to_string()
        };
        let mut line = format!(
            "{:<lw$}  {:<iw$}  {code}  {latency:>8}",
            r.label,
            id,
            lw = self.label_width,
            iw = self.id_width
        );
        let population = r.fate.population();
        if population != Population::Accepted {
            line.push_str("  ");
            line.push_str(population.as_str());
            match (r.cause, r.cause_detail) {
                (Some(cause), Some(detail)) => line.push_str(&format!(" ({cause}: {detail})")),
                (Some(cause), None) => line.push_str(&format!(" ({cause})")),
                _ => {}
            }
        }
        if let Some(text) = &r.text {
            line.push_str(&format!(": {text}"));
        }
        if let Some(code) = &r.error_code {
            line.push_str(&format!(" [ERR {code}]"));
        }
        line
    }

    /// Flush what is buffered, so results show as they come when the run is slow.
    pub fn flush(&mut self) {
        if self.out.buffer().is_empty() {
            return;
        }
        let out = &mut self.out;
        let _ = match &self.bar {
            Some(bar) => bar.suspend(|| out.flush()),
            None => out.flush(),
        };
    }

    /// The summary record (`--json`, on stdout, also under `--quiet`).
    pub fn summary_record(&mut self, value: &Value) {
        let _ = writeln!(self.out, "{value}");
        self.flush();
    }
}

fn ms(d: std::time::Duration) -> f64 {
    (d.as_secs_f64() * 10_000.0).round() / 10.0
}
