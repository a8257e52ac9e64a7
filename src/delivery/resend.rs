//! The resend policy: which of a reconnect's casualties go to the client again, so every
//! message still ends in exactly one fate.
//!
//! With control-ID correlation the client itself writes pending messages again on a new
//! connection, at most [`ClientOptions::max_resends`](crate::client::ClientOptions) times. With
//! FIFO correlation it cannot: order does not survive a new session, so the client settles those
//! messages `never-delivered` (`fifo-unsafe`) or `unknown-fate` (`in-flight-orphan`,
//! `ack-timeout`), and the caller decides whether to send them again. [`ResendPolicy`] is that
//! decision, the one `mllp send` makes, bounded by the same default.

use crate::cause::Cause;
use crate::client::{Fate, FateCause};

pub use crate::client::DEFAULT_MAX_RESENDS;

/// When a settled message is handed to the client again.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ResendPolicy {
    /// FIFO correlation is in use; with control IDs the client resends on its own.
    pub fifo: bool,
    /// Also resend messages that were written and not answered: a possible duplicate at the
    /// receiver instead of a message of unknown fate.
    pub at_least_once: bool,
    /// Most times one message is resent.
    pub max_resends: u32,
}

impl Default for ResendPolicy {
    fn default() -> Self {
        ResendPolicy {
            fifo: false,
            at_least_once: false,
            max_resends: DEFAULT_MAX_RESENDS,
        }
    }
}

impl ResendPolicy {
    /// Whether a message resent `resends` times so far, whose attempt ended in `fate`, goes to
    /// the client again. The caller also stops resending once the client is closed.
    pub fn wants_resend(&self, resends: u32, fate: &Fate) -> bool {
        if !self.fifo || resends >= self.max_resends {
            return false;
        }
        match fate {
            // No byte of it was written: sending it again cannot duplicate it.
            Fate::NeverDelivered {
                cause: FateCause::Link(Cause::FifoUnsafe),
            } => true,
            Fate::UnknownFate {
                cause: FateCause::Link(Cause::InFlightOrphan | Cause::AckTimeout),
                ..
            } => self.at_least_once,
            _ => false,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::{Duration, SystemTime};

    fn unknown(cause: Cause) -> Fate {
        Fate::UnknownFate {
            cause: FateCause::Link(cause),
            flushed_at: SystemTime::now(),
            elapsed: Duration::ZERO,
            bytes: 1,
        }
    }

    fn never(cause: Cause) -> Fate {
        Fate::NeverDelivered {
            cause: FateCause::Link(cause),
        }
    }

    #[test]
    fn fifo_resends_what_was_never_written_up_to_the_cap() {
        let policy = ResendPolicy {
            fifo: true,
            ..Default::default()
        };
        assert!(policy.wants_resend(0, &never(Cause::FifoUnsafe)));
        assert!(policy.wants_resend(9, &never(Cause::FifoUnsafe)));
        assert!(!policy.wants_resend(10, &never(Cause::FifoUnsafe)));
        assert!(!policy.wants_resend(0, &never(Cause::ConnectionRefused)));
        assert!(!policy.wants_resend(0, &unknown(Cause::InFlightOrphan)));
        let control_ids = ResendPolicy::default();
        assert!(!control_ids.wants_resend(0, &never(Cause::FifoUnsafe)));
    }

    #[test]
    fn at_least_once_also_resends_written_unanswered_messages() {
        let policy = ResendPolicy {
            fifo: true,
            at_least_once: true,
            max_resends: 1,
        };
        assert!(policy.wants_resend(0, &unknown(Cause::InFlightOrphan)));
        assert!(policy.wants_resend(0, &unknown(Cause::AckTimeout)));
        assert!(!policy.wants_resend(0, &unknown(Cause::ConnectionLost)));
        assert!(!policy.wants_resend(1, &unknown(Cause::AckTimeout)));
    }
}
