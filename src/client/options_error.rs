//! The error naming an option that cannot work: raised by the client options and by the retry
//! strategies they hold, so neither module needs the other's.

/// An option that cannot work. `option` is the option's name as the CLI spells it.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("invalid option {option}: {problem}")]
#[non_exhaustive]
pub struct OptionsError {
    /// The option, as the CLI spells it.
    pub option: &'static str,
    /// What is wrong with its value.
    pub problem: &'static str,
}

impl OptionsError {
    /// The error for `option` and its `problem`.
    pub(crate) fn new(option: &'static str, problem: &'static str) -> Self {
        OptionsError { option, problem }
    }
}
