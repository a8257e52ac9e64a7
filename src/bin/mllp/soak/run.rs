//! `soak`'s run: the flags become a plan, the library runs it while the live view and the
//! metrics follow its updates, and the report is written, printed and judged into an exit code;
//! or `--merge` joins saved reports into one.

use super::args::SoakArgs;
use super::{render, view, words};
use crate::diag::{Diag, Fatal};
use crate::exit::{self, Exit, Observed};
use crate::output::soak::SoakEvent;
use anyhow::Context;
use mllp::client::ClientEvent;
use mllp::soak::{SoakOutcome, SoakPlan, SoakReport, SoakRun, SoakUpdate, StoppedBy};

pub fn run(args: SoakArgs, diag: &Diag) -> anyhow::Result<Exit> {
    if !args.merge.is_empty() {
        return merge(&args, diag);
    }
    let mut plan = match args.plan() {
        Ok(plan) => plan,
        Err(e) => return Ok(Fatal::new(Exit::Usage, format!("{e:#}")).report()),
    };
    let mode = view::Mode::choose(&args, diag);
    plan.sample_every = mode.every();
    plan.per_message = args.metrics.is_some();
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?;
    let outcome = runtime.block_on(watch(plan, &args, mode, diag));
    runtime.shutdown_timeout(std::time::Duration::from_secs(1));
    let outcome = outcome?;
    let observed = Observed {
        permanent: outcome.permanent,
        transient: outcome.transient,
        thresholds_missed: !outcome.report.passed(),
        ..Default::default()
    };
    let exit = exit::exit_for(observed);
    render::report_event(diag, &outcome.report, args.report.as_deref(), exit);
    Ok(exit)
}

/// Run the plan, showing its updates as they come (Ctrl-C stops generating), then write and
/// print the report.
async fn watch(
    plan: SoakPlan,
    args: &SoakArgs,
    mode: view::Mode,
    diag: &Diag,
) -> anyhow::Result<SoakOutcome> {
    if let Some(addr) = args.metrics {
        crate::prometheus::install(addr, None)?;
    }
    let mut view = view::View::new(mode, plan.connections, diag.clone());
    let mut run = SoakRun::start(plan).await.map_err(words::soak)?;
    let stop = run.stop_token();
    let interrupt = tokio::spawn(async move {
        if tokio::signal::ctrl_c().await.is_ok() {
            stop.cancel();
        }
    });
    while let Some(update) = run.next_update().await {
        if args.metrics.is_some() {
            crate::prometheus::soak::record(&update);
        }
        match update {
            SoakUpdate::Sample(sample) => view.draw(&sample),
            SoakUpdate::Connection { conn, event } => match event {
                ClientEvent::StateChange(t) => view.transition(conn, &t),
                ClientEvent::SecurityWarning(code) => view.security_warning(code.as_str()),
                _ => {}
            },
            SoakUpdate::Stopping(StoppedBy::Interrupt) if !diag.quiet => diag.say(
                || "mllp: interrupted: draining, then reporting".into(),
                &SoakEvent::Interrupted {
                    message: "draining, then reporting",
                },
            ),
            _ => {}
        }
    }
    view.finish();
    interrupt.abort();
    let outcome = run.finish().await?;
    let report = &outcome.report;
    if let Some(path) = &args.report {
        let text = serde_json::to_string_pretty(report)?;
        std::fs::write(path, text + "\n")
            .with_context(|| format!("writing --report {}", path.display()))?;
    }
    // A closed stdout loses only the copy for the reader who left: the run keeps its exit code.
    let _ = match args.json {
        true => crate::stdout::line(serde_json::to_string(report)?),
        false => crate::stdout::write_all(render::human(report).as_bytes()),
    };
    Ok(outcome)
}

/// `--merge a.json b.json`: one report of several, on stdout.
fn merge(args: &SoakArgs, diag: &Diag) -> anyhow::Result<Exit> {
    let mut reports = Vec::new();
    for path in &args.merge {
        match SoakReport::read(path) {
            Ok(report) => reports.push(report),
            Err(e) => return Ok(Fatal::new(Exit::Usage, e.to_string()).report()),
        }
    }
    let mut merged = match SoakReport::merge(&reports) {
        Ok(merged) => merged,
        Err(e) => return Ok(Fatal::new(Exit::Usage, e).report()),
    };
    merged.thresholds = args.thresholds().evaluate(&merged);
    // The verdict stands whether or not the reader is still there.
    let _ = crate::stdout::line(serde_json::to_string_pretty(&merged)?);
    let exit = if merged.passed() {
        Exit::Success
    } else {
        Exit::Thresholds
    };
    render::report_event(diag, &merged, None, exit);
    Ok(exit)
}
