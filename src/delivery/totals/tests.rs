//! What a run observed, from its fates and how it ended.

use super::*;
use crate::ack::AckCode;
use crate::client::{AckPayload, FateCause};

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

/// Only the facts named, the rest unobserved.
fn facts(set: &[&str]) -> Observed {
    let has = |name| set.contains(&name);
    Observed {
        permanent: has("permanent"),
        transient: has("transient"),
        unknown_fate: has("unknown_fate"),
        negative: has("negative"),
        interrupted: has("interrupted"),
        unaccounted: has("unaccounted"),
        input_failed: has("input_failed"),
        thresholds_missed: false,
    }
}

#[test]
fn a_run_observes_what_its_fates_and_ending_say() {
    let none = Ending::default();
    let (aa, ae) = (answered(AckCode::AA), answered(AckCode::AE));
    assert_eq!(tally(std::slice::from_ref(&aa)).observed(none), facts(&[]));
    let t = tally(&[aa.clone(), ae.clone()]);
    assert_eq!(t.observed(none), facts(&["negative"]));
    let t = tally(&[ae.clone(), unknown()]);
    assert_eq!(t.observed(none), facts(&["negative", "unknown_fate"]));
    let refused = Ending {
        gave_up: Some(Cause::ConnectionRefused),
        ..none
    };
    let t = tally(&[ae, unknown(), never(Cause::ConnectionRefused)]);
    let seen = ["negative", "unknown_fate", "transient"];
    assert_eq!(t.observed(refused), facts(&seen));
    let tls = Ending {
        gave_up: Some(Cause::TlsVerify),
        ..none
    };
    let seen = ["negative", "unknown_fate", "permanent"];
    assert_eq!(t.observed(tls), facts(&seen));
    // A give-up after every message was answered does not fail the run.
    assert_eq!(tally(&[aa]).observed(refused), facts(&[]));
    let interrupted = Ending {
        interrupted: true,
        ..none
    };
    assert!(t.observed(interrupted).interrupted);
    // Closed on an ACK timeout (reconnects off): unknown fate, not a transient give-up.
    let ack_timeout = Ending {
        gave_up: Some(Cause::AckTimeout),
        ..none
    };
    let closed = Fate::NeverDelivered {
        cause: FateCause::Closed,
    };
    let t = tally(&[unknown(), closed]);
    let seen = ["unknown_fate"];
    assert_eq!(t.observed(ack_timeout), facts(&seen));
    let unreadable = Ending {
        input_failed: true,
        ..none
    };
    assert!(t.observed(unreadable).input_failed);
}

#[test]
fn a_count_that_does_not_close_is_observed() {
    let mut t = tally(&[answered(AckCode::AA)]);
    assert!(!t.observed(Ending::default()).unaccounted);
    t.read = 2;
    assert!(!t.adds_up());
    assert!(t.observed(Ending::default()).unaccounted);
}

#[test]
fn codes_counted_apart_fold_into_the_same_totals() {
    let fates = [
        answered(AckCode::AA),
        answered(AckCode::AE),
        answered(AckCode::AA),
        answered(AckCode::CA),
        answered(AckCode::CR),
        unknown(),
    ];
    let mut apart = Totals {
        read: fates.len() as u64,
        ..Default::default()
    };
    let mut codes = Codes::default();
    for f in &fates {
        apart.record_with(f, &mut codes);
    }
    // Every population is counted at once; only the codes wait for the fold.
    assert!(apart.adds_up());
    assert!(apart.fates.by_code.is_empty());
    codes.fold_into(&mut apart);
    assert_eq!(apart, tally(&fates));
}
