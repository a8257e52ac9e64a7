//! Answers patched from a template: consecutive messages from one sender usually differ only in
//! MSH-7 and MSH-10, so their positive ACKs differ only in MSH-7, MSH-10 and MSA-2. The last such
//! ACK is kept with those three cut out and filled in for the next message whose MSH matches
//! byte for byte outside MSH-7 and MSH-10; anything else is built in full.

use super::policy::Decision;
use super::render;
use super::{AckCode, AckContext};
use crate::framing::{self, FS, VT};
use crate::hl7::Msh;

/// The last positive ACK written, with the parts that change per message cut out.
#[derive(Debug, Clone, Default)]
pub(crate) struct AckTemplate {
    /// The inbound MSH it answered, without MSH-7 and MSH-10.
    header: Vec<u8>,
    /// Where MSH-7 and MSH-10 were cut from `header`.
    header_cuts: [usize; 2],
    code: Option<AckCode>,
    /// The answer without its MSH-7, its MSH-10 and MSA-2.
    answer: Vec<u8>,
    /// Where those three were cut from `answer`.
    answer_cuts: [usize; 3],
    /// The last timestamp found plain: it changes once a second, so most answers skip the check.
    plain_stamp: String,
    /// `answer` up to its MSH-10, with `plain_stamp` for its MSH-7: written with one copy.
    stamped: Vec<u8>,
    /// `answer` holds neither VT nor FS, found when it was learned.
    unframed: bool,
}

/// Where a field lies in `segment` (`field` is a slice of it).
fn place(segment: &[u8], field: &[u8]) -> Option<(usize, usize)> {
    let start = (field.as_ptr() as usize).checked_sub(segment.as_ptr() as usize)?;
    let end = start + field.len();
    (end <= segment.len()).then_some((start, end))
}

/// Our own text the answer writes as is: letters and digits are never escaped.
fn plain(text: &str) -> bool {
    // No early exit: the check runs a vector at a time over a control ID per message.
    !text.is_empty()
        && text
            .bytes()
            .fold(true, |plain, b| plain & b.is_ascii_alphanumeric())
}

/// MSH-7 and MSH-10 of `msh` as places in its segment, when a template can stand for its answer.
fn cuts(msh: &Msh<'_>, decision: &Decision, ctx: &AckContext) -> Option<[(usize, usize); 2]> {
    if decision.negative.is_some()
        || decision.headerless
        || !decision.code.is_positive()
        || ctx.worded
    {
        return None;
    }
    if !plain(&ctx.timestamp) || !plain(&ctx.control_id) || !render::usable(&msh.delimiters) {
        return None;
    }
    let date = place(msh.segment, msh.date_time()?)?;
    let control = place(msh.segment, msh.control_id()?)?;
    (date.1 < control.0).then_some([date, control])
}

impl AckTemplate {
    /// Write the answer to `msh` from the template into `out`; `None` (nothing written) when
    /// the template does not stand for it, else whether the answer is known to hold neither VT
    /// nor FS (its fixed parts were checked when learned, the timestamp and control ID are
    /// plain, the echoed MSH-10 is checked here), so it can be framed without a search.
    ///
    /// What [`cuts`] asks of the header follows from comparing it: a header equal to the learned
    /// one up to MSH-7 declares the same (usable) delimiters, and its MSH-7 starts where the
    /// learned one did. The learned code is positive, so an equal code is too.
    #[inline]
    pub(crate) fn write(
        &mut self,
        out: &mut Vec<u8>,
        msh: &Msh<'_>,
        decision: &Decision,
        ctx: &AckContext,
    ) -> Option<bool> {
        if self.code != Some(decision.code)
            || decision.negative.is_some()
            || decision.headerless
            || ctx.worded
        {
            return None;
        }
        if ctx.timestamp != self.plain_stamp {
            if !plain(&ctx.timestamp) {
                return None;
            }
            self.stamp(&ctx.timestamp);
        }
        if !plain(&ctx.control_id) {
            return None;
        }
        let s = msh.segment;
        let [a, b] = self.header_cuts;
        if s.get(..a) != Some(&self.header[..a]) {
            return None;
        }
        let (date, control) = match msh.indexed_to_msh10() {
            Some(fields) => (fields.span(7), fields.span(10)),
            None => match (msh.span(7), msh.span(10)) {
                (Some(date), Some(control)) => (date, control),
                _ => return None,
            },
        };
        let same = s.get(date.1..control.0) == Some(&self.header[a..b])
            && s.get(control.1..) == Some(&self.header[b..]);
        if !same {
            return None;
        }
        let [_, y, z] = self.answer_cuts;
        let t = &self.answer;
        let echoed = &s[control.0..control.1];
        out.reserve(self.stamped.len() + (t.len() - y) + ctx.control_id.len() + echoed.len());
        out.extend_from_slice(&self.stamped);
        out.extend_from_slice(ctx.control_id.as_bytes());
        out.extend_from_slice(&t[y..z]);
        out.extend_from_slice(echoed);
        out.extend_from_slice(&t[z..]);
        let unframed = self.unframed && !framing::holds_framing_byte(echoed);
        Some(unframed)
    }

