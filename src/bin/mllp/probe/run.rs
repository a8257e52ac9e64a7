//! `probe`'s run: the configuration from the flags, the ping-style loop on a runtime of its
//! own, each result rendered as it comes, the statistics, and the exit code.

use super::args::ProbeArgs;
use super::render;
use crate::diag::Diag;
use crate::exit::{exit_for, Exit};
use anyhow::Context;
use mllp::probe::ProbeConfig;

pub fn run(args: ProbeArgs, diag: &Diag) -> anyhow::Result<Exit> {
    let config = args.config()?;
    if config.tls.as_ref().is_some_and(|t| t.verify_disabled) {
        diag.security_warning(
            "MLLP_TLS_VERIFY_DISABLED",
            "--insecure: the server certificate is not verified",
        );
    }
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .context("starting the runtime")?;
    Ok(runtime.block_on(probe_loop(&args, &config)))
}

async fn probe_loop(args: &ProbeArgs, config: &ProbeConfig) -> Exit {
    let repeated = args.count > 1;
    let interrupted = async {
        let _ = tokio::signal::ctrl_c().await;
    };
    let series = mllp::probe::repeat(
        config,
        args.count,
        args.interval,
        interrupted,
        |seq, report| {
            let text = match (args.json, repeated) {
                (true, _) => render::json(report, repeated.then_some(seq)),
                (false, false) => render::table(report),
                (false, true) => render::line(seq, report),
            };
            // Nobody reads the results any more: stop probing, keep what was seen.
            crate::stdout::line(text).is_ok()
        },
    )
    .await;
    let exit = exit_for(series.observed);
    if !series.abandoned && (repeated || series.stats.probes() == 0) {
        let summary = series.stats.summary();
        let text = if args.json {
            render::json_summary(&summary, exit)
        } else {
            render::stats_table(&config.target(), &summary)
        };
        let _ = crate::stdout::line(text);
    }
    exit
}
