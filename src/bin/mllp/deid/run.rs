//! `deid`'s run: the key and the policy loaded, each input's messages de-identified through
//! the library into its output, and the report.

use super::args::DeidArgs;
use super::output::{check_dir, OutFile, Output};
use super::render::{self, Done};
use crate::diag::{Diag, Fatal};
use crate::exit::Exit;
use crate::sources::{self, Kind, Source};
use crate::stdout::Blocks;
use mllp::deid::{batch_trailer, Deidentifier, Key, KeyError, Policy, RawPolicy, Session};
use mllp::hl7::{is_envelope_segment, Filters};
use mllp::input::SplitOptions;
use std::collections::HashSet;
use std::io::{BufWriter, Write};
use std::path::Path;

const NO_KEY: &str = "no key: pass --key-file FILE (make one with `mllp deid --new-key FILE` \
    and keep it: the same key gives the same replacements in every run)";

pub fn run(args: DeidArgs, diag: &Diag) -> anyhow::Result<Exit> {
    Ok(deidentify(&args, diag).unwrap_or_else(|what| Fatal::new(Exit::Usage, what).report()))
}

/// The run's exit code, or the usage error that ends it.
fn deidentify(args: &DeidArgs, diag: &Diag) -> Result<Exit, String> {
    if let Some(path) = &args.new_key {
        Key::create(path).map_err(|e| new_key_error(&e))?;
        render::new_key(diag, path);
        return Ok(Exit::Success);
    }
    let key = load_key(args, diag)?;
    let policy = match &args.policy {
        Some(file) => load_policy(file)?,
        None => Policy::standard(),
    };
    let Some(out) = &args.out else {
        return Err("no output: pass --out DIR (one file per input) or --out - (stdout)".into());
    };
    let (sources, mut output) = inputs_and_output(args, diag, out)?;
    let deid = Deidentifier::new(&key, policy);
    let filters = Filters {
        filters: args.filters.clone(),
        charset: None,
    };
    let mut job = Job {
        session: deid.session(),
        filters: &filters,
        done: Done::default(),
        buf: Vec::new(),
    };
    for source in &sources {
        if let Err(e) = job.source(source, &mut output) {
            // The reader left (`| head`): end quietly, as every command does.
            if crate::stdout::is_closed() {
                return Ok(Exit::Usage);
            }
            render::report(diag, &job.done, job.session.report());
            return Err(e);
        }
    }
    if let Output::Stdout(out) = &mut output {
        if out.flush().is_err() {
            return Ok(Exit::Usage);
        }
    }
    render::report(diag, &job.done, job.session.report());
    Ok(Exit::Success)
}

/// The key from --key-file, said when others can read it.
fn load_key(args: &DeidArgs, diag: &Diag) -> Result<Key, String> {
    let Some(key_file) = &args.key_file else {
        return Err(NO_KEY.to_string());
    };
    let key = Key::load(key_file).map_err(|e| key_error(&e))?;
    if mllp::deid::readable_by_others(key_file).unwrap_or(false) {
        render::open_key(diag, key_file);
    }
    Ok(key)
}

/// The sources to read, and where their messages go (`out`: a folder, or `-` for stdout).
fn inputs_and_output(
    args: &DeidArgs,
    diag: &Diag,
    out: &Path,
) -> Result<(Vec<Source>, Output), String> {
    let sources = match &args.from_db {
        Some(file) => sources::collect(&[file.display().to_string()], false),
        None => sources::collect(&args.files, args.recursive),
    };
    let sources = sources::without_strays(sources.map_err(|e| e.to_string())?, false, diag);
    if let Some(file) = &args.from_db {
        if !sources.iter().all(|s| matches!(s.kind, Kind::Store(_))) {
            return Err(format!(
                "--from-db {}: not a listen --sqlite or relay store",
                file.display()
            ));
        }
    }
    let output = match out.as_os_str() == "-" {
        true => Output::Stdout(BufWriter::with_capacity(256 * 1024, Blocks::open())),
        false => {
            unique_names(&sources).and_then(|()| check_dir(out))?;
            Output::Dir(out.to_path_buf())
        }
    };
    Ok((sources, output))
}

/// One run's work, source by source.
struct Job<'a> {
    session: Session<'a>,
    filters: &'a Filters,
    done: Done,
    buf: Vec<u8>,
}

