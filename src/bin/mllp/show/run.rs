//! `show`'s run: the inputs read a message at a time, each written as asked, the warnings and
//! the count at the end, and the exit code.

use super::args::ShowArgs;
use super::render::{Render, Style};
use crate::diag::{count, Diag};
use crate::exit::Exit;
use crate::inspect::{open_or_refuse, TextWarnings};
use serde_json::json;
use std::io::IsTerminal;

pub fn run(args: ShowArgs, diag: &Diag) -> anyhow::Result<Exit> {
    let input = &args.input;
    let mut inputs = match open_or_refuse(input, input.split(false), "show") {
        Ok(inputs) => inputs,
        Err(exit) => return Ok(exit),
    };
    let style = Style {
        raw: args.raw,
        components: diag.verbose > 0,
        color: diag.stdout_color && !args.json,
        flush_each: std::io::stdout().is_terminal(),
    };
    let mut render = Render::new(style, TextWarnings::new(input.charset));
    let mut shown = 0u64;
    for item in inputs.by_ref() {
        let Some(message) = item.or_say(diag, "shown", || render.finish()) else {
            continue;
        };
        let label = message.label();
        let written = match (args.get.is_empty(), args.json) {
            (false, false) => render.values(&label, &message.payload, &args.get),
            (false, true) => render.values_json(&label, &message.payload, &args.get),
            (true, json) => render.outline(&label, &message.payload, json),
        };
        if written.is_err() {
            // The reader went away (`| head`): nothing more to show.
            return Ok(Exit::Success);
        }
        shown += 1;
    }
    if render.finish().is_err() {
        return Ok(Exit::Success);
    }
    render.text.report(diag);
    if let Some(first) = &render.first_broken {
        diag.event(
            "warning",
            || {
                format!(
                    "{} MLLP_NOT_WELL_FORMED: {} not well formed (the first: {first}): no MSH \
                     first, or a line that is not a segment; shown as far as they go, and mllp \
                     check says what is wrong",
                    diag.paint("warning:", "33"),
                    count(render.broken, "message"),
                )
            },
            json!({ "code": "MLLP_NOT_WELL_FORMED", "messages": render.broken, "first": first }),
        );
    }
    if !diag.quiet && inputs.filtered > 0 {
        diag.event(
            "filtered",
            || {
                format!(
                    "shown {}; --where left out {}",
                    count(shown, "message"),
                    inputs.filtered
                )
            },
            json!({ "shown": shown, "filtered": inputs.filtered }),
        );
    }
    Ok(match inputs.broken {
        0 => Exit::Success,
        _ => Exit::Usage,
    })
}