    /// Keep `built`, the full answer to `msh`, as the template when it can stand for the next.
    pub(crate) fn learn(
        &mut self,
        built: &[u8],
        msh: &Msh<'_>,
        decision: &Decision,
        ctx: &AckContext,
    ) {
        self.code = None;
        let Some([date, control]) = cuts(msh, decision, ctx) else {
            return;
        };
        let Some(answer_cuts) = answer_places(built, msh, ctx) else {
            return;
        };
        let s = msh.segment;
        self.header.clear();
        self.header.extend_from_slice(&s[..date.0]);
        let a = self.header.len();
        self.header.extend_from_slice(&s[date.1..control.0]);
        let b = self.header.len();
        self.header.extend_from_slice(&s[control.1..]);
        self.header_cuts = [a, b];
        let (ts, id) = (ctx.timestamp.len(), ctx.control_id.len());
        let [x, y, z] = answer_cuts;
        self.answer.clear();
        self.answer.extend_from_slice(&built[..x]);
        self.answer.extend_from_slice(&built[x + ts..y]);
        self.answer.extend_from_slice(&built[y + id..z]);
        self.answer
            .extend_from_slice(&built[z + (control.1 - control.0)..]);
        self.answer_cuts = [x, y - ts, z - ts - id];
        self.unframed = memchr::memchr2(VT, FS, &self.answer).is_none();
        // The timestamp is plain: `cuts` checked it.
        self.stamp(&ctx.timestamp);
        self.code = Some(decision.code);
    }

    /// Take `timestamp`, found plain, as the one the template's answers show.
    fn stamp(&mut self, timestamp: &str) {
        self.plain_stamp.clear();
        self.plain_stamp.push_str(timestamp);
        let [x, y, _] = self.answer_cuts;
        self.stamped.clear();
        self.stamped.extend_from_slice(&self.answer[..x]);
        self.stamped.extend_from_slice(timestamp.as_bytes());
        self.stamped.extend_from_slice(&self.answer[x..y]);
    }
}

/// Where MSH-7, MSH-10 and MSA-2 start in `built`, a positive answer: MSH-7 after the sixth
/// field separator, MSH-10 after the ninth (the answer's MSH-2 and copied fields hold none), MSA-2
/// just before the final CR. `None` unless each holds what the answer put there.
fn answer_places(built: &[u8], msh: &Msh<'_>, ctx: &AckContext) -> Option<[usize; 3]> {
    let field = msh.delimiters.field;
    let mut seps = built
        .iter()
        .enumerate()
        .filter(|(_, &b)| b == field)
        .map(|(i, _)| i + 1);
    let date = seps.nth(5)?;
    let control = seps.nth(2)?;
    let echoed = msh.control_id()?;
    let msa2 = built.len().checked_sub(1 + echoed.len())?;
    let holds = |at: usize, what: &[u8]| built.get(at..at + what.len()) == Some(what);
    let fits = holds(date, ctx.timestamp.as_bytes())
        && holds(control, ctx.control_id.as_bytes())
        && holds(msa2, echoed)
        && built.last() == Some(&b'\r')
        && msa2 > 0
        && built[msa2 - 1] == field
        && date < control
        && control + ctx.control_id.len() <= msa2;
    fits.then_some([date, control, msa2])
}

#[cfg(test)]
mod tests;
