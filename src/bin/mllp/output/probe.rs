//! `probe --json` on stdout: one [`ProbeRecord::Probe`] per probe, and after repeated probes a
//! [`ProbeRecord::Summary`] with the statistics and the exit code.

use crate::exit::Exit;
use mllp::cause::Cause;
use mllp::probe::StatsSummary;
use mllp::probe::{Detail, PhaseName, PhaseReport, ProbeReport, Verdict, VerdictClass};
use serde::Serialize;
use std::borrow::Cow;

/// One line of `probe --json`; `type` is `probe` or `summary`.
#[derive(Debug, Clone, Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum ProbeRecord<'a> {
    /// One probe.
    Probe(ProbeResult<'a>),
    /// After several probes (`--count`): their statistics.
    Summary(ProbeSummary<'a>),
    /// After probing several hosts (`--host A --host B`): which of them answered.
    Hosts(HostsRecord<'a>),
}

/// Which of several hosts answered, in the order given, and the exit code of the whole.
#[derive(Debug, Clone, Serialize)]
pub struct HostsRecord<'a> {
    /// Hosts whose last probe got an answer, positive or negative.
    pub answered: usize,
    /// Hosts whose every probe passed (answered positively).
    pub positive: usize,
    /// Each host's result.
    pub hosts: &'a [HostResult],
    /// The code the command exits with: the worst of the hosts'.
    pub exit_code: u8,
}

/// One host's result among several.
#[derive(Debug, Clone, Serialize)]
pub struct HostResult {
    /// `host:port` as probed.
    pub target: String,
    /// Every probe of it passed.
    pub ok: bool,
    /// The code a probe of it alone would exit with.
    pub exit_code: u8,
    /// The verdict's class of its last probe.
    pub class: VerdictClass,
    /// The failure's cause, when its last probe failed.
    pub cause: Option<Cause>,
}

impl HostResult {
    /// Its last probe got an answer (a negative one included).
    pub fn answered(&self) -> bool {
        matches!(self.class, VerdictClass::Ok | VerdictClass::Negative)
    }
}

/// One probe.
#[derive(Debug, Clone, Serialize)]
pub struct ProbeResult<'a> {
    /// The probe's number (from 1), only with `--count` above 1.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub seq: Option<u32>,
    /// `host:port` as probed.
    pub target: &'a str,
    /// Whether TLS was used.
    pub tls: bool,
    /// The verdict is `ok` and the ACK (if any) was positive.
    pub ok: bool,
    /// `resolve`, `connect`, `tls`, `send`, `ack`, in order, as far as the probe got.
    pub phases: Vec<Phase<'a>>,
    /// `class` (`ok`, `negative`, `transient`, `permanent`), `cause`, `hint`, `detail`, `ack_code`.
    pub verdict: VerdictRecord<'a>,
}

/// How the probe ended, its hint worded as the table says it.
#[derive(Debug, Clone, Serialize)]
pub struct VerdictRecord<'a> {
    /// `ok`, `negative`, `transient` or `permanent`.
    pub class: VerdictClass,
    /// The failure's cause, when it failed.
    pub cause: Option<Cause>,
    /// What to do, in one line, with the flags that do it.
    pub hint: Cow<'static, str>,
    /// What was seen, in one line.
    pub detail: &'a str,
    /// MSA-1 of the ACK, when one came.
    pub ack_code: Option<&'a str>,
}

impl<'a> VerdictRecord<'a> {
    fn of(verdict: &'a Verdict) -> Self {
        VerdictRecord {
            class: verdict.class,
            cause: verdict.cause,
            hint: crate::hint::words(&verdict.hint),
            detail: &verdict.detail,
            ack_code: verdict.ack_code.as_deref(),
        }
    }
}

/// One phase: `name`, `ok`, `ms`, `error` when it failed, the phase's own findings, and
/// `banner` in the phase the banner wait followed.
#[derive(Debug, Clone, Serialize)]
pub struct Phase<'a> {
    /// `name`, `ok`, `ms`, `error`, and the phase's findings ([`Detail`]).
    #[serde(flatten)]
    pub phase: &'a PhaseReport,
    /// The banner wait after this phase (connect, or tls).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub banner: Option<Banner<'a>>,
}

