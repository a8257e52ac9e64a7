//! `send --json` on stdout: one [`MessageRecord`] per message, in input order, then the
//! [`SummaryRecord`]; `send --dry-run --json`'s listing ([`DryRunRecord`]); and send's events on
//! stderr ([`SendEvent`]). Every field of a message record and of the summary is always present,
//! `null` when it does not apply.

mod event;

pub use event::SendEvent;

use crate::exit::Exit;
use mllp::ack::AckCode;
use mllp::cause::Cause;
use mllp::client::{Fate, FateCause, FateTally, Population};
use mllp::delivery::{Ending, Item, RunSummary};
use mllp::input::Message;
use serde::Serialize;
use std::borrow::Cow;
use std::io::Write;
use std::time::Duration;

/// The kind of a stdout record, its `type` field.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum RecordType {
    Message,
}

/// One message's final outcome, a line of `send --json`.
///
/// Its fields are declared in key order, so the record serializes straight into its line
/// ([`MessageRecord::write_line`]) with no map built per message, to the same bytes as
/// [`line()`](super::line).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct MessageRecord<'a> {
    /// The ACK payload, only with `--print-ack` (`null` when none came).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ack: Option<Option<Cow<'a, str>>>,
    /// The final ACK code (`CA` for committed-only).
    pub ack_code: Option<AckCode>,
    /// MSA-3 of an answer that did not accept the message.
    pub ack_text: Option<Cow<'a, str>>,
    /// How many times the message was written.
    pub attempts: u32,
    /// Payload size.
    pub bytes: usize,
    /// Why, for outcomes other than accepted and negative: a cause name.
    pub cause: Option<&'static str>,
    /// A finer reason where `cause` folds several (`app-ack-timeout`, `drain-timeout`, ...).
    pub cause_detail: Option<&'static str>,
    /// MSH-10 as sent.
    pub control_id: Option<String>,
    /// ERR-3 of an answer that did not accept the message.
    pub error_code: Option<Cow<'a, str>>,
    /// From the flush to the final answer, to a tenth of a millisecond.
    pub latency_ms: Option<f64>,
    /// The link it went over, from 0, in a run over several (`--connections`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub link: Option<usize>,
    /// MSH-10 as the input had it, only when the run gave the message a fresh one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub original_control_id: Option<String>,
    /// The population: `accepted`, `negative`, `committed-only`, `unknown-fate`,
    /// `never-delivered` or `refused`.
    pub outcome: Population,
    /// `file#n`, 1-based within the file; `-#n` for stdin.
    pub source: String,
    /// `message`.
    #[serde(rename = "type")]
    pub kind: RecordType,
}

impl<'a> MessageRecord<'a> {
    /// `item`'s record. `cause` is the run's own cause for the fate (a deadline, a stop), which
    /// wins over the fate's; `with_ack` carries the ACK itself (`--print-ack`).
    pub fn new(item: &Item, fate: &'a Fate, cause: Option<Cause>, with_ack: bool) -> Self {
        // An accepted message's record shows no MSA-3 or ERR-3: its ACK is not read again.
        let answer = fate
            .ack()
            .filter(|_| fate.population() != Population::Accepted)
            .and_then(|a| mllp::hl7::scan_ack(a.bytes()));
        MessageRecord {
            ack: with_ack.then(|| fate.ack().map(|a| String::from_utf8_lossy(a.bytes()))),
            ack_code: fate.ack_code(),
            ack_text: answer
                .as_ref()
                .and_then(|a| a.text)
                .map(String::from_utf8_lossy),
            attempts: item.attempts(),
            bytes: item.payload.len(),
            cause: mllp::delivery::shown_cause(fate, cause),
            cause_detail: fate.cause_detail().filter(|_| cause.is_none()),
            control_id: item.control_id(),
            error_code: answer
                .as_ref()
                .and_then(|a| a.error_code)
                .map(String::from_utf8_lossy),
            latency_ms: fate.latency().map(super::tenth_ms),
            link: None,
            original_control_id: item.original_control_id.as_deref().map(str::to_owned),
            outcome: fate.population(),
            source: item.label(),
            kind: RecordType::Message,
        }
    }

