//! `check`'s run: the inputs read a message at a time (a batch kept whole, so its envelope is
//! checked), each message's findings written, the summary, and the exit code.

use super::args::{load_profile, CheckArgs};
use super::render::{line, value_text, CheckRecord};
use crate::diag::{count, paint, Diag, Fatal};
use crate::exit::Exit;
use crate::inspect::{batch_admitted, open_or_refuse};
use mllp::hl7::{Charset, Message};
use mllp::hl7::{Checker, Finding, Severity};
use serde_json::json;
use std::io::{BufWriter, Write};

/// How many messages had an error, or only warnings.
#[derive(Debug, Default)]
struct Tally {
    messages: u64,
    with_errors: u64,
    with_warnings: u64,
}

impl Tally {
    /// A message alone and its findings.
    fn message(&mut self, findings: &[Finding]) {
        self.messages += 1;
        self.count(findings.iter());
    }

    /// A batch's messages the filters `admitted` (each from 1 in a finding), and its findings:
    /// each message counted with its own. An envelope's error counts as a message with errors
    /// when no message of the batch has one, so the exit says there is one.
    fn batch(&mut self, admitted: &[bool], findings: &[Finding]) {
        let before = (self.with_errors, self.with_warnings);
        for (i, _) in admitted.iter().enumerate().filter(|(_, a)| **a) {
            self.messages += 1;
            self.count(findings.iter().filter(|f| f.message == Some(i + 1)));
        }
        let envelope = findings.iter().filter(|f| f.message.is_none());
        let inner_errors = self.with_errors > before.0;
        let counted = (self.with_errors, self.with_warnings) != before;
        if envelope.clone().any(|f| f.severity == Severity::Error) && !inner_errors {
            self.with_errors += 1;
        } else if envelope.count() > 0 && !counted {
            self.with_warnings += 1;
        }
    }

    fn count<'a>(&mut self, mut findings: impl Iterator<Item = &'a Finding>) {
        let mut warned = false;
        for f in findings.by_ref() {
            if f.severity == Severity::Error {
                self.with_errors += 1;
                return;
            }
            warned = true;
        }
        if warned {
            self.with_warnings += 1;
        }
    }
}

pub fn run(args: CheckArgs, diag: &Diag) -> anyhow::Result<Exit> {
    let input = &args.input;
    let profile = match args.profile.as_deref().map(load_profile).transpose() {
        Ok(profile) => profile,
        Err(err) => return Ok(Fatal::new(Exit::Usage, format!("--profile {err}")).report()),
    };
    let checker = Checker::new(profile);
    // A batch whole: its envelope is part of what is checked.
    let mut inputs = match open_or_refuse(input, input.split(true), "check") {
        Ok(inputs) => inputs,
        Err(exit) => return Ok(exit),
    };
    let mut out = BufWriter::with_capacity(64 * 1024, crate::stdout::Out);
    let filters = input.filters();
    let mut tally = Tally::default();
    let mut closed = false;
    for item in inputs.by_ref() {
        let Some(message) = item.or_say(diag, "checked", || out.flush()) else {
            continue;
        };
        let mut findings = checker.check(&message.payload);
        match batch_admitted(&filters, &message.payload) {
            Some(admitted) => {
                // A batch: its envelope, and the messages the filters admit, each counted.
                findings.retain(|f| f.message.is_none_or(|m| admitted[m - 1]));
                tally.batch(&admitted, &findings);
            }
            None => tally.message(&findings),
        }
        if findings.is_empty() {
            continue;
        }
        let charset = Charset::for_message(&Message::new(&message.payload), input.charset)
            .unwrap_or(Charset::UTF_8);
        let text = findings_text(&args, diag, &message.label(), &findings, charset);
        closed = out.write_all(text.as_bytes()).is_err();
        if closed {
            break;
        }
    }
    let code = exit(&tally, inputs.broken);
    // When the reader went away (`| head`), there is no one to tell the counts.
    if !closed {
        summarize(&args, diag, &tally, inputs.filtered, code, out);
    }
    Ok(code)
}

/// One message's findings, a line each: for people, or JSON records.
fn findings_text(
    args: &CheckArgs,
    diag: &Diag,
    label: &str,
    findings: &[Finding],
    charset: Charset,
) -> String {
    let paint = |text: &str, sgr: &str| paint(diag.stdout_color && !args.json, text, sgr);
    let mut text = String::new();
    for finding in findings {
        let value = value_text(finding, charset, diag.verbose > 0);
        if args.json {
            let record = CheckRecord::Finding {
                source: label,
                message: finding.message,
                path: &finding.at,
                code: finding.code.as_str(),
                severity: finding.severity,
                text: &finding.what,
                value,
            };
            text.push_str(&serde_json::to_string(&record).unwrap_or_default());
        } else {
            text.push_str(&line(label, finding, value.as_deref(), paint));
        }
        text.push('\n');
    }
    text
}

/// The counts at the end: a JSON record on stdout, or a line on stderr.
fn summarize(
    args: &CheckArgs,
    diag: &Diag,
    tally: &Tally,
    filtered: u64,
    code: Exit,
    mut out: BufWriter<crate::stdout::Out>,
) {
    if args.json {
        let summary = CheckRecord::Summary {
            messages: tally.messages,
            with_errors: tally.with_errors,
            with_warnings: tally.with_warnings,
            filtered,
            exit_code: code.code(),
        };
        let mut text = serde_json::to_string(&summary).unwrap_or_default();
        text.push('\n');
        let _ = out.write_all(text.as_bytes());
    }
    let _ = out.flush();
    if args.json {
        return;
    }
    let mut said = format!(
        "checked {}: {} with errors, {} with warnings only",
        count(tally.messages, "message"),
        tally.with_errors,
        tally.with_warnings
    );
    if filtered > 0 {
        said.push_str(&format!("; --where left out {filtered}"));
    }
    diag.event(
        "checked",
        || said.clone(),
        json!({
            "messages": tally.messages,
            "with_errors": tally.with_errors,
            "with_warnings": tally.with_warnings,
            "filtered": filtered,
        }),
    );
}

/// 2 when an input could not be read whole, else 1 when a message has an error, else 0.
fn exit(tally: &Tally, broken_inputs: u64) -> Exit {
    if broken_inputs > 0 {
        Exit::Usage
    } else if tally.with_errors > 0 {
        Exit::Negative
    } else {
        Exit::Success
    }
}
