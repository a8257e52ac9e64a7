//! The run's summary for people (the record is `mllp::output::send::SendSummary`) and its exit
//! code, from the library's totals and ending.

use crate::exit::{self, Exit, Observed};
use mllp::cause::{Cause, Class};
use mllp::client::Population;
use mllp::delivery::{Ending, Totals};
use mllp::input::InputSource;
use mllp::output::send::per_second;
use std::time::Duration;

/// Width of the `source#n` column: the longest source name plus `#` and a few digits.
pub fn label_width(sources: &[InputSource]) -> usize {
    let longest = sources.iter().map(|s| s.name().len()).max().unwrap_or(1);
    (longest + 4).min(60)
}

/// The exit code: 5 then 4 then 3 then 1; 130 after Ctrl-C; 3 when the
/// accounting does not close (a bug, reported as such before this is called).
pub fn decide(tally: &Totals, ending: Ending) -> Exit {
    if ending.interrupted {
        return Exit::Interrupted;
    }
    if !tally.adds_up() {
        return Exit::UnknownFate;
    }
    let undelivered = tally.count(Population::NeverDelivered) + tally.count(Population::Refused);
    let unknown = tally.count(Population::UnknownFate) + tally.count(Population::CommittedOnly);
    let link_failed = undelivered + unknown > 0;
    // An ACK-timeout close is our own decision about a written message, not a connection
    // failure: with reconnects off it answers as the same peer does with them on (3).
    let gave_up = ending.gave_up.filter(|&c| c != Cause::AckTimeout);
    let class = gave_up.map(Cause::class);
    let observed = Observed {
        permanent: link_failed && class == Some(Class::Permanent),
        // Never delivered without a give-up (a duplicate control ID, resends exhausted):
        // trying later may work.
        transient: (link_failed && class == Some(Class::Transient))
            || (undelivered > 0 && ending.gave_up.is_none()),
        unknown_fate: unknown > 0,
        negative: tally.count(Population::Negative) > 0,
        thresholds_missed: false,
    };
    match exit::for_delivery(observed) {
        Exit::Success | Exit::Negative if ending.input_failed || ending.abandoned => Exit::Usage,
        exit => exit,
    }
}

/// The summary for people, on stderr.
/// Laid out for an 80-column terminal: lines break between items, never inside a word.
pub fn human(tally: &Totals, elapsed: Duration, ending: Ending) -> String {
    use crate::diag::{pack, TEXT_WIDTH};
    let populations: Vec<String> = Population::ALL
        .iter()
        .map(|p| format!("{} {}", tally.count(*p), p.as_str()))
        .collect();
    let codes: Vec<String> = tally
        .fates
        .by_code
        .iter()
        .map(|(code, n)| format!("{code} {n}"))
        .collect();
    let mut lines = vec![format!(
        "sent {} in {:.2}s ({} msg/s)",
        crate::diag::count(tally.read, "message"),
        elapsed.as_secs_f64(),
        per_second(tally.read, elapsed),
    )];
    lines.extend(pack(&populations, TEXT_WIDTH, "  ", ", "));
    let counts = [
        format!(
            "by code: {}",
            if codes.is_empty() {
                "none".to_string()
            } else {
                codes.join(", ")
            }
        ),
        format!("reconnects: {}", tally.reconnects),
        format!("resent: {}", tally.resent),
    ];
    lines.extend(pack(&counts, TEXT_WIDTH, "  ", "; "));
    let mut text = lines.join("\n");
    if let Some(cause) = ending.gave_up {
        text.push_str(&format!(
            "\n  gave up: {cause} ({}): {}",
            cause.class(),
            cause.hint()
        ));
    }
    if ending.interrupted {
        text.push_str("\n  interrupted: reading stopped at Ctrl-C");
    }
    if ending.timed_out {
        text.push_str("\n  timed out: --timeout ran out; nothing more was sent");
    }
    if let (None, Some(cause)) = (ending.gave_up, ending.last_failure) {
        text.push_str(&format!(
            "\n  last failure: {cause} ({}): {}",
            cause.class(),
            cause.hint()
        ));
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;
    use mllp::ack::AckCode;
    use mllp::client::{AckPayload, Fate, FateCause};

    fn tally(fates: &[Fate]) -> Totals {
        let mut t = Totals {
            read: fates.len() as u64,
            ..Default::default()
        };
        for f in fates {
            t.record(f);
        }
        t
    }

    fn answered(code: AckCode) -> Fate {
        let ack = AckPayload::new(Default::default());
        let latency = Duration::from_millis(1);
        if code.is_positive() {
            Fate::Accepted { code, ack, latency }
        } else {
            Fate::Negative { code, ack, latency }
        }
    }

    fn unknown() -> Fate {
        Fate::UnknownFate {
            cause: FateCause::Link(Cause::AckTimeout),
            flushed_at: std::time::SystemTime::now(),
            elapsed: Duration::from_millis(5),
            bytes: 10,
        }
    }

    fn never(cause: Cause) -> Fate {
        Fate::NeverDelivered {
            cause: FateCause::Link(cause),
        }
    }

    #[test]
    fn exit_codes_follow_the_precedence() {
        let none = Ending::default();
        let (aa, ae) = (answered(AckCode::AA), answered(AckCode::AE));
        assert_eq!(
            decide(&tally(std::slice::from_ref(&aa)), none),
            Exit::Success
        );
        assert_eq!(
            decide(&tally(&[aa.clone(), ae.clone()]), none),
            Exit::Negative
        );
        assert_eq!(
            decide(&tally(&[ae.clone(), unknown()]), none),
            Exit::UnknownFate
        );
        let refused = Ending {
            gave_up: Some(Cause::ConnectionRefused),
            ..none
        };
        let t = tally(&[ae, unknown(), never(Cause::ConnectionRefused)]);
        assert_eq!(decide(&t, refused), Exit::Transient);
        let tls = Ending {
            gave_up: Some(Cause::TlsVerify),
            ..none
        };
        assert_eq!(decide(&t, tls), Exit::Permanent);
        // A give-up after every message was answered does not fail the run.
        assert_eq!(decide(&tally(&[aa]), refused), Exit::Success);
        let interrupted = Ending {
            interrupted: true,
            ..none
        };
        assert_eq!(decide(&t, interrupted), Exit::Interrupted);
        // Closed on an ACK timeout (reconnects off): unknown fate, not a transient give-up.
        let ack_timeout = Ending {
            gave_up: Some(Cause::AckTimeout),
            ..none
        };
        let closed = Fate::NeverDelivered {
            cause: FateCause::Closed,
        };
        let t = tally(&[unknown(), closed]);
        assert_eq!(decide(&t, ack_timeout), Exit::UnknownFate);
    }

    #[test]
    fn a_count_that_does_not_close_is_exit_3() {
        let mut t = tally(&[answered(AckCode::AA)]);
        t.read = 2;
        assert!(!t.adds_up());
        assert_eq!(decide(&t, Ending::default()), Exit::UnknownFate);
    }
}
