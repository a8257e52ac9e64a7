//! How probe results look: an aligned phase table, a ping-style line, statistics, and JSON.
//! Everything here goes to stdout; none of it carries message bytes (MSH-10 is the one
//! per-message field shown).

use crate::exit::Exit;
use crate::output::probe::{HostResult, HostsRecord, ProbeRecord};
use mllp::probe::StatsSummary;
use mllp::probe::{Detail, PhaseReport, ProbeReport, TlsDetail};
use std::fmt::Write;

fn ms(value: f64) -> String {
    format!("{value:.1} ms")
}

/// The full table of one probe, then its verdict.
pub fn table(report: &ProbeReport) -> String {
    let mut out = String::new();
    let tls = if report.tls { " (TLS)" } else { "" };
    let _ = writeln!(out, "probe {}{tls}", report.target);
    for phase in &report.phases {
        let result = if phase.ok { "ok" } else { "FAILED" };
        let mut lines = phase_lines(phase);
        if let Some(error) = &phase.error {
            lines.insert(0, error.clone());
        }
        // A detail with nothing to say leaves no blank line behind.
        lines.retain(|line| !line.trim().is_empty());
        let first = lines.first().cloned().unwrap_or_default();
        let _ = writeln!(
            out,
            "  {:<8}{:>11}  {:<7}{first}",
            phase.name.as_str(),
            ms(phase.ms),
            result
        );
        for more in lines.iter().skip(1) {
            let _ = writeln!(out, "{:32}{more}", "");
        }
    }
    let verdict = &report.verdict;
    let cause = verdict.cause.map(|c| format!(" ({c})")).unwrap_or_default();
    let _ = writeln!(out, "verdict: {}{cause}", verdict.class.as_str());
    let _ = writeln!(out, "  {}", verdict.detail);
    let _ = write!(out, "  hint: {}", crate::hint::words(&verdict.hint));
    out
}

fn phase_lines(phase: &PhaseReport) -> Vec<String> {
    match &phase.detail {
        None => Vec::new(),
        Some(Detail::Resolve { addresses }) => vec![addresses.join(", ")],
        Some(Detail::Connect { address, failed }) => {
            let mut lines: Vec<String> = address.iter().cloned().collect();
            // A single failure is already the phase's error line.
            if address.is_none() && failed.len() < 2 {
                return lines;
            }
            lines.extend(
                failed
                    .iter()
                    .map(|f| format!("{} failed ({}): {}", f.address, f.cause, f.error)),
            );
            lines
        }
        Some(Detail::Tls(tls)) => tls_lines(tls),
        Some(Detail::Banner { silent: true, .. }) => {
            vec!["silent (reachable)".into()]
        }
        Some(Detail::Banner { peer, .. }) => vec![peer
            .map(|p| format!("{} bytes: {}", p.bytes, p.kind))
            .unwrap_or_default()],
        Some(Detail::Send { bytes, control_id }) => {
            vec![format!("{bytes} bytes, MSH-10 {control_id}")]
        }
        Some(Detail::Ack {
            ack_code,
            control_id_matches,
            ignored_frames,
        }) => {
            let mut line = match ack_code {
                Some(code) => format!(
                    "{code}, MSA-2 {}, round trip {}",
                    if *control_id_matches {
                        "matches"
                    } else {
                        "does not match"
                    },
                    ms(phase.ms)
                ),
                None => String::new(),
            };
            // A failed phase's error line already says how many it ignored.
            if *ignored_frames > 0 && ack_code.is_some() {
                let frames = crate::diag::count(*ignored_frames as u64, "other frame");
                let _ = write!(line, " ({frames} ignored)");
            }
            vec![line]
        }
    }
}

fn tls_lines(tls: &TlsDetail) -> Vec<String> {
    let mut lines = Vec::new();
    if let (Some(version), Some(suite)) = (&tls.version, &tls.cipher_suite) {
        let verified = if tls.verified {
            "verified"
        } else {
            "NOT verified (--insecure)"
        };
        lines.push(format!("{version} {suite}, {verified}"));
    }
    if let Some(cert) = &tls.peer_certificate {
        lines.push(format!("subject  {}", cert.subject));
        lines.push(format!("issuer   {}", cert.issuer));
        let matched = match tls.name_matched {
            _ if tls.pinned => "(not checked: this very certificate is in --ca)".to_string(),
            Some(true) => format!("(matches {})", tls.server_name),
            Some(false) => format!("(does NOT match {})", tls.server_name),
            None => String::new(),
        };
        let names = if cert.sans.is_empty() {
            "none".to_string()
        } else {
            cert.sans.join(", ")
        };
        lines.push(format!("names    {names} {matched}"));
        let days = crate::diag::count(cert.days_left.unsigned_abs(), "day");
        let left = if cert.days_left < 0 {
            format!("expired {days} ago")
        } else {
            format!("{days} left")
        };
        lines.push(format!("expires  {} ({left})", cert.not_after));
    }
    lines.push(format!(
        "client certificate: {}",
        tls.client_certificate.as_str()
    ));
    lines
}

