//! Why a message ended as it did: the one function that decides the cause its outcome shows,
//! for a message the link settled and for one the run never handed over.

use super::totals::Ending;
use crate::cause::Cause;
use crate::client::{Fate, FateCause};

/// The cause the run gives a message, from how the run is ending so far (`ending`'s
/// `timed_out`, `interrupted`, `gave_up`, `last_failure`).
///
/// - `None` (never handed over: the run stopped reading, or the link was gone first):
///   `run-timeout` past the deadline, `interrupted` after a stop, else the cause the client gave
///   up on; `None` then means the link closed for no named reason.
/// - `Some(fate)` (settled by the link): its own cause stands (`None`) unless the run ended it:
///   `run-timeout` past the deadline; else, never delivered, the cause the client gave up on,
///   the link's last failure (a refused port stays `connection-refused`, not the shutdown that
///   followed), or `interrupted` after a stop.
pub(super) fn cause(fate: Option<&Fate>, ending: &Ending) -> Option<Cause> {
    let ended_by_us = |cause: &FateCause| {
        matches!(
            cause,
            FateCause::Closed | FateCause::Destroyed | FateCause::Cancelled
        )
    };
    match fate {
        None if ending.timed_out => Some(Cause::RunTimeout),
        None if ending.interrupted => Some(Cause::Interrupted),
        None => ending.gave_up,
        Some(Fate::NeverDelivered { cause } | Fate::UnknownFate { cause, .. })
            if ending.timed_out && ended_by_us(cause) =>
        {
            Some(Cause::RunTimeout)
        }
        Some(Fate::NeverDelivered { cause }) if ended_by_us(cause) => ending
            .gave_up
            .or(ending.last_failure)
            .or(ending.interrupted.then_some(Cause::Interrupted)),
        Some(_) => None,
    }
}

/// The cause a message's record shows: the run's own (`run`, decided by `cause` above), else the
/// fate's public cause; `None` for a message accepted.
pub fn shown_cause(fate: &Fate, run: Option<Cause>) -> Option<&'static str> {
    run.map(Cause::as_str).or(fate.contract_cause())
}

/// The fate of a message the run never handed over, with the cause [`cause`] decided for it.
pub(super) fn never_handed_over(cause: Option<Cause>) -> Fate {
    Fate::NeverDelivered {
        cause: cause.map_or(FateCause::Closed, FateCause::Link),
    }
}

#[cfg(test)]
mod tests {
    use super::{cause, never_handed_over, Ending};
    use crate::cause::Cause;
    use crate::client::{Fate, FateCause};

    #[test]
    fn a_message_never_handed_over_shows_why_the_run_stopped() {
        let timed_out = Ending {
            timed_out: true,
            interrupted: true,
            ..Ending::default()
        };
        assert_eq!(cause(None, &timed_out), Some(Cause::RunTimeout));
        let stopped = Ending {
            interrupted: true,
            ..Ending::default()
        };
        assert_eq!(cause(None, &stopped), Some(Cause::Interrupted));
        let gave_up = Ending {
            gave_up: Some(Cause::ConnectionRefused),
            ..Ending::default()
        };
        assert!(matches!(
            never_handed_over(cause(None, &gave_up)),
            Fate::NeverDelivered {
                cause: FateCause::Link(Cause::ConnectionRefused)
            }
        ));
        assert!(matches!(
            never_handed_over(cause(None, &Ending::default())),
            Fate::NeverDelivered {
                cause: FateCause::Closed
            }
        ));
    }

    #[test]
    fn a_links_own_cause_stands_unless_the_run_ended_it() {
        let refused = Fate::NeverDelivered {
            cause: FateCause::Link(Cause::ConnectionRefused),
        };
        let closed = Fate::NeverDelivered {
            cause: FateCause::Closed,
        };
        let stopped = Ending {
            interrupted: true,
            last_failure: Some(Cause::ConnectionRefused),
            ..Ending::default()
        };
        assert_eq!(cause(Some(&refused), &stopped), None);
        assert_eq!(
            cause(Some(&closed), &stopped),
            Some(Cause::ConnectionRefused)
        );
        let timed_out = Ending {
            timed_out: true,
            ..Ending::default()
        };
        assert_eq!(cause(Some(&closed), &timed_out), Some(Cause::RunTimeout));
    }
}
