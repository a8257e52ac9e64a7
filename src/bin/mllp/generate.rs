//! `mllp completions` and `mllp man`: generated from the clap definition. A man page is built
//! section by section: clap gives NAME, SYNOPSIS and OPTIONS (its flag headings become
//! subsections), each command's `Manual` the DESCRIPTION, EXIT STATUS, ENVIRONMENT, FILES and
//! EXAMPLES.

use crate::exit::Exit;
use crate::global::heading;
use crate::manual::{self, Manual};
use anyhow::Context;
use clap::Args;
use clap_complete::Shell;
use std::path::PathBuf;

#[derive(Debug, Args)]
#[command(after_help = manual::COMPLETIONS.short_after_help())]
pub struct CompletionsArgs {
    /// The shell to generate for.
    #[arg(value_enum, value_name = "SHELL")]
    pub shell: Shell,
}

#[derive(Debug, Args)]
#[command(after_help = manual::MAN.short_after_help())]
pub struct ManArgs {
    /// Write mllp.1 and one page per subcommand into DIR.
    #[arg(long, value_name = "DIR", help_heading = heading::OUTPUT)]
    pub dir: Option<PathBuf>,
}

/// The completion script of `cmd` (the whole command line) for the shell `args` names.
pub fn completions(args: CompletionsArgs, mut cmd: clap::Command) -> anyhow::Result<Exit> {
    // Rendered first: the generator panics on a failed write.
    let mut script = Vec::new();
    clap_complete::generate(args.shell, &mut cmd, "mllp", &mut script);
    crate::stdout::write_all(&script)?;
    Ok(Exit::Success)
}

/// The man pages of `cmd` (the whole command line), to stdout or into a directory.
pub fn man(args: ManArgs, cmd: clap::Command) -> anyhow::Result<Exit> {
    let pages = pages(cmd).context("rendering the man pages")?;
    match args.dir {
        None => crate::stdout::write_all(&pages[0].1)?,
        Some(dir) => {
            std::fs::create_dir_all(&dir).with_context(|| format!("creating {}", dir.display()))?;
            for (name, page) in &pages {
                let path = dir.join(name);
                std::fs::write(&path, page)
                    .with_context(|| format!("writing {}", path.display()))?;
            }
        }
    }
    Ok(Exit::Success)
}

/// The manual of a subcommand, by name; `None` for those whose `--help` is the whole story.
fn manual_for(name: &str) -> Option<&'static Manual> {
    Some(match name {
        "send" => &manual::SEND,
        "listen" => &manual::LISTEN,
        "relay" => &manual::RELAY,
        "probe" => &manual::PROBE,
        "soak" => &manual::SOAK,
        "show" => &manual::SHOW,
        "check" => &manual::CHECK,
        "diff" => &manual::DIFF,
        "deid" => &manual::DEID,
        "completions" => &manual::COMPLETIONS,
        "man" => &manual::MAN,
        _ => return None,
    })
}

/// `(file name, page)`, `mllp.1` first.
fn pages(cmd: clap::Command) -> std::io::Result<Vec<(String, Vec<u8>)>> {
    let mut cmd = cmd.disable_help_subcommand(true);
    cmd.build();
    let mut pages = vec![page(&cmd, Some(&manual::MLLP))?];
    for sub in cmd.get_subcommands().filter(|s| !s.is_hide_set()) {
        pages.push(page(sub, manual_for(sub.get_name()))?);
    }
    Ok(pages)
}

