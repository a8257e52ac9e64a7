//! The input flags of `show` and `check`: what to read and which messages of it.

use crate::global::heading;
use crate::values;
use clap::Args;
use mllp::hl7::{Charset, Filter, Filters};
use std::path::PathBuf;

#[derive(Debug, Clone, Args)]
pub struct InspectArgs {
    /// Files, globs or directories (with --recursive); `-` or none reads stdin.
    #[arg(value_name = "FILES")]
    pub files: Vec<String>,
    /// Walk directories given as inputs.
    #[arg(short, long, help_heading = heading::INPUT)]
    pub recursive: bool,
    /// Read the messages of a listen --sqlite or relay store.
    ///
    /// In arrival order, a page of rows at a time.
    #[arg(long, value_name = "FILE", conflicts_with_all = ["files", "recursive", "postgres"], help_heading = heading::INPUT)]
    pub from_db: Option<PathBuf>,
    /// Read the messages of a listen --postgres store.
    ///
    /// In arrival order. A PostgreSQL URL (postgres://user@host:5432/db?sslmode=require); what it leaves out
    /// comes from PGPASSWORD and the other PG variables, as with listen --postgres. Only
    /// reads: SELECT on table messages.
    #[arg(long, value_name = "URL", conflicts_with_all = ["files", "recursive"], help_heading = heading::INPUT)]
    pub postgres: Option<String>,
    /// Only the messages for which FILTER holds (repeat: all must hold).
    ///
    /// PATH=VALUE, PATH!=VALUE, PATH~REGEX or PATH alone (not empty): `--where PID-3.1=100002`,
    /// `--where 'MSH-9~^ADT'`. Values compare as text, escape sequences decoded. The others
    /// are counted, never an error. See docs/hl7.md.
    #[arg(long = "where", value_name = "FILTER", value_parser = values::filter(), help_heading = heading::INPUT)]
    pub filters: Vec<Filter>,
    /// Read text in this character set, whatever MSH-18 says.
    ///
    /// Also where MSH-18 is empty. HL7 names (ASCII, 8859/1 to 8859/16, UNICODE UTF-8, GB 18030-2000, KS X 1001, BIG-5,
    /// ISO IR87) or common ones (UTF-8, latin1, windows-1252). Without it: MSH-18, and UTF-8
    /// (which reads ASCII alike) where MSH-18 is empty.
    #[arg(long, value_name = "NAME", value_parser = values::charset(), help_heading = heading::INPUT)]
    pub charset: Option<Charset>,
    /// Largest message read (K, M, G).
    ///
    /// As send's --max-frame-size: a larger one ends the reading of its input with an error
    /// that names it (exit 2).
    #[arg(long, value_name = "SIZE", value_parser = values::size(), default_value = "16MiB", help_heading = heading::INPUT)]
    pub max_frame_size: u64,
}

impl InspectArgs {
    /// How the inputs are split: `batch` keeps a batch whole.
    pub fn split(&self, batch: bool) -> mllp::input::SplitOptions {
        mllp::input::SplitOptions {
            batch,
            max_message: usize::try_from(self.max_frame_size).unwrap_or(usize::MAX),
            ..mllp::input::SplitOptions::default()
        }
    }

    /// The filters and character set, as the library takes them.
    pub fn filters(&self) -> Filters {
        Filters {
            filters: self.filters.clone(),
            charset: self.charset,
        }
    }
}
