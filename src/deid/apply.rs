//! One message de-identified: its bytes copied, each value a rule takes in replaced where it
//! lies, everything else (delimiters, segment order and terminators, MSH) byte for byte.

use super::derive::Deriver;
use super::pass::Pass;
use super::plan::{plans, SegmentPlan, Table};
use super::policy::Policy;
use super::remember::{Hashed, Remembered};
use super::replace::replace;
use super::report::Report;
use super::rule::Method;
use super::scan::{Fields, Marks};
use super::Key;
use crate::hl7::charset::Charset;
use crate::hl7::mask::BLOCK;
use crate::hl7::{escape, segments, Delimiters, Message, Place, Segment, Value};
use std::borrow::Cow;
use std::fmt;

/// Replacements remembered at most, per session, and the longest original remembered: values
/// recur (a patient's address in PID, NK1, GT1 and IN1, a doctor in every visit), and a lookup
/// costs a fraction of an HMAC; free text rarely recurs. Few enough that the table stays in
/// the CPU's cache (a lookup that waits for memory costs what deriving afresh does): under
/// 1 MB a session.
const REMEMBERED: usize = 1 << 12;
const REMEMBERED_LEN: usize = 64;

/// Replaces the values a [`Policy`] names, under a [`Key`]; each thread works through a
/// [`Session`] of its own. `Debug` never shows the key.
///
/// ```
/// use mllp::deid::{Deidentifier, Key, Policy};
///
/// let deid = Deidentifier::new(&Key::from_bytes([9; 32]), Policy::standard());
/// let message = b"MSH|^~\\&|ADT|H|||20240101||ADT^A01|C1|P|2.5\rPID|1||100234^^^H||DOE^JANE||19800101\r";
/// let mut session = deid.session();
/// let mut out = Vec::new();
/// session.apply(message, &mut out);
/// let text = String::from_utf8(out).unwrap();
/// assert!(text.starts_with("MSH|^~\\&|ADT|H|||20240101||ADT^A01|C1|P|2.5\rPID|1||"));
/// assert!(!text.contains("100234") && !text.contains("DOE") && !text.contains("19800101"));
/// assert_eq!(session.report().replaced("PID-5.1"), 1);
/// ```
pub struct Deidentifier {
    deriver: Deriver,
    policy: Policy,
    /// For each segment a rule names: its rules, by field.
    segments: Vec<SegmentPlan>,
}

impl Deidentifier {
    /// Replace under `key` what `policy` names.
    pub fn new(key: &Key, policy: Policy) -> Deidentifier {
        Deidentifier {
            deriver: Deriver::new(key),
            segments: plans(&policy),
            policy,
        }
    }

    /// The same, every rule held against each value in turn: what the plan is tested against.
    #[cfg(test)]
    pub(super) fn held_against_each_value(mut self) -> Deidentifier {
        for segment in &mut self.segments {
            segment.fields.iter_mut().for_each(|f| f.table = None);
        }
        self
    }

    /// The policy applied.
    pub fn policy(&self) -> &Policy {
        &self.policy
    }

    pub(super) fn deriver(&self) -> &Deriver {
        &self.deriver
    }

    /// A session: one thread's work, with its report.
    pub fn session(&self) -> Session<'_> {
        self.session_remembering(REMEMBERED)
    }

    /// A session remembering at most `most` replacements (none: each one derived afresh).
    pub(super) fn session_remembering(&self, most: usize) -> Session<'_> {
        let rules = self.policy.rules();
        Session {
            deid: self,
            report: Report {
                paths: rules.iter().map(|r| r.path.to_string()).collect(),
                counts: vec![0; rules.len()],
            },
            remembered: Remembered::new(most),
            text: Vec::new(),
            here: Vec::new(),
            seen: vec![0; self.segments.len()],
        }
    }
}

/// One thread's de-identification: the report so far, replacements remembered, and the
/// buffers reused from message to message.
pub struct Session<'d> {
    deid: &'d Deidentifier,
    report: Report,
    /// Method, date offset and original -> replacement (escape sequences decoded).
    remembered: Remembered,
    text: Vec<u8>,
    here: Vec<usize>,
    /// Segments of each named segment seen in the current message.
    seen: Vec<usize>,
}

