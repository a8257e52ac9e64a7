//! What `diff` writes: each finding as it is found (lines for people, or `--json` records)
//! on stdout, and the summary (on stderr for people, the last record under `--json`).

use crate::output::diff::{DiffSummary, DifferenceRecord, FindingRecord, KeyRecord, SummaryEvent};
use crate::stdout::Out;
use mllp::diff::{Event, Key, Side, Summary};
use mllp::hl7::Path;
use std::io::{BufWriter, Write};

/// Writes the findings of one run.
pub struct Findings {
    out: BufWriter<Out>,
    json: bool,
    values: bool,
    key_paths: Vec<String>,
    /// Per key path: its value shown even under `--no-values` (the header's type and control
    /// ID, which every command shows; any other key is patient data).
    key_shown: Vec<bool>,
}

fn side_name(side: Side) -> &'static str {
    match side {
        Side::A => "A",
        Side::B => "B",
    }
}

/// A value for people: quoted and escaped when it is empty or holds spaces or controls.
fn shown(value: &str) -> String {
    let plain = !value.is_empty()
        && !value
            .chars()
            .any(|c| c.is_whitespace() || c.is_control() || c == '"');
    match plain {
        true => value.to_string(),
        false => format!("{value:?}"),
    }
}

impl Findings {
    pub fn new(json: bool, values: bool, key_paths: &[Path]) -> Findings {
        Findings {
            out: BufWriter::with_capacity(64 * 1024, Out),
            json,
            values,
            key_paths: key_paths.iter().map(Path::to_string).collect(),
            key_shown: key_paths
                .iter()
                .map(|p| values || (p.segment() == b"MSH" && matches!(p.field(), 9 | 10)))
                .collect(),
        }
    }

    /// The key's values, each `None` where it is not to be shown.
    fn key_values(&self, key: &Key) -> Vec<Option<String>> {
        let shown = self.key_shown.iter();
        key.values()
            .into_iter()
            .zip(shown)
            .map(|(v, &shown)| shown.then_some(v))
            .collect()
    }

    fn key_text(&self, key: &Key) -> String {
        let values = self.key_values(key);
        match values.as_slice() {
            [Some(one)] => shown(one),
            _ => self
                .key_paths
                .iter()
                .zip(&values)
                .map(|(p, v)| match v {
                    Some(v) => format!("{p}={}", shown(v)),
                    None => p.clone(),
                })
                .collect::<Vec<_>>()
                .join(" "),
        }
    }

    fn key_record(&self, key: &Key) -> KeyRecord<'_> {
        KeyRecord {
            paths: &self.key_paths,
            values: self.key_values(key),
        }
    }

    /// Write one finding; false once stdout takes no more.
    pub fn tell(&mut self, event: &Event<'_>) -> bool {
        let text = match self.json {
            true => crate::output::line(&self.record(event)),
            false => self.human(event),
        };
        writeln!(self.out, "{text}").is_ok()
    }

    fn record<'a>(&'a self, event: &'a Event<'a>) -> FindingRecord<'a> {
        match event {
            Event::Different {
                key,
                a,
                b,
                differences,
            } => FindingRecord::Different {
                key: self.key_record(key),
                a,
                b,
                differences: differences
                    .iter()
                    .map(|d| DifferenceRecord {
                        path: &d.path,
                        a: self.values.then_some(d.a.as_str()),
                        b: self.values.then_some(d.b.as_str()),
                    })
                    .collect(),
            },
            Event::Only {
                side: Side::A,
                key,
                label,
            } => FindingRecord::OnlyInA {
                key: self.key_record(key),
                message: label,
            },
            Event::Only {
                side: Side::B,
                key,
                label,
            } => FindingRecord::OnlyInB {
                key: self.key_record(key),
                message: label,
            },
            Event::Twice { side, key, label } => FindingRecord::KeyTwice {
                side: match side {
                    Side::A => "a",
                    Side::B => "b",
                },
                key: self.key_record(key),
                message: label,
            },
        }
    }

    fn human(&self, event: &Event<'_>) -> String {
        match event {
            Event::Different {
                key,
                a,
                b,
                differences,
            } => {
                let mut text = format!("{}  differs  {a}  {b}", self.key_text(key));
                let width = differences.iter().map(|d| d.path.len()).max().unwrap_or(0);
                for d in differences.iter() {
                    text.push_str("\n  ");
                    match self.values {
                        true => text.push_str(&format!(
                            "{:width$}  {} -> {}",
                            d.path,
                            shown(&d.a),
                            shown(&d.b)
                        )),
                        false => text.push_str(&d.path),
                    }
                }
                text
            }
            Event::Only { side, key, label } => {
                format!(
                    "{}  only in {}  {label}",
                    self.key_text(key),
                    side_name(*side)
                )
            }
            Event::Twice { side, key, label } => {
                format!(
                    "{}  twice in {}  {label}",
                    self.key_text(key),
                    side_name(*side)
                )
            }
        }
    }

    /// The summary: the last record under `--json`, else lines on stderr.
    pub fn finish(mut self, summary: &Summary, exit_code: u8, diag: &crate::diag::Diag) {
        if self.json {
            let record = DiffSummary {
                kind: "summary",
                counts: *summary,
                exit_code,
            };
            let _ = writeln!(self.out, "{}", crate::output::line(&record));
        }
        let _ = self.out.flush();
        if !self.json {
            let event = SummaryEvent {
                event: "diff_summary",
                counts: *summary,
                exit_code,
            };
            diag.say(|| human_summary(summary), &event);
        }
    }
}

/// The counts for people.
pub fn human_summary(s: &Summary) -> String {
    let mut text = format!(
        "{} the same, {} different, {} only in A, {} only in B",
        crate::diag::count(s.same, "pair"),
        s.different,
        s.only_in_a,
        s.only_in_b
    );
    if s.keys_twice_in_a + s.keys_twice_in_b > 0 {
        text.push_str(&format!(
            "; keys seen twice: {} in A, {} in B",
            s.keys_twice_in_a, s.keys_twice_in_b
        ));
    }
    if s.filtered_out_a + s.filtered_out_b > 0 {
        text.push_str(&format!(
            "; left out by --where: {} of A, {} of B",
            s.filtered_out_a, s.filtered_out_b
        ));
    }
    text
}
