//! send's events on stderr under `--log-format json`: notes about the run, `-v` steps, and
//! `--events` lines about the link.

use super::SendSummary;
use mllp::ack::AckCode;
use mllp::cause::{Cause, Class};
use mllp::client::{ClientEvent, State};
use mllp::delivery::RunNote;
use mllp::transport::Move;
use mllp::warning::Warning;
use serde::Serialize;

/// One send event; `event` is the variant's name in snake case.
#[derive(Debug, Clone, Serialize)]
#[serde(tag = "event", rename_all = "snake_case")]
pub enum SendEvent<'a> {
    /// Reading the input failed part way; no more is read.
    InputError {
        /// The input error: file, line, what was wrong.
        message: String,
    },
    /// `--timeout` ran out: nothing more is sent.
    RunTimeout,
    /// Ctrl-C or SIGTERM: nothing more is sent (the rest of the input is reported), what was
    /// written drains.
    Interrupted {
        /// Always `true`: a second signal stops at once.
        draining: bool,
        /// `SIGINT` or `SIGTERM`, when the signal is known.
        signal: Option<&'static str>,
    },
    /// The failure the client gave up on.
    GaveUp {
        /// The cause name (`connection-refused`, `tls-verify`, ...).
        cause: Cause,
        /// The failure in the client's words (addresses, OS or TLS errors; never payload).
        detail: &'a str,
    },
    /// A message could not be written to `--failed-out`.
    FailedOutError {
        /// The file that could not be written.
        file: &'a str,
        /// The OS error.
        error: String,
    },
    /// The populations do not add up to the messages read: a bug.
    InternalError {
        /// Messages read.
        read: u64,
        /// Messages with a fate.
        settled: u64,
    },
    /// The run's totals (the summary record without `type`).
    Summary(&'a SendSummary),
    /// `-v`: connecting to the endpoint.
    Connecting {
        /// `host:port`.
        endpoint: &'a str,
    },
    /// Connected (under `-v`, or after a failure was said).
    Connected {
        /// `host:port`.
        endpoint: &'a str,
    },
    /// `-v`: an answer as it settles a message.
    Ack {
        /// MSH-10 of the message answered.
        control_id: Option<&'a str>,
        /// MSA-1 of the answer.
        ack_code: AckCode,
        /// From the flush to the answer, in milliseconds.
        latency_ms: Option<f64>,
    },
    /// The link failed: every failure under `-v`, else the first of each outage.
    LinkFailure {
        /// `host:port`.
        endpoint: &'a str,
        /// The cause name.
        cause: Cause,
        /// `transient` or `permanent`.
        class: Class,
        /// The link had been up: it was lost, rather than never made.
        connected_before: bool,
    },
    /// The link moved to the next host: connects to `from` failed, or reconnecting gave up on it.
    Failover {
        /// `host:port` left.
        from: &'a str,
        /// `host:port` the next connect goes to.
        to: &'a str,
    },
    /// The link went back to the first host, the failback time after leaving it.
    Failback {
        /// `host:port` left.
        from: &'a str,
        /// The first host.
        to: &'a str,
    },
    /// A reconnect attempt after a backoff (`-v`, `--events`).
    Reconnecting {
        /// `host:port` the link last tried.
        endpoint: &'a str,
        /// The attempt's number, from 1.
        attempt: u32,
        /// The backoff before it.
        delay_ms: u64,
    },
    /// `-v`: a message written.
    Written {
        /// Its MSH-10.
        control_id: Option<&'a str>,
        /// Frame bytes written.
        bytes: usize,
    },
    /// `--events`: a transition of the link.
    StateChange {
        /// `host:port` of the connection the transition is about.
        endpoint: &'a str,
        /// The state left (`CONNECTING`, `CONNECTED`, ...).
        from: State,
        /// The state entered.
        to: State,
        /// Why, in words.
        reason: String,
    },
    /// `--events`: a link error and its class.
    LinkError {
        /// `host:port` of the connection that failed.
        endpoint: &'a str,
        /// The cause name.
        cause: Cause,
        /// `transient` or `permanent`.
        class: Class,
    },
    /// A tolerated deviation: `code`, and `byte_offset` where it applies.
    Warning(Warning),
    /// `--events`: any other client event, by name only.
    ClientEvent {},
}

impl<'a> SendEvent<'a> {
    /// The event a run note is said as.
    pub fn note(note: &'a RunNote) -> SendEvent<'a> {
        match note {
            RunNote::InputError(error) => SendEvent::InputError {
                message: error.to_string(),
            },
            RunNote::TimedOut => SendEvent::RunTimeout,
            RunNote::Interrupted => SendEvent::Interrupted {
                draining: true,
                signal: None,
            },
            RunNote::GaveUp(failure) => SendEvent::GaveUp {
                cause: failure.cause,
                detail: &failure.detail,
            },
            RunNote::FailedOutWrite { file, error } => SendEvent::FailedOutError {
                file,
                error: error.to_string(),
            },
        }
    }

    /// The `--events` line of a client event of the connection to `endpoint`. Security
    /// warnings are shared diagnostics ([`crate::output::diag::Diagnostic::SecurityWarning`]),
    /// not send events.
    pub fn client(event: &'a ClientEvent, endpoint: &'a str) -> SendEvent<'a> {
        match event {
            ClientEvent::Host(turn) => match &turn.moved {
                None => SendEvent::Connecting {
                    endpoint: &turn.endpoint,
                },
                Some(Move::Failover { from }) => SendEvent::Failover {
                    from,
                    to: &turn.endpoint,
                },
                Some(Move::Failback { from }) => SendEvent::Failback {
                    from,
                    to: &turn.endpoint,
                },
            },
            ClientEvent::StateChange(t) => SendEvent::StateChange {
                endpoint,
                from: t.from,
                to: t.to,
                reason: t.reason.to_string(),
            },
            ClientEvent::Reconnecting { attempt, delay } => SendEvent::Reconnecting {
                endpoint,
                attempt: *attempt,
                delay_ms: delay.as_millis() as u64,
            },
            ClientEvent::Error { cause, class } => SendEvent::LinkError {
                endpoint,
                cause: *cause,
                class: *class,
            },
            ClientEvent::Warning(w) => SendEvent::Warning(*w),
            _ => SendEvent::ClientEvent {},
        }
    }
}