    /// The record and a newline, written straight into `out`: the keys as the literals they
    /// are, and a string that needs no escape copied as it is (serde's writer escapes every
    /// key and value byte by byte, most of a record's cost). The same bytes as [`line()`](super::line).
    pub fn write_line(&self, mut out: impl Write) -> std::io::Result<()> {
        let out = &mut out;
        out.write_all(b"{")?;
        if let Some(ack) = &self.ack {
            out.write_all(b"\"ack\":")?;
            opt_string(out, ack.as_deref())?;
            out.write_all(b",")?;
        }
        out.write_all(b"\"ack_code\":")?;
        opt_string(out, self.ack_code.map(AckCode::as_str))?;
        out.write_all(b",\"ack_text\":")?;
        opt_string(out, self.ack_text.as_deref())?;
        write!(
            out,
            ",\"attempts\":{},\"bytes\":{}",
            self.attempts, self.bytes
        )?;
        out.write_all(b",\"cause\":")?;
        opt_string(out, self.cause)?;
        out.write_all(b",\"cause_detail\":")?;
        opt_string(out, self.cause_detail)?;
        out.write_all(b",\"control_id\":")?;
        opt_string(out, self.control_id.as_deref())?;
        out.write_all(b",\"error_code\":")?;
        opt_string(out, self.error_code.as_deref())?;
        out.write_all(b",\"latency_ms\":")?;
        value(out, &self.latency_ms)?;
        if let Some(link) = self.link {
            write!(out, ",\"link\":{link}")?;
        }
        if let Some(original) = &self.original_control_id {
            out.write_all(b",\"original_control_id\":")?;
            string(out, original)?;
        }
        out.write_all(b",\"outcome\":")?;
        string(out, self.outcome.as_str())?;
        out.write_all(b",\"source\":")?;
        string(out, &self.source)?;
        out.write_all(b",\"type\":\"message\"}\n")
    }
}

/// A JSON string: copied between quotes when no byte of it needs an escape (JSON escapes
/// control characters, `"` and `\` only), otherwise through serde's escaping.
fn string(out: &mut impl Write, text: &str) -> std::io::Result<()> {
    if text.bytes().all(|b| b >= 0x20 && b != b'"' && b != b'\\') {
        out.write_all(b"\"")?;
        out.write_all(text.as_bytes())?;
        return out.write_all(b"\"");
    }
    value(out, text)
}

fn opt_string(out: &mut impl Write, text: Option<&str>) -> std::io::Result<()> {
    match text {
        Some(text) => string(out, text),
        None => out.write_all(b"null"),
    }
}

/// Any other value, as serde writes it.
fn value(out: &mut impl Write, value: &(impl Serialize + ?Sized)) -> std::io::Result<()> {
    serde_json::to_writer(out, value).map_err(std::io::Error::other)
}

/// The last line of `send --json`: the summary under `type: "summary"`.
#[derive(Debug, Clone, Serialize)]
#[serde(tag = "type", rename = "summary")]
pub struct SummaryRecord<'a> {
    #[serde(flatten)]
    pub summary: &'a SendSummary,
}

/// The run's totals, the last record of `send --json` (and the `summary` event on stderr).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SendSummary {
    /// Messages read.
    pub messages: u64,
    /// Messages written to the peer at least once (all but never-delivered and refused).
    pub written: u64,
    /// `accepted`, `negative`, `committed_only`, `unknown_fate`, `never_delivered`, `refused`
    /// (they add up to `messages`), and `by_code`: final answers by ACK code.
    #[serde(flatten)]
    pub fates: FateTally,
    /// Reconnect attempts.
    pub reconnects: u64,
    /// Messages written again.
    pub resent: u64,
    /// The run's duration, to a tenth of a millisecond.
    pub elapsed_ms: f64,
    /// Messages written per second, to one decimal.
    pub messages_per_second: f64,
    /// The populations add up to the messages read.
    pub accounting_ok: bool,
    /// The cause the client stopped reconnecting on.
    pub gave_up: Option<Cause>,
    /// Stopped by Ctrl-C or SIGTERM.
    pub interrupted: bool,
    /// `--timeout` ran out.
    pub timed_out: bool,
    /// The link's last failure when it had not connected again (the `gave_up` cause when the
    /// client gave up).
    pub last_failure: Option<Cause>,
    /// The code the run exits with.
    pub exit_code: u8,
    /// What would help, when the run gave up or its link failed last (the text the human
    /// summary shows).
    pub hint: Option<String>,
    /// The poison messages: each ended unknown-fate because the peer closed the connection
    /// before answering it, every time it was written alone.
    pub poison: Vec<PoisonMessage>,
    /// Each link's share, in a run over several (`--connections`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub links: Option<Vec<LinkFigures>>,
}

/// A poison message, as the summary names it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct PoisonMessage {
    /// `file#n`, as in [`MessageRecord::source`].
    pub source: String,
    /// MSH-10 as sent.
    pub control_id: Option<String>,
    /// How many times it was written.
    pub attempts: u32,
}

