//! Each message as `show` writes it on stdout: an outline (one line per non-empty field, its
//! name beside it, components under it with -v), a tab-separated line of the values asked for,
//! or one JSON object.

use crate::inspect::{escape_cell, escape_controls, shown, TextWarnings};
use crate::stdout::{Closed, Out};
use mllp::hl7::field_def;
use mllp::hl7::{Charset, Message, Path, Value};
use serde::Serialize;
use std::collections::BTreeMap;
use std::io::{BufWriter, Write};

/// How values are turned into text.
pub struct Style {
    /// Escape sequences left as written.
    pub raw: bool,
    /// Components under each field.
    pub components: bool,
    /// Paint paths and names (stdout is a terminal, or --color always).
    pub color: bool,
    /// Flush after each message (stdout is a terminal).
    pub flush_each: bool,
}

/// Writes messages to stdout, buffered.
pub struct Render {
    style: Style,
    out: BufWriter<Out>,
    line: String,
    /// The character sets read in, and what did not decode.
    pub text: TextWarnings,
    /// Messages not well formed (not starting with MSH, or a line that is no segment).
    pub broken: u64,
    pub first_broken: Option<String>,
}

/// One message's values as JSON.
#[derive(Serialize)]
struct ValuesRecord<'a> {
    source: &'a str,
    control_id: String,
    message_type: String,
    values: BTreeMap<String, serde_json::Value>,
}

/// One message's outline as JSON.
#[derive(Serialize)]
struct OutlineRecord<'a> {
    source: &'a str,
    control_id: String,
    message_type: String,
    fields: Vec<FieldRecord>,
}

#[derive(Serialize)]
struct FieldRecord {
    path: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    name: Option<&'static str>,
    value: String,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    components: Vec<ComponentRecord>,
}

#[derive(Serialize)]
struct ComponentRecord {
    path: String,
    value: String,
}

impl Render {
    pub fn new(style: Style, text: TextWarnings) -> Render {
        Render {
            style,
            out: BufWriter::with_capacity(64 * 1024, Out),
            line: String::with_capacity(256),
            text,
            broken: 0,
            first_broken: None,
        }
    }

    /// A value as text in `charset`, counting what does not decode.
    fn text(&self, value: &Value<'_>, charset: Charset, undecodable: &mut usize) -> String {
        let text = shown(value, charset, self.style.raw);
        *undecodable += text.undecodable();
        text.into_string()
    }

