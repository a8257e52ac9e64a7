//! `send`'s input, all of it checked before the first byte: the files, globs, directories,
//! stdin or store rows the flags name, split, filtered and (with `--check-hl7`) held to the
//! standard; an input refused here is reported with the flag that helps.

use super::args::SendArgs;
use super::plan::Plan;
use super::{replay, summary};
use crate::diag::{Diag, Fatal};
use crate::exit::Exit;
use mllp::input::{collect_inputs, InputError, InputSet, InputSource, Summary};
use std::io::IsTerminal;

/// The input, checked.
pub struct Inputs {
    pub set: InputSet,
    /// The widest source label, for the lines that name a message by its place.
    pub width: usize,
    /// What `--failed-out` must not hold.
    pub sources: Vec<InputSource>,
    pub checked: Summary,
}

/// What to say when there is nothing to read: stdin is a terminal and no file was named.
const NO_INPUT: &str = "no input: name the files or directories to send \
    (mllp send adt/*.hl7 --host HOST), or pipe messages in (cat adt.hl7 | mllp send --host HOST); \
    `-` reads the terminal itself, ended by Ctrl-D";

/// The checked input, or the exit once its refusal is reported.
pub fn check(args: &SendArgs, plan: &Plan, diag: &Diag) -> Result<Inputs, Exit> {
    let refused = |err: &dyn std::fmt::Display| {
        Fatal::new(Exit::Usage, err)
            .then("nothing was sent")
            .report()
    };
    if args.files.is_empty() && args.from_db.is_none() && std::io::stdin().is_terminal() {
        return Err(refused(&NO_INPUT));
    }
    let (mut set, width, sources) = match &plan.store {
        Some(store) => {
            let width = replay::opened(&store.file, &store.filter)?;
            let set = InputSet::of_store(store.file.clone(), store.filter.clone(), plan.input);
            (set, width, vec![InputSource::File(store.file.clone())])
        }
        None => {
            let sources =
                collect_inputs(&args.files, args.recursive).map_err(|e| refused(&refusal(&e)))?;
            let width = summary::label_width(&sources);
            let set = InputSet::prepare(sources.clone(), plan.input)
                .map_err(|e| refused(&refusal(&e)))?;
            (set.with_filters(plan.filters.clone()), width, sources)
        }
    };
    let checked = set.validate().map_err(|e| refused(&refusal(&e)))?;
    if checked.filtered > 0 {
        summary::filtered(diag, checked.filtered, checked.messages);
    }
    if args.check_hl7 {
        if let Some(exit) = crate::check::refuse_ill_formed(&mut set, diag) {
            return Err(exit);
        }
    }
    Ok(Inputs {
        set,
        width,
        sources,
        checked,
    })
}

/// FIFO pairs replies with messages in order; a message whose MSH-16 asks for an application
/// ACK gets two replies, and the second would be credited to the next message.
pub fn refuse_two_phase(set: &mut InputSet) -> Option<Exit> {
    let message = set
        .messages()
        .filter_map(Result::ok)
        .find(|m| mllp::client::asks_for_application_ack(&m.payload))?;
    let error = format!(
        "{}#{}: its MSH-16 asks for an application ACK, so it may get two replies, which \
         --correlate fifo cannot pair with it; use --correlate control-id",
        message.source, message.index
    );
    Some(
        Fatal::new(Exit::Usage, error)
            .then("nothing was sent")
            .report(),
    )
}

/// An input refused at the check, with the flag that helps where one does.
pub fn refusal(err: &InputError) -> String {
    match err {
        InputError::EmptyControlId { .. } => format!(
            "{err}; --fresh-control-ids gives every message a unique one (its record keeps the \
             original)"
        ),
        InputError::MessageTooLarge { .. } => {
            format!("{err} (--max-frame-size); the receiver must take frames that large too")
        }
        InputError::SeveralMessages { .. } => {
            format!("{err}; --batch sends a batch envelope (FHS/BHS ... BTS/FTS) as one message")
        }
        InputError::NotAMessage { .. } => format!(
            "{err}; choose rows that leave it out (--since, --until, --type, --control-id, \
             --status)"
        ),
        InputError::IsDirectory { .. } => {
            format!("{err}; pass --recursive to send the files inside it")
        }
        InputError::StdinTooLarge { .. } => format!(
            "{err} (--max-input); raise --max-input, or pass --stream to send without checking \
             first"
        ),
        _ => err.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::refusal;
    use mllp::input::InputError;

    #[test]
    fn refusals_name_the_flag_that_helps() {
        let dir = refusal(&InputError::IsDirectory { path: "in".into() });
        assert_eq!(
            dir,
            "in: is a directory; pass --recursive to send the files inside it"
        );
        let stdin = refusal(&InputError::StdinTooLarge { max: 100 });
        assert!(
            stdin.contains("(--max-input); raise --max-input"),
            "{stdin}"
        );
        assert!(stdin.contains("--stream"), "{stdin}");
    }
}