impl Job<'_> {
    /// De-identify one source into `output`; an error says what, never a value. A file under
    /// --out that is not finished is removed, so its messages count as neither written nor
    /// replaced; what went to stdout stays counted.
    fn source(&mut self, source: &Source, output: &mut Output) -> Result<(), String> {
        let (written, report) = (self.done.written, self.session.report().clone());
        let result = self.write(source, output);
        if let (Err(_), Output::Dir(_)) = (&result, &*output) {
            self.done.written = written;
            self.session.restore(report);
        }
        result
    }

    fn write(&mut self, source: &Source, output: &mut Output) -> Result<(), String> {
        // Segment ends as they are: the output is the input but for the values replaced.
        let split = SplitOptions {
            raw: true,
            ..SplitOptions::default()
        };
        // A batch file's envelope is written back where it stood, so a batch gives a batch.
        let messages = source
            .messages_and_envelope(split)
            .map_err(|e| e.to_string())?;
        let mut file = match output {
            Output::Dir(dir) => {
                Some(OutFile::create(dir, &source.output_name).map_err(|e| {
                    format!("--out {}: {e}", dir.join(&source.output_name).display())
                })?)
            }
            Output::Stdout(_) => None,
        };
        // Messages of the current batch left out by --where: its trailer's count then says
        // what was written.
        let (mut batch_written, mut batch_left_out) = (0, 0);
        for message in messages {
            let message = message.map_err(|e| e.to_string())?;
            if is_envelope_segment(&message.payload) {
                match message.payload.get(..3) {
                    Some(b"BTS") if batch_left_out > 0 => {
                        self.buf.clear();
                        batch_trailer(&message.payload, batch_written, &mut self.buf);
                        write(&mut file, output, &self.buf)?;
                    }
                    _ => write(&mut file, output, &message.payload)?,
                }
                if matches!(message.payload.get(..3), Some(b"BHS" | b"BTS")) {
                    (batch_written, batch_left_out) = (0, 0);
                }
                continue;
            }
            self.done.read += 1;
            if !self.filters.admits(&message.payload) {
                self.done.filtered_out += 1;
                batch_left_out += 1;
                continue;
            }
            batch_written += 1;
            self.buf.clear();
            self.session.apply(&message.payload, &mut self.buf);
            write(&mut file, output, &self.buf)?;
            self.done.written += 1;
        }
        if let Some(file) = file {
            let path = file.path().display().to_string();
            file.finish().map_err(|e| format!("{path}: {e}"))?;
            self.done.files += 1;
        }
        Ok(())
    }
}

/// `bytes` to the input's file under --out, or to stdout.
fn write(file: &mut Option<OutFile>, output: &mut Output, bytes: &[u8]) -> Result<(), String> {
    match (file, output) {
        (Some(file), _) => file
            .write(bytes)
            .map_err(|e| format!("{}: {e}", file.path().display())),
        (None, Output::Stdout(out)) => out.write_all(bytes).map_err(|e| format!("stdout: {e}")),
        (None, Output::Dir(_)) => Ok(()),
    }
}

/// Two inputs that would write the same output file.
fn unique_names(sources: &[Source]) -> Result<(), String> {
    let mut seen = HashSet::new();
    for source in sources {
        if !seen.insert(&source.output_name) {
            return Err(format!(
                "two inputs would both be written to {} under --out; give one directory that holds \
                 them both with --recursive (its layout is kept, so their names differ), or \
                 de-identify them in separate runs",
                source.output_name.display()
            ));
        }
    }
    Ok(())
}

/// A policy file: JSON when its name ends in `.json`, TOML otherwise.
fn load_policy(file: &Path) -> Result<Policy, String> {
    let name = file.display();
    let text = std::fs::read_to_string(file).map_err(|e| format!("--policy {name}: {e}"))?;
    let raw: RawPolicy = match file.extension().is_some_and(|e| e == "json") {
        true => serde_json::from_str(&text).map_err(|e| format!("--policy {name}: {e}"))?,
        false => toml::from_str(&text).map_err(|e| format!("--policy {name}: {}", e.message()))?,
    };
    Policy::from_raw(raw).map_err(|e| format!("--policy {name}: {e}"))
}

fn key_error(e: &KeyError) -> String {
    match e {
        KeyError::Io { error, .. } if error.kind() == std::io::ErrorKind::NotFound => {
            format!("--key-file {e}; {NO_KEY}")
        }
        _ => format!("--key-file {e}"),
    }
}

fn new_key_error(e: &KeyError) -> String {
    format!("--new-key {e}")
}