    /// One line of `label` and each value `paths` name, tab-separated.
    pub fn values(&mut self, label: &str, payload: &[u8], paths: &[Path]) -> Result<(), Closed> {
        let message = Message::new(payload);
        let charset = self.text.charset(&message, || label.to_string());
        self.check_shape(&message, label);
        let mut undecodable = 0;
        self.line.clear();
        escape_cell(label, &mut self.line);
        for path in paths {
            let mut one = |render: &mut Render, value: Value<'_>| {
                let text = shown(&value, charset, render.style.raw);
                undecodable += text.undecodable();
                render.line.push('\t');
                escape_cell(text.as_str(), &mut render.line);
            };
            if path.is_multiple() {
                for value in message.values(path) {
                    one(self, value);
                }
            } else {
                one(self, message.get(path));
            }
        }
        self.line.push('\n');
        self.text.undecodable(undecodable, || label.to_string());
        let line = std::mem::take(&mut self.line);
        let written = self.write(line.as_bytes());
        self.line = line;
        written
    }

    /// One JSON object of `label`'s values at `paths`.
    pub fn values_json(
        &mut self,
        label: &str,
        payload: &[u8],
        paths: &[Path],
    ) -> Result<(), Closed> {
        let message = Message::new(payload);
        let charset = self.text.charset(&message, || label.to_string());
        self.check_shape(&message, label);
        let mut undecodable = 0;
        let mut values = BTreeMap::new();
        for path in paths {
            let value = if path.is_multiple() {
                let all: Vec<serde_json::Value> = message
                    .values(path)
                    .map(|v| self.text(&v, charset, &mut undecodable).into())
                    .collect();
                all.into()
            } else {
                self.text(&message.get(path), charset, &mut undecodable)
                    .into()
            };
            values.insert(path.to_string(), value);
        }
        let (control_id, message_type) = self.header(&message, charset, &mut undecodable);
        self.text.undecodable(undecodable, || label.to_string());
        let record = ValuesRecord {
            source: label,
            control_id,
            message_type,
            values,
        };
        self.record(&record)
    }

    fn header(
        &self,
        message: &Message<'_>,
        charset: Charset,
        undecodable: &mut usize,
    ) -> (String, String) {
        let get = |p: &str| message.get(&p.parse().unwrap_or_else(|e| unreachable!("{e}")));
        (
            self.text(&get("MSH-10"), charset, undecodable),
            self.text(&get("MSH-9"), charset, undecodable),
        )
    }

    /// The outline of one message: its label, then a line per non-empty field.
    pub fn outline(&mut self, label: &str, payload: &[u8], json: bool) -> Result<(), Closed> {
        let message = Message::new(payload);
        let charset = self.text.charset(&message, || label.to_string());
        self.check_shape(&message, label);
        let mut undecodable = 0;
        let fields = self.fields(&message, charset, &mut undecodable);
        let (control_id, message_type) = self.header(&message, charset, &mut undecodable);
        self.text.undecodable(undecodable, || label.to_string());
        let record = OutlineRecord {
            source: label,
            control_id,
            message_type,
            fields,
        };
        if json {
            return self.record(&record);
        }
        self.write(outline_text(&record, self.style.color).as_bytes())
    }

    /// Each non-empty field, named, with its components when they are asked for.
    fn fields(
        &self,
        message: &Message<'_>,
        charset: Charset,
        undecodable: &mut usize,
    ) -> Vec<FieldRecord> {
        let version = message
            .get(&"MSH-12.1".parse().unwrap_or_else(|e| unreachable!("{e}")))
            .raw();
        let mut fields = Vec::new();
        let mut seen: BTreeMap<Vec<u8>, usize> = BTreeMap::new();
        for segment in message.segments() {
            let name = segment.name();
            let occurrence = seen.entry(name.to_vec()).or_default();
            *occurrence += 1;
            let prefix = match *occurrence {
                1 => String::from_utf8_lossy(name).into_owned(),
                n => format!("{}({n})", String::from_utf8_lossy(name)),
            };
            for (n, value) in segment.fields() {
                if value.is_empty() {
                    continue;
                }
                let path = format!("{prefix}-{n}");
                let components = match self.style.components && !(segment.is_header() && n <= 2) {
                    true => self.components(&value, &path, charset, undecodable),
                    false => Vec::new(),
                };
                fields.push(FieldRecord {
                    name: field_def(name, n, version).map(|d| d.name),
                    value: self.text(&value, charset, undecodable),
                    path,
                    components,
                });
            }
        }
        fields
    }

    /// The non-empty components of a field at `path`, when it has more than one or repeats.
    fn components(
        &self,
        value: &Value<'_>,
        path: &str,
        charset: Charset,
        undecodable: &mut usize,
    ) -> Vec<ComponentRecord> {
        let mut components = Vec::new();
        let repetitions: Vec<Value<'_>> = value.repetitions().collect();
        for (r, repetition) in repetitions.iter().enumerate() {
            let parts: Vec<Value<'_>> = repetition.components().collect();
            if parts.len() < 2 && repetitions.len() < 2 {
                continue;
            }
            let rep = match repetitions.len() {
                1 => String::new(),
                _ => format!("({})", r + 1),
            };
            for (c, part) in parts.iter().enumerate() {
                if part.is_empty() {
                    continue;
                }
                components.push(ComponentRecord {
                    path: format!("{path}{rep}.{}", c + 1),
                    value: self.text(part, charset, undecodable),
                });
            }
        }
        components
    }

    /// Count a message that is not well formed, for the warning at the end.
    fn check_shape(&mut self, message: &Message<'_>, label: &str) {
        let mut segments = message.segments();
        let first_ok = segments
            .next()
            .is_some_and(|s| s.is_header() && s.name() == b"MSH");
        let ids_ok = message.segments().all(|s| {
            let name = s.name();
            name.len() == 3
                && name
                    .iter()
                    .all(|b| b.is_ascii_uppercase() || b.is_ascii_digit())
        });
        if !(first_ok && ids_ok) {
            self.broken += 1;
            self.first_broken.get_or_insert_with(|| label.to_string());
        }
    }

    fn record(&mut self, record: &impl Serialize) -> Result<(), Closed> {
        let mut line = serde_json::to_vec(record).unwrap_or_default();
        line.push(b'\n');
        self.write(&line)
    }

    fn write(&mut self, bytes: &[u8]) -> Result<(), Closed> {
        self.out.write_all(bytes).map_err(|_| Closed)?;
        if self.style.flush_each {
            self.out.flush().map_err(|_| Closed)?;
        }
        Ok(())
    }

    /// Everything buffered, written.
    pub fn finish(&mut self) -> Result<(), Closed> {
        self.out.flush().map_err(|_| Closed)
    }
}

/// The outline as people read it: the label, then each field's path, name and value, with
/// its components under it, the paths aligned.
fn outline_text(record: &OutlineRecord<'_>, color: bool) -> String {
    let paint = |text: &str, sgr: &str| crate::diag::paint(color, text, sgr);
    let mut out = String::new();
    let cell = |text: &str| {
        let mut s = String::new();
        escape_controls(text, &mut s);
        s
    };
    out.push_str(&paint(&cell(record.source), "1"));
    out.push_str(&format!(
        "  {}  {}\n",
        cell(&record.message_type),
        cell(&record.control_id)
    ));
    let width = record
        .fields
        .iter()
        .flat_map(|f| {
            let parts = f.components.iter().map(|c| c.path.len() + 2);
            std::iter::once(f.path.len()).chain(parts)
        })
        .max()
        .unwrap_or(0)
        .max(6);
    for field in &record.fields {
        let name = field.name.unwrap_or("");
        let path = format!("{:width$}", field.path);
        out.push_str(&format!(
            "  {}  {}  {}\n",
            paint(&path, "36"),
            paint(&format!("{name:32}"), "2"),
            cell(&field.value)
        ));
        for component in &field.components {
            let path = format!("{:w$}", component.path, w = width - 2);
            out.push_str(&format!(
                "    {}  {:32}  {}\n",
                paint(&path, "36"),
                "",
                cell(&component.value)
            ));
        }
    }
    out.push('\n');
    out
}
