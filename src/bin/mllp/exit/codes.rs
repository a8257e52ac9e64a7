//! Exit codes of the `mllp` command: the numbers, the one precedence when several apply, and the
//! one text that explains them to people (every `--help` and, through it, the man pages).
//!
//! What a run observed comes from the library as facts ([`Observed`]); [`exit_for`] is the only
//! place they become a code.

use mllp::outcome::Observed;

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
    /// `mllp show`.
    Show,
    /// `mllp check`.
    Check,
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
            (For::Show, "every input was read"),
            (
                For::Check,
                "no message has an error (warnings may be listed)",
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
            (For::Check, "a message has an error"),
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
            (
                For::Show,
                "usage error, or an input could not be read whole (what it held up to there \
                 was shown)",
            ),
            (
                For::Check,
                "usage error, or an input could not be read whole (what it held up to there \
                 was checked)",
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

/// Which code wins when several apply, for every command: a command's order is this one,
/// narrowed to the codes it can end with. Interrupted (130) and an accounting that did not
/// close (3) come first; unreadable input (2) only when nothing else failed.
const PRECEDENCE: [Exit; 5] = [
    Exit::Permanent,
    Exit::Transient,
    Exit::Thresholds,
    Exit::UnknownFate,
    Exit::Negative,
];

/// Which code wins when several apply, said for people: [`PRECEDENCE`] narrowed to `whom`.
pub fn precedence(whom: For) -> Option<String> {
    let order = |whom: For| {
        let codes: Vec<u8> = meanings(whom).into_iter().map(|(c, _)| c).collect();
        let order: Vec<String> = PRECEDENCE
            .iter()
            .map(|e| e.code())
            .filter(|c| codes.contains(c))
            .map(|c| c.to_string())
            .collect();
        (order.len() > 1).then(|| order.join(", then "))
    };
    match whom {
        For::All => Some(format!(
            "{}; for soak {}",
            order(For::Send)?,
            order(For::Soak)?
        )),
        _ => order(whom),
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
    /// 1: the peer answered and said no for at least one message (check: a message has an
    /// error).
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

impl Exit {
    /// Whether `o` holds the fact this code reports (for the codes in [`PRECEDENCE`]).
    fn observed_in(self, o: &Observed) -> bool {
        match self {
            Exit::Permanent => o.permanent,
            Exit::Transient => o.transient,
            Exit::UnknownFate => o.unknown_fate,
            Exit::Thresholds => o.thresholds_missed,
            Exit::Negative => o.negative,
            Exit::Success | Exit::Usage | Exit::Interrupted | Exit::Terminated => false,
        }
    }
}

/// The exit code of what a run observed: 130 when interrupted, 3 when the accounting did not
/// close, then the first of [`PRECEDENCE`] observed; 2 for unreadable input when nothing in
/// it but a negative answer was observed; else 0.
pub fn exit_for(o: Observed) -> Exit {
    if o.interrupted {
        return Exit::Interrupted;
    }
    if o.unaccounted {
        return Exit::UnknownFate;
    }
    match PRECEDENCE.into_iter().find(|e| e.observed_in(&o)) {
        None | Some(Exit::Negative) if o.input_failed => Exit::Usage,
        Some(exit) => exit,
        None => Exit::Success,
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
    fn one_precedence_decides_every_command() {
        let all = Observed {
            permanent: true,
            transient: true,
            unknown_fate: true,
            negative: true,
            thresholds_missed: true,
            ..Default::default()
        };
        assert_eq!(exit_for(all), Exit::Permanent);
        assert_eq!(
            exit_for(Observed {
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
        assert_eq!(exit_for(rest), Exit::UnknownFate);
        assert_eq!(
            exit_for(Observed {
                negative: true,
                ..Default::default()
            }),
            Exit::Negative
        );
        assert_eq!(exit_for(Observed::default()), Exit::Success);
        assert_eq!(
            exit_for(Observed {
                thresholds_missed: true,
                unknown_fate: true,
                ..Default::default()
            }),
            Exit::Thresholds
        );
        assert_eq!(
            exit_for(Observed {
                transient: true,
                thresholds_missed: true,
                ..Default::default()
            }),
            Exit::Transient
        );
    }

    #[test]
    fn an_interruption_a_broken_count_and_unreadable_input_come_before_or_after_the_rest() {
        let every = Observed {
            permanent: true,
            negative: true,
            input_failed: true,
            ..Default::default()
        };
        let interrupted = Observed {
            interrupted: true,
            unaccounted: true,
            ..every
        };
        assert_eq!(exit_for(interrupted), Exit::Interrupted);
        let unaccounted = Observed {
            unaccounted: true,
            ..every
        };
        assert_eq!(exit_for(unaccounted), Exit::UnknownFate);
        assert_eq!(exit_for(every), Exit::Permanent);
        let negative = Observed {
            permanent: false,
            ..every
        };
        assert_eq!(exit_for(negative), Exit::Usage);
        let unreadable = Observed {
            input_failed: true,
            ..Default::default()
        };
        assert_eq!(exit_for(unreadable), Exit::Usage);
        let unknown = Observed {
            unknown_fate: true,
            ..unreadable
        };
        assert_eq!(exit_for(unknown), Exit::UnknownFate);
    }

    #[test]
    fn the_precedence_said_is_the_one_applied() {
        let said = |w| precedence(w).unwrap_or_default();
        assert_eq!(said(For::Send), "5, then 4, then 3, then 1");
        assert_eq!(said(For::Probe), "5, then 4, then 3, then 1");
        assert_eq!(said(For::Soak), "5, then 4, then 6");
        assert_eq!(
            said(For::All),
            "5, then 4, then 3, then 1; for soak 5, then 4, then 6"
        );
        for whom in [For::Listen, For::Completions, For::Man] {
            assert_eq!(precedence(whom), None);
        }
    }
}
