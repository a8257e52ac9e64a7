//! Per-message results on stdout: an aligned line each (coloured on a terminal), or one NDJSON
//! record each. The ACK payload only with `--print-ack`; MSH-10 and the ACK's
//! MSA-3 text appear here and nowhere else.

use super::args::SendArgs;
use crate::diag::Diag;
use crate::output::send::{MessageRecord, PoisonMessage, SendSummary, SummaryRecord};
use crate::stdout::Out;
use indicatif::ProgressBar;
use mllp::cause::Cause;
use mllp::client::{Fate, Population};
use mllp::delivery::Item;
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
    /// The poison messages so far, for the summary (the first `POISON_NAMED`), and how many
    /// more there were.
    poison: Vec<PoisonMessage>,
    poison_more: u64,
}

/// Poison messages the summary names one by one; past these it counts them.
const POISON_NAMED: usize = 100;

/// Buffered bytes past which lines are written out before the next, with the bar cleared.
const FLUSH_AT: usize = 48 * 1024;

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
            poison: Vec::new(),
            poison_more: 0,
        }
    }

    /// Write around `bar` from now on.
    pub fn around(&mut self, bar: Option<ProgressBar>) {
        self.bar = bar;
    }

    pub fn json(&self) -> bool {
        self.json
    }

    /// One message's final outcome, and the link it went over in a run over several. `cause`
    /// overrides the fate's own cause.
    pub fn message_on(
        &mut self,
        link: Option<usize>,
        item: &Item,
        fate: &Fate,
        cause: Option<Cause>,
    ) {
        if let Some(poison) = PoisonMessage::of(item, fate) {
            match self.poison.len() < POISON_NAMED {
                true => self.poison.push(poison),
                false => self.poison_more += 1,
            }
        }
        if self.quiet {
            return;
        }
        // The buffer never fills and flushes by itself, under the bar.
        if self.out.buffer().len() > FLUSH_AT {
            self.flush();
        }
        let mut record = MessageRecord::new(item, fate, cause, self.print_ack && self.json);
        record.link = link;
        let _ = if self.json {
            // Straight into the buffer: no map is built per message.
            record.write_line(&mut self.out)
        } else {
            self.human_line(&record)
        };
        if self.print_ack && !self.json {
            if let Some(ack) = fate.ack() {
                for segment in ack.bytes().split(|&b| b == b'\r' || b == b'\n') {
                    if !segment.is_empty() {
                        let _ = writeln!(self.out, "    {}", String::from_utf8_lossy(segment));
                    }
                }
            }
        }
    }

    /// The aligned line, built in a buffer kept from one message to the next.
    fn human_line(&mut self, r: &MessageRecord<'_>) -> std::io::Result<()> {
        use std::fmt::Write as _;
        let id = r.control_id.as_deref().unwrap_or("-");
        self.id_width = self.id_width.max(id.len().min(40));
        let code = r.ack_code.map_or("--", |c| c.as_str());
        let line = &mut self.line;
        line.clear();
        let _ = write!(
            line,
            "{:<lw$}  {:<iw$}  ",
            r.source,
            id,
            lw = self.label_width,
            iw = self.id_width
        );
        if self.color {
            let sgr = match r.outcome {
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
        let _ = match r.latency_ms {
            Some(ms) => write!(line, "{ms:.1}ms"),
            None => write!(line, "-"),
        };
        let width = line.len() - start;
        if width < 8 {
            line.insert_str(start, &"        "[width..]);
        }
        if r.outcome != Population::Accepted {
            line.push_str("  ");
            line.push_str(r.outcome.as_str());
            let _ = match (r.cause, r.cause_detail) {
                (Some(cause), Some(detail @ "poison")) => {
                    let times = crate::diag::count(u64::from(r.attempts), "time");
                    write!(line, " ({cause}: {detail}, written {times})")
                }
                (Some(cause), Some(detail)) => write!(line, " ({cause}: {detail})"),
                (Some(cause), None) => write!(line, " ({cause})"),
                _ => Ok(()),
            };
        }
        if let Some(text) = &r.ack_text {
            let _ = write!(line, ": {text}");
        }
        if let Some(code) = &r.error_code {
            let _ = write!(line, " [ERR {code}]");
        }
        line.push('\n');
        self.out.write_all(line.as_bytes())
    }

    /// Whether lines wait in the buffer.
    pub fn holds_lines(&self) -> bool {
        !self.out.buffer().is_empty()
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

    /// The poison messages met, the first ones named, and how many more.
    pub fn poison(&self) -> (&[PoisonMessage], u64) {
        (&self.poison, self.poison_more)
    }

    /// The summary record (`--json`, on stdout, also under `--quiet`).
    pub fn summary_record(&mut self, summary: &SendSummary) {
        let record = crate::output::line(&SummaryRecord { summary });
        let _ = writeln!(self.out, "{record}");
        self.flush();
    }
}