impl Session<'_> {
    /// Append `message` de-identified to `out`.
    pub fn apply(&mut self, message: &[u8], out: &mut Vec<u8>) {
        self.seen.iter_mut().for_each(|n| *n = 0);
        let mut pass = Pass::new(message, out);
        pass.out.reserve(message.len() + message.len() / 8);
        // Each segment under the delimiters of the header before it, as `Message` reads them.
        let mut delimiters = Message::new(message).delimiters();
        pass.delimit(&delimiters);
        for (_, bytes) in segments(message) {
            let Some(&[a, b, c]) = bytes.first_chunk::<3>() else {
                continue;
            };
            let name = [a, b, c];
            let header = matches!(&name, b"MSH" | b"FHS" | b"BHS") && bytes.len() > 3;
            if header {
                delimiters = Delimiters::of_header(bytes);
                pass.delimit(&delimiters);
            }
            // A name of three bytes: a header's first three, or those the first field
            // separator follows.
            let three = header
                || (bytes.get(3).is_none_or(|&s| s == delimiters.field)
                    && !name.contains(&delimiters.field));
            if !three {
                continue;
            }
            let segment = Segment::new(bytes, delimiters);
            // Each PID starts its patient (an A17 or A40 carries two): its dates and those of
            // the segments after it move by that patient's offset.
            if name == *b"PID" {
                pass.patient = Some(segment);
                pass.days = None;
            }
            let group = self.deid.segments.iter().position(|s| s.name == name);
            let Some(group) = group else {
                continue;
            };
            self.seen[group] += 1;
            self.segment(&mut pass, segment, header, &delimiters, group);
        }
        pass.finish();
    }

    /// What the session has replaced so far.
    pub fn report(&self) -> &Report {
        &self.report
    }

    /// Go back to an earlier report: the messages replaced since were not kept.
    pub fn restore(&mut self, report: Report) {
        self.report = report;
    }

    fn segment<'a>(
        &mut self,
        pass: &mut Pass<'a, '_>,
        segment: Segment<'a>,
        header: bool,
        d: &Delimiters,
        group: usize,
    ) {
        let plan = &self.deid.segments[group];
        // Fields 1 on (2 on in a header, whose first is the separator itself) after the name.
        let Some(rest) = segment.bytes().get(4..) else {
            return;
        };
        let d = *d;
        let (name, occurrence) = (plan.name, self.seen[group]);
        let mut fields = Fields::new(rest, d.field, if header { 2 } else { 1 });
        let mut marks = Marks::new(rest, d);
        for fp in &plan.fields {
            let n = fp.field;
            let Some(raw) = fields.get(n) else {
                continue;
            };
            // The delimiters themselves are never replaced.
            if (header && n <= 2) || raw.is_empty() {
                continue;
            }
            match &fp.table {
                // One rule blanking the whole field: the field goes, separators and all.
                Some(Table::Blank(rule)) => {
                    pass.put(raw, &[], &d);
                    self.report.counts[*rule] += 1;
                }
                Some(table) => self.walk(pass, &mut marks, raw, table),
                None => {
                    let mut here = std::mem::take(&mut self.here);
                    here.clear();
                    // The rules for this occurrence whose condition holds.
                    for &i in &plan.rules[fp.rules.clone()] {
                        let rule = &self.deid.policy.rules()[i];
                        if !rule.path.reaches(&name, occurrence, n) {
                            continue;
                        }
                        if let Some(when) = &rule.when {
                            let value = segment.field(when.field).and_then(|f| f.component(1));
                            let value = value.map(|v| v.decoded()).unwrap_or_default();
                            if !when.holds(&value) {
                                continue;
                            }
                        }
                        here.push(i);
                    }
                    if let (false, Some(field)) = (here.is_empty(), segment.field(n)) {
                        self.field(pass, Place::field(&name, occurrence, n), field, &here);
                    }
                    self.here = here;
                }
            }
        }
    }

    /// A field whose components' rules are known, read from its marks: each subcomponent of a
    /// component a rule replaces handed on, the others passed over, and whether it holds an
    /// escape sequence noted on the way; no other byte is looked at.
    fn walk<'a>(
        &mut self,
        pass: &mut Pass<'a, '_>,
        marks: &mut Marks<'a>,
        raw: &'a [u8],
        table: &Table,
    ) {
        let (d, bytes) = (marks.d, marks.bytes);
        let from = raw.as_ptr() as usize - bytes.as_ptr() as usize;
        let to = from + raw.len();
        let mut component = 1;
        let mut rule = table.component(1);
        let (mut start, mut escaped) = (from, false);
        let mut block = from - from % BLOCK;
        while block < to {
            // The marks of the field's bytes in this block.
            let mut bits = marks.at(block) & u64::MAX << from.saturating_sub(block);
            if to - block < BLOCK {
                bits &= (1u64 << (to - block)) - 1;
            }
            while bits != 0 {
                let at = block + bits.trailing_zeros() as usize;
                bits &= bits - 1;
                let b = bytes[at];
                if b != d.repetition && b != d.component && b != d.subcomponent {
                    escaped = true;
                    continue;
                }
                if let Some(rule) = rule {
                    self.leaf(pass, &bytes[start..at], escaped, rule, &d);
                }
                (start, escaped) = (at + 1, false);
                // A repetition starts again at its first component; a subcomponent stays in its.
                if b == d.repetition {
                    component = 1;
                    rule = table.component(1);
                } else if b == d.component {
                    component += 1;
                    rule = table.component(component);
                }
            }
            block += BLOCK;
        }
        if let Some(rule) = rule {
            self.leaf(pass, &bytes[start..to], escaped, rule, &d);
        }
    }

    fn field<'a>(
        &mut self,
        pass: &mut Pass<'a, '_>,
        at: Place<'_>,
        field: Value<'a>,
        rules: &[usize],
    ) {
        let policy = &self.deid.policy;
        // One rule blanking the whole field: the field goes, separators and all.
        if let [only] = rules {
            let rule = &policy.rules()[*only];
            if rule.method == Method::Blank && rule.path.depth() == crate::hl7::Depth::Field {
                pass.put(field.raw(), &[], &field.delimiters());
                self.report.counts[*only] += 1;
                return;
            }
        }
        for (r, repetition) in field.repetitions().enumerate() {
            for (c, component) in repetition.components().enumerate() {
                for (s, leaf) in component.subcomponents().enumerate() {
                    let place = Place {
                        repetition: Some(r + 1),
                        component: Some(c + 1),
                        subcomponent: Some(s + 1),
                        ..at
                    };
                    if let Some(rule) = policy.decide(rules, &place) {
                        self.leaf(pass, leaf.raw(), true, rule, &leaf.delimiters());
                    }
                }
            }
        }
    }

    /// One value (a subcomponent's bytes as written; `escaped` when they may hold an escape
    /// sequence) replaced under `rule`.
    fn leaf<'a>(
        &mut self,
        pass: &mut Pass<'a, '_>,
        raw: &'a [u8],
        escaped: bool,
        rule: usize,
        delimiters: &Delimiters,
    ) {
        // Empty, or HL7's explicit null: nothing to replace.
        if raw.is_empty() || raw == b"\"\"" {
            return;
        }
        let deid = self.deid;
        let method = deid.policy.rules()[rule].method;
        if method == Method::Keep {
            return;
        }
        if method == Method::Blank {
            if pass.put(raw, &[], delimiters) {
                self.report.counts[rule] += 1;
            }
            return;
        }
        let decoded = match escaped {
            true => escape::decode(raw, delimiters),
            false => Cow::Borrowed(raw),
        };
        let named;
        let original: &[u8] = match method {
            // ASCII in UTF-8 is text as it is.
            Method::Name if decoded.is_ascii() && pass.charset() == Charset::UTF_8 => &decoded,
            // The name as text (MSH-18 decoded), so `Müller` reads alike in any character set.
            Method::Name => {
                named = pass.charset().decode(&decoded).into_cow();
                named.as_bytes()
            }
            _ => &decoded,
        };
        let days = match method {
            Method::ShiftDate => pass.days(deid.deriver()),
            _ => 0,
        };
        // Method, offset (-365 to 0 days: two bytes hold it) and original: what the
        // replacement depends on.
        let [low, high] = (days as i16).to_le_bytes();
        let head = [method as u8, low, high];
        let hashed = Hashed::of(head, original);
        let text = match self.remembered.find(hashed, head, original) {
            Some(known) => known,
            None => {
                self.text.clear();
                replace(method, &deid.deriver, original, days, &mut self.text);
                if original.len() <= REMEMBERED_LEN {
                    self.remembered.insert(hashed, head, original, &self.text);
                }
                &self.text
            }
        };
        if pass.put(raw, text, delimiters) {
            self.report.counts[rule] += 1;
        }
    }
}

impl fmt::Debug for Deidentifier {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Deidentifier")
            .field("rules", &self.policy.rules().len())
            .finish_non_exhaustive()
    }
}

impl fmt::Debug for Session<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Session")
            .field("remembered", &self.remembered.len())
            .finish_non_exhaustive()
    }
}
