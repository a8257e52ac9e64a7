//! What `deid` says on stderr: the report (replacements per path, never a value), and the
//! lines about keys.

use crate::diag::Diag;
use crate::output::deid::{DeidReport, KeyEvent};
use mllp::deid::Report;
use std::path::Path;

/// What one run did.
#[derive(Debug, Default)]
pub struct Done {
    pub read: u64,
    pub written: u64,
    pub filtered_out: u64,
    pub files: u64,
}

/// The report: messages read, written and left out, then each path's replacements.
pub fn report(diag: &Diag, done: &Done, report: &Report) {
    // Quiet keeps the summary line, not each path's count.
    let replaced: Vec<(String, u64)> = match diag.quiet {
        true => Vec::new(),
        false => report.counts().map(|(p, n)| (p.to_string(), n)).collect(),
    };
    let event = DeidReport {
        event: "deid_report",
        read: done.read,
        written: done.written,
        filtered_out: done.filtered_out,
        files: done.files,
        replaced: replaced.iter().cloned().collect(),
    };
    diag.say(
        || {
            let mut text = format!(
                "{} read, {} written",
                crate::diag::count(done.read, "message"),
                done.written
            );
            if done.files > 0 {
                text.push_str(&format!(" to {}", crate::diag::count(done.files, "file")));
            }
            if done.filtered_out > 0 {
                text.push_str(&format!(", {} left out by --where", done.filtered_out));
            }
            text.push_str(&format!("; {} values replaced", report.total()));
            let width = replaced.iter().map(|(p, _)| p.len()).max().unwrap_or(0);
            for (path, n) in &replaced {
                text.push_str(&format!("\n  {path:width$}  {n}"));
            }
            text
        },
        &event,
    );
}

pub fn new_key(diag: &Diag, path: &Path) {
    let event = KeyEvent {
        event: "key_written",
        file: path.display().to_string(),
    };
    diag.say(
        || {
            format!(
                "wrote a new key to {} (readable by you alone); keep it as safe as the data: \
                 the same key gives the same replacements",
                path.display()
            )
        },
        &event,
    );
}

pub fn open_key(diag: &Diag, path: &Path) {
    let event = KeyEvent {
        event: "key_file_open",
        file: path.display().to_string(),
    };
    diag.say(
        || {
            format!(
                "{} {} can be read by others than its owner; anyone with the key can test a \
                 guess at an original against its replacement (chmod 600 it)",
                diag.paint("warning:", "1;33"),
                path.display()
            )
        },
        &event,
    );
}
