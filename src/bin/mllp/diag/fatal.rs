//! The error a command ends on, said once: `mllp: error: MESSAGE` for people, or
//! `{"event":"error","message":..,"exit_code":N}` (plus `cause` or `code` where one names it)
//! under `--log-format json`. Command-line parse errors take the same shape when the command line
//! itself asks for JSON.

use crate::exit::Exit;
use crate::output::diag::Diagnostic;
use mllp::cause::Cause;
use std::fmt::Display;
use std::process::ExitCode;

#[derive(Debug)]
#[must_use = "a Fatal says nothing until reported"]
pub struct Fatal {
    exit: Exit,
    message: String,
    cause: Option<Cause>,
    code: Option<&'static str>,
    /// A second human line (`nothing was sent`); the exit code says it to machines.
    then: Option<&'static str>,
}

impl Fatal {
    pub fn new(exit: Exit, message: impl Display) -> Fatal {
        Fatal {
            exit,
            message: message.to_string(),
            cause: None,
            code: None,
            then: None,
        }
    }

    /// The stable cause, for machines, where one names the failure.
    pub fn cause(mut self, cause: Option<Cause>) -> Fatal {
        self.cause = cause;
        self
    }

    /// The stable warning code, for machines.
    pub fn code(mut self, code: &'static str) -> Fatal {
        self.code = Some(code);
        self
    }

    pub fn then(mut self, line: &'static str) -> Fatal {
        self.then = Some(line);
        self
    }

    /// Say it on stderr; the exit code to end with.
    pub fn report(self) -> Exit {
        let Fatal {
            exit,
            message,
            cause,
            code,
            then,
        } = self;
        let human = || match then {
            Some(then) => format!("mllp: error: {message}\n{then}"),
            None => format!("mllp: error: {message}"),
        };
        let event = Diagnostic::Error {
            message: &message,
            exit_code: exit.code().into(),
            cause,
            code,
            kind: None,
        };
        super::say(human, &event);
        exit
    }
}

/// A command line clap refused. Help and version go to stdout as clap prints them; an error is
/// a JSON event when the arguments ask for `--log-format json`, else clap's own text.
pub fn parse_error(err: clap::Error) -> ExitCode {
    let json =
        crate::global::log_format_in(std::env::args_os()) == Some(crate::global::LogFormat::Json);
    if !err.use_stderr() || !json {
        err.exit();
    }
    super::set_format(crate::global::LogFormat::Json);
    let kind = err.kind();
    let message = match kind {
        clap::error::ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand => {
            "a subcommand is required; see mllp --help".to_string()
        }
        _ => first_paragraph(&err.render().to_string()),
    };
    let kind = kebab(&format!("{kind:?}"));
    let event = Diagnostic::Error {
        message: &message,
        exit_code: err.exit_code(),
        cause: None,
        code: None,
        kind: Some(&kind),
    };
    super::say(|| message.clone(), &event);
    ExitCode::from(err.exit_code().clamp(0, 255) as u8)
}

/// clap's text up to its first blank line, on one line, without its `error: ` label.
fn first_paragraph(text: &str) -> String {
    let head = text.split("\n\n").next().unwrap_or_default();
    let head = head.strip_prefix("error: ").unwrap_or(head);
    head.lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect::<Vec<_>>()
        .join(" ")
}

/// `InvalidValue` -> `invalid-value`, like the cause names.
fn kebab(name: &str) -> String {
    let mut out = String::new();
    for (i, c) in name.chars().enumerate() {
        if c.is_ascii_uppercase() {
            if i > 0 {
                out.push('-');
            }
            out.push(c.to_ascii_lowercase());
        } else {
            out.push(c);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clap_text_becomes_one_line() {
        let text = "error: the following required arguments were not provided:\n  --host <HOST>\n\nUsage: mllp send --host <HOST>\n";
        assert_eq!(
            first_paragraph(text),
            "the following required arguments were not provided: --host <HOST>"
        );
        assert_eq!(kebab("InvalidValue"), "invalid-value");
        assert_eq!(kebab("UnknownArgument"), "unknown-argument");
    }
}