impl PoisonMessage {
    /// `item`, when `fate` makes it a poison message.
    pub fn of(item: &Item, fate: &Fate) -> Option<PoisonMessage> {
        matches!(
            fate,
            Fate::UnknownFate {
                cause: FateCause::Poison,
                ..
            }
        )
        .then(|| PoisonMessage {
            source: item.label(),
            control_id: item.control_id(),
            attempts: item.attempts(),
        })
    }
}

/// One link's share of a run over several.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct LinkFigures {
    /// From 0, as the records' `link`.
    pub link: usize,
    /// Messages routed to it.
    pub messages: u64,
    /// Their fates, as in the summary.
    #[serde(flatten)]
    pub fates: FateTally,
    pub reconnects: u64,
    pub resent: u64,
    /// The cause this link stopped reconnecting on.
    pub gave_up: Option<Cause>,
}

impl LinkFigures {
    pub fn new(link: usize, share: &mllp::delivery::LinkSummary) -> LinkFigures {
        LinkFigures {
            link,
            messages: share.totals.read,
            fates: share.totals.fates.clone(),
            reconnects: share.totals.reconnects,
            resent: share.totals.resent,
            gave_up: share.ending.gave_up,
        }
    }
}

/// What would help, as the summary says it: after the cause the run gave up on, or else the
/// link's last failure.
pub fn hint(ending: &Ending) -> Option<String> {
    let cause = ending.gave_up.or(ending.last_failure)?;
    Some(crate::hint::for_cause(cause).into_owned())
}

/// `messages` per second over `elapsed`, to one decimal; 0 for no time at all.
pub fn per_second(messages: u64, elapsed: Duration) -> f64 {
    let secs = elapsed.as_secs_f64();
    if secs > 0.0 {
        (messages as f64 / secs * 10.0).round() / 10.0
    } else {
        0.0
    }
}

impl SendSummary {
    /// The summary of `run`, which exits with `exit`.
    pub fn new(run: &RunSummary, exit: Exit) -> SendSummary {
        let RunSummary {
            totals,
            ending,
            elapsed,
        } = run;
        SendSummary {
            messages: totals.read,
            written: totals.written(),
            fates: totals.fates.clone(),
            reconnects: totals.reconnects,
            resent: totals.resent,
            elapsed_ms: super::tenth_ms(*elapsed),
            messages_per_second: per_second(totals.written(), *elapsed),
            accounting_ok: totals.adds_up(),
            gave_up: ending.gave_up,
            interrupted: ending.interrupted,
            timed_out: ending.timed_out,
            // Giving up was on a failure: the last one, said in both fields.
            last_failure: ending.last_failure.or(ending.gave_up),
            exit_code: exit.code(),
            hint: hint(ending),
            poison: Vec::new(),
            links: None,
        }
    }
}

fn lossy(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// One line of `send --dry-run --json`; `type` is `message` or `summary`.
#[derive(Debug, Clone, Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum DryRunRecord {
    /// A message as it would be sent.
    Message(DryRunMessage),
    /// What would be sent, in all.
    Summary {
        /// Always `true`: nothing was sent.
        dry_run: bool,
        /// Messages read.
        messages: u64,
        /// Their payload bytes.
        bytes: u64,
        /// The code the command exits with.
        exit_code: u8,
    },
}

/// A message as it would be sent.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct DryRunMessage {
    /// `file#n`, as in [`MessageRecord::source`].
    pub source: String,
    /// MSH-10.
    pub control_id: Option<String>,
    /// MSH-9.
    pub message_type: Option<String>,
    /// Payload size.
    pub bytes: u64,
}

impl DryRunMessage {
    /// `message` as the listing shows it.
    pub fn new(message: &Message) -> DryRunMessage {
        let scan = mllp::hl7::scan(&message.payload);
        let field = |f: Option<&[u8]>| f.filter(|v| !v.is_empty()).map(lossy);
        DryRunMessage {
            source: format!("{}#{}", message.source, message.index),
            control_id: field(scan.msh.as_ref().and_then(|m| m.control_id())),
            message_type: field(scan.msh.as_ref().and_then(|m| m.message_type())),
            bytes: message.payload.len() as u64,
        }
    }
}

impl DryRunRecord {
    /// The listing's total.
    pub fn summary(messages: u64, bytes: u64) -> DryRunRecord {
        DryRunRecord::Summary {
            dry_run: true,
            messages,
            bytes,
            exit_code: Exit::Success.code(),
        }
    }
}

#[cfg(test)]
mod tests;