/// The banner wait, inside the phase it followed.
#[derive(Debug, Clone, Serialize)]
pub struct Banner<'a> {
    /// No unsolicited bytes came (or those that came were tolerated).
    pub ok: bool,
    /// How long it listened, in milliseconds.
    #[serde(serialize_with = "mllp::duration::microsecond_ms")]
    pub ms: f64,
    /// What went wrong, when it did.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<&'a str>,
    /// `silent`, and `peer`: what the bytes looked like (HTTP, SSH, ...).
    #[serde(flatten)]
    pub detail: &'a Option<Detail>,
}

/// The statistics after repeated probes, and the exit code.
#[derive(Debug, Clone, Serialize)]
pub struct ProbeSummary<'a> {
    /// `host:port`, when several hosts were probed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub target: Option<&'a str>,
    /// `probes`, `ok`, `failed`, `loss_percent`, and per phase name its `count`, `min`,
    /// `median`, `p99` and `max` in milliseconds (`phases`).
    #[serde(flatten)]
    pub stats: &'a StatsSummary,
    /// The code the command exits with.
    pub exit_code: u8,
}

impl<'a> ProbeRecord<'a> {
    /// One probe; `seq` when probes repeat.
    pub fn probe(report: &'a ProbeReport, seq: Option<u32>) -> ProbeRecord<'a> {
        let mut phases = Vec::with_capacity(report.phases.len());
        for phase in &report.phases {
            if phase.name != PhaseName::Banner {
                phases.push(Phase {
                    phase,
                    banner: None,
                });
                continue;
            }
            let banner = Banner {
                ok: phase.ok,
                ms: phase.ms,
                error: phase.error.as_deref(),
                detail: &phase.detail,
            };
            if let Some(before) = phases.last_mut() {
                before.banner = Some(banner);
            }
        }
        ProbeRecord::Probe(ProbeResult {
            seq,
            target: &report.target,
            tls: report.tls,
            ok: report.ok(),
            phases,
            verdict: VerdictRecord::of(&report.verdict),
        })
    }

    /// The statistics, and the exit code they come to.
    pub fn summary(
        stats: &'a StatsSummary,
        exit: Exit,
        target: Option<&'a str>,
    ) -> ProbeRecord<'a> {
        ProbeRecord::Summary(ProbeSummary {
            target,
            stats,
            exit_code: exit.code(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::output::line;
    use mllp::cause::Hint;
    use mllp::probe::ProbeStats;

    fn phase(name: PhaseName, detail: Option<Detail>) -> PhaseReport {
        PhaseReport {
            name,
            ok: true,
            ms: 1.23456,
            error: None,
            detail,
        }
    }

    #[test]
    fn a_probe_folds_its_banner_into_the_phase_before() {
        let report = ProbeReport {
            target: "h:1".into(),
            tls: false,
            phases: vec![
                phase(PhaseName::Connect, None),
                phase(
                    PhaseName::Banner,
                    Some(Detail::Banner {
                        silent: true,
                        peer: None,
                    }),
                ),
            ],
            verdict: Verdict {
                class: VerdictClass::Transient,
                cause: Some(Cause::AckTimeout),
                hint: Hint::SendOneMessage,
                detail: "d".into(),
                ack_code: None,
            },
            negative: false,
            unknown_fate: true,
        };
        assert_eq!(
            line(&ProbeRecord::probe(&report, Some(2))),
            concat!(
                r#"{"ok":false,"phases":[{"banner":{"ms":1.235,"ok":true,"peer":null,"silent":true},"#,
                r#""ms":1.235,"name":"connect","ok":true}],"seq":2,"target":"h:1","tls":false,"#,
                r#""type":"probe","verdict":{"ack_code":null,"cause":"ack-timeout","class":"transient","#,
                r#""detail":"d","hint":"add --send to exchange one test message: only an ACK shows the "#,
                r#"port speaks MLLP"}}"#
            )
        );
        let once = line(&ProbeRecord::probe(&report, None));
        assert!(!once.contains("seq"), "{once}");
    }

    #[test]
    fn the_summary_keeps_its_field_names() {
        let mut stats = ProbeStats::new();
        stats.record(true, [("ack", 2.0)]);
        let summary = stats.summary();
        assert_eq!(
            line(&ProbeRecord::summary(&summary, Exit::Success, None)),
            concat!(
                r#"{"exit_code":0,"failed":0,"loss_percent":0.0,"ok":1,"#,
                r#""phases":{"ack":{"count":1,"max":2.0,"median":2.0,"min":2.0,"p99":2.0}},"#,
                r#""probes":1,"type":"summary"}"#
            )
        );
    }
}