fn page(cmd: &clap::Command, manual: Option<&Manual>) -> std::io::Result<(String, Vec<u8>)> {
    let man = clap_mangen::Man::new(cmd.clone());
    let mut out = Vec::new();
    man.render_title(&mut out)?;
    man.render_name_section(&mut out)?;
    // clap's usage line, not clap_mangen's list of every flag: the flags follow in OPTIONS.
    section(&mut out, "SYNOPSIS");
    let usage = cmd.clone().render_usage().to_string();
    let usage = usage.trim_start_matches("Usage:").trim();
    let (name, rest) = usage
        .split_once(" [")
        .map_or((usage, String::new()), |(n, r)| (n, format!(" [{r}")));
    line(
        &mut out,
        &format!("\\fB{}\\fR{}", escape(name), escape(&rest)),
    );
    if let Some(manual) = manual {
        section(&mut out, "DESCRIPTION");
        text(&mut out, manual.description);
        if !manual.notes.is_empty() {
            out.extend_from_slice(b".PP\n");
            text(&mut out, manual.notes);
        }
    }
    options(&man, &mut out)?;
    if cmd.has_subcommands() {
        man.render_subcommands_section(&mut out)?;
    }
    if let Some(manual) = manual {
        section(&mut out, "EXIT STATUS");
        if let Some(order) = crate::exit::precedence(manual.exit) {
            text(&mut out, &format!("When several apply: {order}."));
        }
        let codes: Vec<(String, &str)> = crate::exit::meanings(manual.exit)
            .into_iter()
            .map(|(code, meaning)| (code.to_string(), meaning))
            .collect();
        tagged(&mut out, codes.iter().map(|(c, m)| (c.as_str(), *m)));
        let from_flags: Vec<(String, String)> = cmd
            .get_arguments()
            .filter_map(|arg| {
                let env = arg.get_env()?.to_string_lossy().into_owned();
                let flag = arg.get_long().map_or(String::new(), |l| format!("--{l}"));
                Some((env, format!("The default of {flag}.")))
            })
            .collect();
        let listed = manual.environment.iter().map(|(k, v)| (*k, *v));
        if !from_flags.is_empty() || !manual.environment.is_empty() {
            section(&mut out, "ENVIRONMENT");
        }
        tagged(
            &mut out,
            from_flags
                .iter()
                .map(|(k, v)| (k.as_str(), v.as_str()))
                .chain(listed),
        );
        if !manual.files.is_empty() {
            section(&mut out, "FILES");
            tagged(&mut out, manual.files.iter().copied());
        }
        section(&mut out, "EXAMPLES");
        for (command, what) in manual.examples {
            out.extend_from_slice(b".TP\n");
            line(&mut out, &format!("\\fB{}\\fR", escape(command)));
            if !what.is_empty() {
                text(&mut out, what);
            }
        }
    }
    man.render_version_section(&mut out)?;
    Ok((man.get_filename(), out))
}

/// clap's OPTIONS, with each flag heading as a subsection of one OPTIONS section instead of a
/// section of its own.
fn options(man: &clap_mangen::Man, out: &mut Vec<u8>) -> std::io::Result<()> {
    let mut rendered = Vec::new();
    man.render_options_section(&mut rendered)?;
    let rendered = String::from_utf8_lossy(&rendered);
    section(out, "OPTIONS");
    for roff_line in rendered.lines() {
        let Some(title) = roff_line.strip_prefix(".SH ") else {
            out.extend_from_slice(roff_line.as_bytes());
            out.push(b'\n');
            continue;
        };
        let title = title.trim_matches('"');
        match heading::ALL.iter().find(|h| h.to_uppercase() == title) {
            Some(heading) => out.extend_from_slice(format!(".SS \"{heading}\"\n").as_bytes()),
            None if title == "OPTIONS" => {}
            None => out.extend_from_slice(format!(".SS \"{title}\"\n").as_bytes()),
        }
    }
    Ok(())
}

fn section(out: &mut Vec<u8>, title: &str) {
    out.extend_from_slice(format!(".SH \"{title}\"\n").as_bytes());
}

/// `(tag, text)` pairs as a tagged list.
fn tagged<'a>(out: &mut Vec<u8>, items: impl Iterator<Item = (&'a str, &'a str)>) {
    for (tag, what) in items {
        out.extend_from_slice(b".TP\n");
        line(out, &format!("\\fB{}\\fR", escape(tag)));
        text(out, what);
    }
}

/// Plain text: a blank line starts a paragraph, a line indented by two spaces is kept as is.
fn text(out: &mut Vec<u8>, text: &str) {
    let mut literal = false;
    for source in text.lines() {
        let indented = source.starts_with("  ");
        if indented && !literal {
            out.extend_from_slice(b".nf\n");
        } else if !indented && literal {
            out.extend_from_slice(b".fi\n");
        }
        literal = indented;
        if source.trim().is_empty() {
            out.extend_from_slice(b".PP\n");
        } else {
            line(out, &escape(source));
        }
    }
    if literal {
        out.extend_from_slice(b".fi\n");
    }
}

/// One line of text that roff must not read as a request.
fn line(out: &mut Vec<u8>, text: &str) {
    if text.starts_with('.') || text.starts_with('\'') {
        out.extend_from_slice(b"\\&");
    }
    out.extend_from_slice(text.as_bytes());
    out.push(b'\n');
}

fn escape(text: &str) -> String {
    text.replace('\\', "\\e").replace('-', "\\-")
}
