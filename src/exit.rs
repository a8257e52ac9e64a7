//! Exit codes of the `mllp` command: the numbers, the precedence when several apply, and the one
//! text that explains them to people (every `--help` and, through it, the man pages).
//!
//! A program embedding the library can end the same way: classify what a run observed with
//! [`for_delivery`] or [`for_soak`] and exit with [`Exit::code`].

/// Whose exit codes a text explains.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum For {
    /// `mllp` itself: every code.
    All,
    /// `mllp send`.
    Send,
    /// `mllp listen`.
    Listen,
    /// `mllp probe`.
    Probe,
    /// `mllp soak`.
    Soak,
    /// `mllp completions`.
    Completions,
    /// `mllp man`.
    Man,
}

/// Where a command means something narrower by a code (empty: the general meaning).
type Narrower = &'static [(For, &'static str)];

/// Each code's meaning in general, then where a command means something narrower by it. A
/// command lists a code only when it can end with it.
const MEANINGS: &[(u8, &str, Narrower)] = &[
    (
        0,
        "success: every message positively acknowledged; probe healthy; soak within thresholds",
        &[
            (
                For::Send,
                "every message accepted (AA, or CA when no application ACK was asked for)",
            ),
            (For::Probe, "healthy"),
            (
                For::Soak,
                "the run stayed within its thresholds and its accounting closed",
            ),
            (
                For::Listen,
                "stopped by SIGINT/SIGTERM after draining the commits under way",
            ),
            (For::Completions, "the script was printed"),
            (For::Man, "the pages were written"),
        ],
    ),
    (
        1,
        "the peer answered and said no (AE, AR, CE, CR) for at least one message",
        &[
            (For::Send, ""),
            (For::Probe, "the ACK was negative (AE, AR, CE, CR)"),
        ],
    ),
    (
        2,
        "usage error or unreadable input, before anything was sent",
        &[
            (For::Send, ""),
            (For::Probe, "usage error"),
            (For::Soak, "usage error or unreadable template"),
            (
                For::Listen,
                "usage error (a refused wildcard bind included)",
            ),
            (For::Completions, "usage error"),
            (For::Man, "usage error, or a page could not be written"),
        ],
    ),
    (
        3,
        "unknown fate: a message was written and no ACK came back (or only its CA)",
        &[(For::Send, ""), (For::Probe, "")],
    ),
    (
        4,
        "transient connection failure, retries exhausted, or messages left never delivered \
         (--timeout ran out): trying later may work",
        &[
            (For::Send, ""),
            (For::Probe, "transient failure: trying later may work"),
            (For::Soak, "a connection gave up on a transient failure"),
        ],
    ),
    (
        5,
        "permanent connection failure: configuration, TLS trust, not an MLLP peer",
        &[
            (For::Send, ""),
            (For::Probe, ""),
            (
                For::Soak,
                "a connection gave up on a permanent failure: configuration, TLS trust, \
                     not an MLLP peer",
            ),
            (
                For::Listen,
                "cannot bind the address, or cannot load the TLS material",
            ),
        ],
    ),
    (
        6,
        "soak thresholds missed, or soak's accounting did not close",
        &[(
            For::Soak,
            "a threshold was missed, or the accounting did not close",
        )],
    ),
    (
        130,
        "interrupted by Ctrl-C (send; the summary is still printed)",
        &[(
            For::Send,
            "interrupted by Ctrl-C (the summary is still printed)",
        )],
    ),
    (
        143,
        "stopped by SIGTERM (send; the summary is still printed)",
        &[(
            For::Send,
            "stopped by SIGTERM (the summary is still printed)",
        )],
    ),
];

/// The codes `whom` can end with, and what each means there: `(code, meaning)`.
pub fn meanings(whom: For) -> Vec<(u8, &'static str)> {
    MEANINGS
        .iter()
        .filter_map(|(code, general, narrower)| match whom {
            For::All => Some((*code, *general)),
            _ => narrower
                .iter()
                .find(|(w, _)| *w == whom)
                .map(|(_, text)| (*code, if text.is_empty() { *general } else { *text })),
        })
        .collect()
}