/// One ping-style line.
pub fn line(seq: u32, report: &ProbeReport) -> String {
    let mut out = format!("{seq}: {}", report.verdict.class.as_str());
    if let Some(cause) = report.verdict.cause {
        let _ = write!(out, " {cause}: {}", report.verdict.detail);
        return out;
    }
    if let Some(code) = &report.verdict.ack_code {
        let _ = write!(out, " {code}");
    }
    for (name, value) in report.timings() {
        let _ = write!(out, "  {name} {}", ms(value));
    }
    out
}

/// The statistics after repeated probes.
pub fn stats_table(target: &str, summary: &StatsSummary) -> String {
    let mut out = format!(
        "--- {target}: {}, {} ok, {} failed ({:.1}% loss)\n",
        crate::diag::count(summary.probes as u64, "probe"),
        summary.ok,
        summary.failed,
        summary.loss_percent
    );
    let _ = write!(
        out,
        "  {:<8}{:>10}{:>10}{:>10}{:>10}  (ms)",
        "phase", "min", "median", "p99", "max"
    );
    for name in &summary.order {
        let s = &summary.phases[name];
        let _ = write!(
            out,
            "\n  {name:<8}{:>10.1}{:>10.1}{:>10.1}{:>10.1}",
            s.min, s.median, s.p99, s.max
        );
    }
    out
}

/// One probe as JSON (`probe --json`), with `seq` when repeated.
pub fn json(report: &ProbeReport, seq: Option<u32>) -> String {
    crate::output::line(&ProbeRecord::probe(report, seq))
}

pub fn json_summary(summary: &StatsSummary, exit: Exit, target: Option<&str>) -> String {
    crate::output::line(&ProbeRecord::summary(summary, exit, target))
}

/// After several hosts: which answered, one line each, in the order given.
pub fn hosts_table(hosts: &[HostResult]) -> String {
    let answered = hosts.iter().filter(|h| h.answered()).count();
    let positive = hosts.iter().filter(|h| h.ok).count();
    let mut out = format!(
        "--- {answered} of {} hosts answer, {positive} positively",
        hosts.len()
    );
    let width = hosts.iter().map(|h| h.target.len()).max().unwrap_or(0);
    for host in hosts {
        let verdict = match (host.ok, host.cause) {
            (true, _) => "ok".to_string(),
            (false, Some(cause)) => format!("FAILED {} ({cause})", host.class.as_str()),
            (false, None) => format!("FAILED {} (exit {})", host.class.as_str(), host.exit_code),
        };
        let _ = write!(out, "\n  {:<width$}  {verdict}", host.target);
    }
    out
}

/// After several hosts, as JSON: `{"type":"hosts",...}`.
pub fn json_hosts(hosts: &[HostResult], exit: Exit) -> String {
    crate::output::line(&ProbeRecord::Hosts(HostsRecord {
        answered: hosts.iter().filter(|h| h.answered()).count(),
        positive: hosts.iter().filter(|h| h.ok).count(),
        hosts,
        exit_code: exit.code(),
    }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use mllp::probe::PhaseName;

    fn ack_phase(ignored_frames: usize) -> PhaseReport {
        PhaseReport {
            name: PhaseName::Ack,
            ok: true,
            ms: 1.0,
            error: None,
            detail: Some(Detail::Ack {
                ack_code: Some("AA".into()),
                control_id_matches: true,
                ignored_frames,
            }),
        }
    }

    #[test]
    fn frames_ignored_before_the_answer_are_counted_in_words() {
        let one = phase_lines(&ack_phase(1)).join("\n");
        assert!(one.ends_with("(1 other frame ignored)"), "{one}");
        let two = phase_lines(&ack_phase(2)).join("\n");
        assert!(two.ends_with("(2 other frames ignored)"), "{two}");
        assert!(!phase_lines(&ack_phase(0)).join("\n").contains("ignored"));
        // A failed ack phase's error line says it; the detail line does not say it again.
        let failed = PhaseReport {
            ok: false,
            error: Some("no ACK within 3s (1 other frame ignored)".into()),
            detail: Some(Detail::Ack {
                ack_code: None,
                control_id_matches: false,
                ignored_frames: 1,
            }),
            ..ack_phase(1)
        };
        assert!(!phase_lines(&failed).join("\n").contains("ignored"));
    }
}
