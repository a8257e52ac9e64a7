//! The exit code a run comes to, by the precedence of what it observed.

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

#[test]
fn exit_codes_follow_the_precedence() {
    let none = Ending::default();
    let (aa, ae) = (answered(AckCode::AA), answered(AckCode::AE));
    assert_eq!(tally(std::slice::from_ref(&aa)).exit(none), Exit::Success);
    assert_eq!(tally(&[aa.clone(), ae.clone()]).exit(none), Exit::Negative);
    assert_eq!(
        tally(&[ae.clone(), unknown()]).exit(none),
        Exit::UnknownFate
    );
    let refused = Ending {
        gave_up: Some(Cause::ConnectionRefused),
        ..none
    };
    let t = tally(&[ae, unknown(), never(Cause::ConnectionRefused)]);
    assert_eq!(t.exit(refused), Exit::Transient);
    let tls = Ending {
        gave_up: Some(Cause::TlsVerify),
        ..none
    };
    assert_eq!(t.exit(tls), Exit::Permanent);
    // A give-up after every message was answered does not fail the run.
    assert_eq!(tally(&[aa]).exit(refused), Exit::Success);
    let interrupted = Ending {
        interrupted: true,
        ..none
    };
    assert_eq!(t.exit(interrupted), Exit::Interrupted);
    // Closed on an ACK timeout (reconnects off): unknown fate, not a transient give-up.
    let ack_timeout = Ending {
        gave_up: Some(Cause::AckTimeout),
        ..none
    };
    let closed = Fate::NeverDelivered {
        cause: FateCause::Closed,
    };
    let t = tally(&[unknown(), closed]);
    assert_eq!(t.exit(ack_timeout), Exit::UnknownFate);
}

#[test]
fn a_count_that_does_not_close_is_exit_3() {
    let mut t = tally(&[answered(AckCode::AA)]);
    t.read = 2;
    assert!(!t.adds_up());
    assert_eq!(t.exit(Ending::default()), Exit::UnknownFate);
}