/// Which code wins when several apply, said for people.
pub fn precedence(whom: For) -> Option<&'static str> {
    match whom {
        For::Send | For::Probe => Some("5, then 4, then 3, then 1"),
        For::Soak => Some("5, then 4, then 6"),
        For::All => Some("5, then 4, then 3, then 1; for soak 5, then 4, then 6"),
        For::Listen | For::Completions | For::Man => None,
    }
}

/// The exit-code section of a `--help`.
pub fn help(whom: For) -> String {
    let mut text = match precedence(whom) {
        Some(order) => format!("Exit codes (when several apply: {order}):"),
        None => "Exit codes:".to_string(),
    };
    for (code, meaning) in meanings(whom) {
        text.push_str(&format!("\n  {code:<3}"));
        // Wrapped here, with a hanging indent, so that an 80-column terminal does not.
        let mut width = 6;
        for word in meaning.split_whitespace() {
            if width + 1 + word.len() > 78 {
                text.push_str("\n     ");
                width = 5;
            }
            text.push(' ');
            text.push_str(word);
            width += 1 + word.len();
        }
    }
    text
}

/// How a command ended, one variant per exit code.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Exit {
    /// 0: every message positively acknowledged; probe healthy; soak within thresholds.
    Success,
    /// 1: the peer answered and said no for at least one message.
    Negative,
    /// 2: usage error or unreadable input, before anything was sent.
    Usage,
    /// 3: a message was written and no final ACK came back.
    UnknownFate,
    /// 4: a transient failure outlasted the retries; trying later may work.
    Transient,
    /// 5: a permanent failure: configuration, TLS trust, not an MLLP peer.
    Permanent,
    /// 6: soak thresholds missed, or soak's accounting did not close.
    Thresholds,
    /// 130: interrupted by Ctrl-C.
    Interrupted,
    /// 143: stopped by SIGTERM.
    Terminated,
}

impl Exit {
    /// The process exit status.
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
            Exit::Terminated => 143,
        }
    }
}

/// What a run observed, for the precedence rule.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Observed {
    /// A failure that retrying cannot mend.
    pub permanent: bool,
    /// A failure that trying later may mend.
    pub transient: bool,
    /// A message written without a final answer.
    pub unknown_fate: bool,
    /// A negative acknowledgement.
    pub negative: bool,
    /// A soak threshold missed, or its accounting not closed.
    pub thresholds_missed: bool,
}

impl Observed {
    /// What either run observed (several probes, say).
    pub fn merge(self, other: Observed) -> Observed {
        Observed {
            permanent: self.permanent || other.permanent,
            transient: self.transient || other.transient,
            unknown_fate: self.unknown_fate || other.unknown_fate,
            negative: self.negative || other.negative,
            thresholds_missed: self.thresholds_missed || other.thresholds_missed,
        }
    }
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
    fn every_command_explains_the_codes_it_ends_with() {
        let codes = |w| meanings(w).into_iter().map(|(c, _)| c).collect::<Vec<_>>();
        assert_eq!(codes(For::All), [0, 1, 2, 3, 4, 5, 6, 130, 143]);
        assert_eq!(codes(For::Send), [0, 1, 2, 3, 4, 5, 130, 143]);
        assert_eq!(codes(For::Probe), [0, 1, 2, 3, 4, 5]);
        assert_eq!(codes(For::Soak), [0, 2, 4, 5, 6]);
        assert_eq!(codes(For::Listen), [0, 2, 5]);
        for whom in [For::All, For::Send, For::Listen, For::Probe, For::Soak] {
            for (code, _) in meanings(whom) {
                let named = [0, 1, 2, 3, 4, 5, 6, 130, 143].contains(&code);
                assert!(named, "{code}");
            }
        }
        assert!(help(For::Send).contains("\n  4   transient connection failure"));
        let every = [
            Exit::Success,
            Exit::Negative,
            Exit::Usage,
            Exit::UnknownFate,
            Exit::Transient,
            Exit::Permanent,
            Exit::Thresholds,
            Exit::Interrupted,
            Exit::Terminated,
        ];
        assert_eq!(codes(For::All), every.map(Exit::code));
    }

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
