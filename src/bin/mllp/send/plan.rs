//! `send`'s plan: the flags turned into the options of the input, the link and the run, with
//! no I/O. A combination of flags that cannot work is refused here, before anything is read.

use super::args::{CorrelateArg, PaceArg, SendArgs};
use crate::diag::Fatal;
use crate::exit::Exit;
use crate::netargs;
use mllp::client::{ClientOptions, Correlation, OnBackpressure, Window};
use mllp::hl7::Filters;
use mllp::input::{ControlIds, InputOptions, SplitOptions, StoreFilter};
use mllp::pace::RecordedGaps;
use mllp::target::Target;
use std::path::PathBuf;
use std::time::Duration;

/// What `send` will do, from its flags alone.
#[derive(Debug)]
pub struct Plan {
    /// The first `--host`, empty for a dry run without one.
    pub host: String,
    pub port: u16,
    /// `host:port`, for the lines that say where the link goes.
    pub endpoint: String,
    /// When reconnecting stops, for the first failure's line.
    pub gives_up: String,
    /// How the input is split and checked.
    pub input: InputOptions,
    /// `--where`: which messages are sent.
    pub filters: Filters,
    /// `--from-db`: the rows to send again.
    pub store: Option<Replay>,
    /// The link's options, checked.
    pub client: ClientOptions,
    /// `--rate`: messages a second, at most.
    pub rate: Option<f64>,
    /// `--timeout`: the whole run's time, input checking included.
    pub timeout: Option<Duration>,
}

/// `--from-db`: the store, its rows, and with `--pace original` the recorded gaps.
#[derive(Debug)]
pub struct Replay {
    pub file: PathBuf,
    pub filter: StoreFilter,
    pub gaps: Option<RecordedGaps>,
}

/// The plan for `args`, or the refusal to report (nothing has been read or sent yet).
pub fn plan(args: &SendArgs, verbose: bool) -> Result<Plan, Fatal> {
    let refused =
        |err: &dyn std::fmt::Display| Fatal::new(Exit::Usage, err).then("nothing was sent");
    let (host, port) = match args.host.first() {
        Some(target) => {
            netargs::endpoint(target, args.port, args.origin).map_err(|e| refused(&e))?
        }
        // Only a dry run goes without a host.
        None => (
            String::new(),
            args.port.unwrap_or(mllp::target::DEFAULT_PORT),
        ),
    };
    if args.connections > 1 && args.order_key.is_none() {
        return Err(refused(&format!(
            "--connections {} needs --order-key, which says what order is kept: \
             --order-key PID-3 (or any field path, PID-3.1) keeps each patient's messages in \
             file order; --order-key none sends each connection's share in file order, with no \
             order across connections",
            args.connections
        )));
    }
    let filters = Filters {
        filters: args.filters.clone(),
        charset: None,
    };
    let store = args.from_db.as_ref().map(|file| Replay {
        file: file.clone(),
        filter: StoreFilter {
            since: args.since,
            until: args.until,
            message_type: args.message_type.clone(),
            control_id: args.control_id.clone(),
            statuses: args.status.clone(),
            select: filters.clone(),
        },
        gaps: (args.pace == Some(PaceArg::Original))
            .then(|| RecordedGaps::new(args.speed, args.max_gap)),
    });
    let client = client_options(args, verbose).map_err(|err| Fatal::new(Exit::Usage, err))?;
    Ok(Plan {
        endpoint: Target {
            host: host.clone(),
            port: Some(port),
        }
        .to_string(),
        host,
        port,
        gives_up: args.link.gives_up(),
        input: input_options(args),
        filters,
        store,
        client,
        rate: args.rate,
        timeout: args.timeout,
    })
}

fn input_options(args: &SendArgs) -> InputOptions {
    InputOptions {
        split: SplitOptions {
            raw: args.raw,
            batch: args.batch,
            max_message: usize::try_from(args.max_frame_size).unwrap_or(usize::MAX),
        },
        max_input: args.max_input,
        stream: args.stream,
        control_ids: if args.fresh_control_ids {
            ControlIds::fresh_now()
        } else {
            ControlIds::AsGiven
        },
    }
}

/// The link's options from the flags; `Err` names what does not fit together.
fn client_options(args: &SendArgs, verbose: bool) -> Result<ClientOptions, String> {
    let mut options = args.link.settings().client_options();
    options.correlation = match args.correlate {
        CorrelateArg::Fifo => Correlation::Fifo,
        CorrelateArg::ControlId => Correlation::ControlId,
    };
    options.window = Window {
        count: Some(args.window),
        bytes: args.window_bytes.map(|b| b.min(usize::MAX as u64) as usize),
    };
    options.on_backpressure = OnBackpressure::Wait;
    options.pipeline = !args.no_pipeline;
    options.event_capacity = 4096;
    options.max_resends = args.max_resends;
    options.at_least_once = args.at_least_once;
    options.max_poison_closes = args.max_poison_closes;
    options.retry_on = args.retry_on.clone();
    if args.mllp2 {
        options.release = mllp::framing::Release::Two;
    }
    options.validate().map_err(|err| err.to_string())?;
    options.write_events = verbose;
    Ok(options)
}

#[cfg(test)]
mod tests {
    use super::plan;
    use crate::cli::{Cli, Command};
    use clap::Parser;
    use mllp::client::Correlation;

    fn args(flags: &[&str]) -> Box<super::SendArgs> {
        let cli = Cli::try_parse_from(["mllp", "send"].iter().chain(flags)).expect("flags parse");
        match cli.command {
            Command::Send(args) => args,
            _ => unreachable!("a send command"),
        }
    }

    #[test]
    fn flags_become_the_links_and_the_inputs_options() {
        let plan = plan(
            &args(&[
                "--host",
                "lab",
                "--port",
                "2600",
                "--window",
                "8",
                "--correlate",
                "fifo",
            ]),
            false,
        )
        .expect("a plan");
        assert_eq!(plan.endpoint, "lab:2600");
        assert_eq!(plan.client.correlation, Correlation::Fifo);
        assert_eq!(plan.client.window.count, Some(8));
        assert!(plan.client.pipeline);
        assert!(plan.store.is_none());
    }

    #[test]
    fn several_connections_without_an_order_key_are_refused_before_any_input_is_read() {
        let refused = plan(
            &args(&["--host", "lab", "--connections", "2", "/nonexistent"]),
            false,
        )
        .expect_err("refused");
        assert!(
            format!("{refused:?}").contains("--order-key"),
            "{refused:?}"
        );
    }

    #[test]
    fn a_replay_keeps_its_rows_and_with_pace_original_the_gaps() {
        let plan = plan(
            &args(&["--host", "lab", "--from-db", "r.db", "--pace", "original"]),
            false,
        )
        .expect("a plan");
        let store = plan.store.expect("a replay");
        assert_eq!(store.file.to_str(), Some("r.db"));
        assert!(store.gaps.is_some());
    }
}
