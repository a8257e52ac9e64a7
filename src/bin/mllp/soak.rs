//! `mllp soak`: flags, a validated plan, the run (embedded listener or a real peer, optionally
//! behind the chaos proxy), the report, and the exit code.

mod args;
mod monitor;
mod plan;
mod summary;
mod view;

use crate::diag::{Diag, Fatal};
use crate::exit::{self, Exit, Observed};
pub use args::SoakArgs;
use mllp::soak::SoakReport;

pub fn run(args: SoakArgs, diag: &Diag) -> anyhow::Result<Exit> {
    if !args.merge.is_empty() {
        return merge(&args, diag);
    }
    let plan = match plan::Plan::from_args(&args, diag) {
        Ok(plan) => plan,
        Err(e) => return Ok(Fatal::new(Exit::Usage, format!("{e:#}")).report()),
    };
    let report_path = plan.report_path.clone();
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?;
    let outcome = runtime.block_on(plan::execute(plan, diag));
    runtime.shutdown_timeout(std::time::Duration::from_secs(1));
    let outcome = outcome?;
    let observed = Observed {
        permanent: outcome.permanent,
        transient: outcome.transient,
        thresholds_missed: !outcome.report.accounting_ok || !outcome.report.thresholds_ok(),
        ..Default::default()
    };
    let exit = exit::for_soak(observed);
    summary::report_event(diag, &outcome.report, report_path.as_deref(), exit);
    Ok(exit)
}

/// `--merge a.json b.json`: one report of several, on stdout.
fn merge(args: &SoakArgs, diag: &Diag) -> anyhow::Result<Exit> {
    let mut reports = Vec::new();
    for path in &args.merge {
        let text = match std::fs::read_to_string(path) {
            Ok(text) => text,
            Err(e) => {
                let message = format!("reading {}: {e}", path.display());
                return Ok(Fatal::new(Exit::Usage, message).report());
            }
        };
        match serde_json::from_str::<SoakReport>(&text) {
            Ok(report) => reports.push(report),
            Err(e) => {
                let message = format!("{} is not a soak report: {e}", path.display());
                return Ok(Fatal::new(Exit::Usage, message).report());
            }
        }
    }
    let mut merged = match SoakReport::merge(&reports) {
        Ok(merged) => merged,
        Err(e) => return Ok(Fatal::new(Exit::Usage, e).report()),
    };
    merged.thresholds = args.thresholds().evaluate(&merged);
    // The verdict stands whether or not the reader is still there.
    let _ = crate::stdout::line(serde_json::to_string_pretty(&merged)?);
    let exit = if !merged.accounting_ok || !merged.thresholds_ok() {
        Exit::Thresholds
    } else {
        Exit::Success
    };
    summary::report_event(diag, &merged, None, exit);
    Ok(exit)
}
