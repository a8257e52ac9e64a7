//! Per-message results on stdout: an aligned line each (coloured on a terminal), or one NDJSON
//! record each. The ACK payload only with `--print-ack`; MSH-10 and the ACK's
//! MSA-3 text appear here and nowhere else.

use super::SendArgs;
use crate::diag::Diag;
use crate::stdout::Out;
use indicatif::ProgressBar;
use mllp::client::{Fate, Population};
use mllp::delivery::Item;
use serde_json::Value;
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
    /// The line being built, kept to save an allocation per message.
    line: String,
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
            line: String::new(),
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
            self.json_record(item, &record)
        } else {
            self.human_line(&record)
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

    /// The record as one JSON line, written straight into the buffer: keys in the sorted order a
    /// JSON object of them is printed in, strings and numbers through serde_json's own writers,
    /// with no map built per message.
    fn json_record(&mut self, item: &Item, r: &Record<'_>) -> std::io::Result<()> {
        let out = &mut self.out;
        out.write_all(b"{")?;
        if self.print_ack {
            let ack = r.fate.ack().map(|a| String::from_utf8_lossy(a.bytes()));
            json_field(out, b"\"ack\":", &ack)?;
            out.write_all(b",")?;
        }
        json_field(
            out,
            b"\"ack_code\":",
            &r.fate.ack_code().map(|c| c.as_str()),
        )?;
        json_field(out, b",\"ack_text\":", &r.text)?;
        json_field(out, b",\"attempts\":", &(item.resends + item.rewrites + 1))?;
        json_field(out, b",\"bytes\":", &item.payload.len())?;
        json_field(out, b",\"cause\":", &r.cause)?;
        json_field(out, b",\"cause_detail\":", &r.cause_detail)?;
        json_field(out, b",\"control_id\":", &r.control_id)?;
        json_field(out, b",\"error_code\":", &r.error_code)?;
        json_field(out, b",\"latency_ms\":", &r.fate.latency().map(ms))?;
        json_field(out, b",\"outcome\":", &r.fate.population().as_str())?;
        json_field(out, b",\"source\":", &r.label)?;
        out.write_all(b",\"type\":\"message\"}\n")
    }

    /// The aligned line, built in a buffer kept from one message to the next.
    fn human_line(&mut self, r: &Record<'_>) -> std::io::Result<()> {
        use std::fmt::Write as _;
        let id = r.control_id.as_deref().unwrap_or("-");
        self.id_width = self.id_width.max(id.len().min(40));
        let code = r.fate.ack_code().map_or("--", |c| c.as_str());
        let line = &mut self.line;
        line.clear();
        let _ = write!(
            line,
            "{:<lw$}  {:<iw$}  ",
            r.label,
            id,
            lw = self.label_width,
            iw = self.id_width
        );
        if self.color {
            let sgr = match r.fate.population() {
                Population::Accepted => "32",
                Population::Negative => "31",
                _ => "33",
            };
            let _ = write!(line, "\x1b[{sgr}m{code}\x1b[0m");
        } else {
            line.push_str(code);
        }
        line.push_str("  ");
        // The latency right-aligned in 8 columns, written in place.
        let start = line.len();
        let _ = match r.fate.latency() {
            Some(d) => write!(line, "{:.1}ms", ms(d)),
            None => write!(line, "-"),
        };
        let width = line.len() - start;
        if width < 8 {
            line.insert_str(start, &"        "[width..]);
        }
        let population = r.fate.population();
        if population != Population::Accepted {
            line.push_str("  ");
            line.push_str(population.as_str());
            let _ = match (r.cause, r.cause_detail) {
                (Some(cause), Some(detail)) => write!(line, " ({cause}: {detail})"),
                (Some(cause), None) => write!(line, " ({cause})"),
                _ => Ok(()),
            };
        }
        if let Some(text) = &r.text {
            let _ = write!(line, ": {text}");
        }
        if let Some(code) = &r.error_code {
            let _ = write!(line, " [ERR {code}]");
        }
        line.push('\n');
        self.out.write_all(line.as_bytes())
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

/// `key` (`"name":`, with the comma before it when one is due), then the value as JSON.
fn json_field(
    out: &mut impl Write,
    key: &[u8],
    value: &impl serde::Serialize,
) -> std::io::Result<()> {
    out.write_all(key)?;
    serde_json::to_writer(&mut *out, value).map_err(std::io::Error::other)
}

fn ms(d: std::time::Duration) -> f64 {
    (d.as_secs_f64() * 10_000.0).round() / 10.0
}
