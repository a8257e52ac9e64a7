//! `probe`'s run: the configuration from the flags, the ping-style loop on a runtime of its
//! own, each result rendered as it comes, the statistics, and the exit code. Several hosts are
//! probed in turn, then one record says which answered.

use super::args::ProbeArgs;
use super::render;
use crate::diag::Diag;
use crate::exit::{exit_for, Exit};
use crate::output::probe::HostResult;
use anyhow::Context;
use mllp::outcome::Observed;
use mllp::probe::{ProbeConfig, VerdictClass};

pub fn run(args: ProbeArgs, diag: &Diag) -> anyhow::Result<Exit> {
    let configs = args.configs()?;
    if configs
        .iter()
        .any(|c| c.tls.as_ref().is_some_and(|t| t.verify_disabled))
    {
        diag.security_warning(
            "MLLP_TLS_VERIFY_DISABLED",
            "--insecure: the server certificate is not verified",
        );
    }
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .context("starting the runtime")?;
    Ok(runtime.block_on(probe_hosts(&args, &configs)))
}

/// Each host in turn; with several, which answered, and the worst exit of theirs.
async fn probe_hosts(args: &ProbeArgs, configs: &[ProbeConfig]) -> Exit {
    let several = configs.len() > 1;
    let mut observed = Observed::default();
    let mut results = Vec::with_capacity(configs.len());
    for config in configs {
        let (host, complete) = probe_loop(args, config, several).await;
        observed = observed.merge(host.observed);
        if !complete {
            // Nobody reads the results any more, or Ctrl-C: what was seen decides.
            return exit_for(observed);
        }
        results.push(host.result);
    }
    let exit = exit_for(observed);
    if several {
        let text = match args.json {
            true => render::json_hosts(&results, exit),
            false => render::hosts_table(&results),
        };
        let _ = crate::stdout::line(text);
    }
    exit
}

/// What one host's probes came to.
struct HostDone {
    observed: Observed,
    result: HostResult,
}

/// What the host's probes came to, and whether the series ran to its end (not cut short by a
/// reader gone or Ctrl-C).
async fn probe_loop(args: &ProbeArgs, config: &ProbeConfig, several: bool) -> (HostDone, bool) {
    let repeated = args.count > 1;
    let interrupted = async {
        let _ = tokio::signal::ctrl_c().await;
    };
    let mut last = (VerdictClass::Ok, None);
    let series = mllp::probe::repeat(
        config,
        args.count,
        args.interval,
        interrupted,
        |seq, report| {
            last = (report.verdict.class, report.verdict.cause);
            let text = match (args.json, repeated) {
                (true, _) => render::json(report, repeated.then_some(seq)),
                (false, false) => render::table(report),
                (false, true) if several => {
                    format!("{} {}", report.target, render::line(seq, report))
                }
                (false, true) => render::line(seq, report),
            };
            // Nobody reads the results any more: stop probing, keep what was seen.
            crate::stdout::line(text).is_ok()
        },
    )
    .await;
    let exit = exit_for(series.observed);
    let target = config.target();
    if !series.abandoned && (repeated || series.stats.probes() == 0) {
        let summary = series.stats.summary();
        let text = if args.json {
            render::json_summary(&summary, exit, several.then_some(target.as_str()))
        } else {
            render::stats_table(&target, &summary)
        };
        let _ = crate::stdout::line(text);
    }
    let complete = !series.abandoned && series.stats.probes() == args.count as usize;
    let done = HostDone {
        observed: series.observed,
        result: HostResult {
            ok: exit == Exit::Success,
            exit_code: exit.code(),
            class: last.0,
            cause: last.1,
            target,
        },
    };
    (done, complete)
}
