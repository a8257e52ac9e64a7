//! `diff`'s run: both sides found, the smaller one indexed, the pairing through the library
//! with each finding written as it comes, and the exit code.

use super::args::DiffArgs;
use super::render::Findings;
use crate::diag::{Diag, Fatal};
use crate::exit::Exit;
use crate::sources::{self, Kind, Source};
use mllp::diff::{Comparer, Ignore, KeyPaths, Pairing, Side};
use mllp::hl7::Filters;
use mllp::input::SplitOptions;

pub fn run(args: DiffArgs, diag: &Diag) -> anyhow::Result<Exit> {
    Ok(compare(&args, diag).unwrap_or_else(|what| Fatal::new(Exit::Usage, what).report()))
}

/// The run's exit code, or the usage error that ends it.
fn compare(args: &DiffArgs, diag: &Diag) -> Result<Exit, String> {
    // An empty side (an empty file or directory) has no messages: the other side's are all
    // only on theirs.
    let side = |arg: &str, name: &str| -> Result<Vec<Source>, String> {
        match sources::collect(&[arg.to_string()], true) {
            Ok(found) => Ok(sources::without_strays(found, true, diag)),
            Err(mllp::input::InputError::EmptyDirectory { .. }) => Ok(Vec::new()),
            Err(e) => Err(format!("side {name}: {e}")),
        }
    };
    let a = side(&args.a, "A")?;
    let b = side(&args.b, "B")?;
    let stdin = |s: &[Source]| s.iter().any(|s| matches!(s.kind, Kind::Stdin));
    if stdin(&a) && stdin(&b) {
        return Err("only one side can be stdin (`-`)".into());
    }
    let size = |s: &[Source]| s.iter().fold(0u64, |n, s| n.saturating_add(s.size()));
    let pairing = Pairing {
        keys: KeyPaths::new(args.key.clone()),
        comparer: Comparer::new(Ignore::new(args.ignore.clone())).in_charset(args.charset),
        filters: Filters {
            filters: args.filters.clone(),
            charset: args.charset,
        },
    };
    let mut findings = Findings::new(args.json, !args.no_values, pairing.keys.paths());
    let split = SplitOptions::default();
    let (ma, mb) = (sources::chain(&a, split), sources::chain(&b, split));
    // The smaller side is held as keys; the other is read as it comes.
    let tell = |event: &mllp::diff::Event<'_>| findings.tell(event);
    let result = match size(&b) < size(&a) {
        true => pairing.run((Side::B, mb), (Side::A, ma), tell),
        false => pairing.run((Side::A, ma), (Side::B, mb), tell),
    };
    // The error names the side: `side A: ...`.
    let summary = result.map_err(|e| e.to_string())?;
    if !args.key.is_empty() {
        for (path, missing) in pairing.keys.missing().filter(|(_, n)| *n > 0) {
            diag.event(
                "warning",
                || {
                    format!(
                        "{} MLLP_KEY_MISSING: --key {path}: {} had no value there; check the path (is it in these messages?)",
                        diag.paint("warning:", "33"),
                        crate::diag::count(missing, "message"),
                    )
                },
                serde_json::json!({ "code": "MLLP_KEY_MISSING", "path": path.to_string(), "messages": missing }),
            );
        }
    }
    let exit = match summary.is_same() {
        true => Exit::Success,
        false => Exit::Negative,
    };
    // The reader left (`| head`) after a finding: the counts would be partial.
    if crate::stdout::is_closed() {
        return Ok(Exit::Negative);
    }
    findings.finish(&summary, exit.code(), diag);
    Ok(exit)
}
