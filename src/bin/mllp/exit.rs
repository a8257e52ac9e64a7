//! Exit codes, decided in one place.

use std::process::ExitCode;

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Exit {
    Success,
    Negative,
    Usage,
    UnknownFate,
    Transient,
    Permanent,
    Thresholds,
    Interrupted,
}

impl Exit {
    pub fn code(self) -> u8 {
        match self {
            Exit::Success => 0,
            Exit::Negative => 1,
            Exit::Usage => 2,
            Exit::UnknownFate => 3,
            Exit::Transient => 4,
            Exit::Permanent => 5,
            Exit::Thresholds => 6,
            Exit::Interrupted => 130,
        }
    }
}

impl From<Exit> for ExitCode {
    fn from(exit: Exit) -> ExitCode {
        ExitCode::from(exit.code())
    }
}

/// What a run observed, for the precedence rule.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Observed {
    pub permanent: bool,
    pub transient: bool,
    pub unknown_fate: bool,
    pub negative: bool,
    pub thresholds_missed: bool,
}

/// `send`/`probe`: 5, then 4, then 3, then 1.
pub fn for_delivery(o: Observed) -> Exit {
    if o.permanent {
        Exit::Permanent
    } else if o.transient {
        Exit::Transient
    } else if o.unknown_fate {
        Exit::UnknownFate
    } else if o.negative {
        Exit::Negative
    } else {
        Exit::Success
    }
}

/// `soak`: 5, then 4, then 6.
pub fn for_soak(o: Observed) -> Exit {
    if o.permanent {
        Exit::Permanent
    } else if o.transient {
        Exit::Transient
    } else if o.thresholds_missed {
        Exit::Thresholds
    } else {
        Exit::Success
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn precedence_follows_the_contract() {
        let all = Observed {
            permanent: true,
            transient: true,
            unknown_fate: true,
            negative: true,
            thresholds_missed: true,
        };
        assert_eq!(for_delivery(all), Exit::Permanent);
        assert_eq!(
            for_delivery(Observed {
                permanent: false,
                ..all
            }),
            Exit::Transient
        );
        let rest = Observed {
            unknown_fate: true,
            negative: true,
            ..Default::default()
        };
        assert_eq!(for_delivery(rest), Exit::UnknownFate);
        assert_eq!(
            for_delivery(Observed {
                negative: true,
                ..Default::default()
            }),
            Exit::Negative
        );
        assert_eq!(for_delivery(Observed::default()), Exit::Success);
        assert_eq!(
            for_soak(Observed {
                thresholds_missed: true,
                unknown_fate: true,
                ..Default::default()
            }),
            Exit::Thresholds
        );
        assert_eq!(
            for_soak(Observed {
                transient: true,
                thresholds_missed: true,
                ..Default::default()
            }),
            Exit::Transient
        );
    }
}
