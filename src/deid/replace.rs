//! One value replaced by one method: a name from the list in the original's case, a value of
//! the same shape, a date moved, or nothing.

use super::date;
use super::derive::{Deriver, Domain};
use super::names::NAMES;
use super::rule::Method;
use super::shape::same_shape;

/// The patient's date offset in days, earlier by 1 to 365: from the patient's identifier, so
/// every date of one patient moves alike and intervals stay true.
pub(super) fn date_offset(deriver: &Deriver, patient: &[u8]) -> i64 {
    let d = deriver.digest(Domain::DateOffset, 0, patient);
    -(1 + i64::from(u16::from_le_bytes([d[0], d[1]]) % 365))
}

/// `text` (escape sequences decoded, not empty) replaced by `method` (neither keep nor blank),
/// appended to `out`; `days` is the patient's date offset.
pub(super) fn replace(
    method: Method,
    deriver: &Deriver,
    text: &[u8],
    days: i64,
    out: &mut Vec<u8>,
) {
    match method {
        Method::Keep | Method::Blank => {}
        Method::Hash => same_shape(deriver, text, out),
        Method::Name => name(deriver, text, out),
        // Not a date: it still identifies someone, so it changes shape-wise.
        Method::ShiftDate => {
            if !date::shift(text, days, out) {
                same_shape(deriver, text, out);
            }
        }
    }
}

/// A name from the list for a name: the same name whatever the original's case, written in
/// the original's case (upper, lower or capitalised); an initial stays an initial. A value
/// without a letter gets one of the same shape.
fn name(deriver: &Deriver, text: &[u8], out: &mut Vec<u8>) {
    // UTF-8 (the caller decoded the message's character set); a byte that was not is kept
    // apart by the lossy reading's replacement character.
    let text = String::from_utf8_lossy(text);
    let letters = text.chars().filter(|c| c.is_alphabetic()).count();
    if letters == 0 && text.is_ascii() {
        return same_shape(deriver, text.as_bytes(), out);
    }
    // One person whatever the case: `MÜLLER` and `Müller` give one replacement. Upper case,
    // so an ASCII name keeps the replacement earlier versions gave it under the same key.
    let folded = text.to_uppercase();
    let initial = letters == 1 && text.chars().count() <= 2;
    let letter = text.chars().find(|c| c.is_alphabetic());
    // Never the original: for an initial, never its letter.
    let same = |chosen: &str| match initial {
        true => letter.is_some_and(|l| chosen.chars().next() == l.to_uppercase().next()),
        false => chosen == folded,
    };
    let mut chosen = NAMES[0];
    for round in 0..=u8::MAX {
        let d = deriver.digest(Domain::Name, round, folded.as_bytes());
        let at = u64::from_le_bytes([d[0], d[1], d[2], d[3], d[4], d[5], d[6], d[7]]);
        chosen = NAMES[(at % NAMES.len() as u64) as usize];
        if !same(chosen) {
            break;
        }
    }
    let from = out.len();
    match initial {
        true => out.push(chosen.as_bytes()[0]),
        false => out.extend_from_slice(chosen.as_bytes()),
    }
    if initial && text.ends_with('.') {
        out.push(b'.');
    }
    let first_upper = text.chars().next().is_some_and(char::is_uppercase);
    let any_lower = text.chars().any(char::is_lowercase);
    match (first_upper, any_lower) {
        (false, true) => out[from..].make_ascii_lowercase(),
        (true, true) => out[from + 1..].make_ascii_lowercase(),
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::deid::Key;

    fn n(text: &str) -> String {
        let d = Deriver::new(&Key::from_bytes([3; 32]));
        let mut out = Vec::new();
        name(&d, text.as_bytes(), &mut out);
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn a_name_comes_from_the_list_in_the_originals_case() {
        let upper = n("SMITHERSON");
        assert!(NAMES.contains(&upper.as_str()), "{upper}");
        assert_eq!(n("smitherson"), upper.to_ascii_lowercase());
        let title = n("Smitherson");
        assert_eq!(title.to_ascii_uppercase(), upper);
        assert!(title[1..].bytes().all(|b| b.is_ascii_lowercase()));
        assert_eq!(n("Q").len(), 1);
        assert_eq!(n("Q.").len(), 2);
        assert!(n("4711").bytes().all(|b| b.is_ascii_digit()));
        for listed in NAMES.iter().take(40) {
            assert_ne!(n(listed), *listed);
        }
    }

    #[test]
    fn an_initial_is_never_its_own_letter() {
        for key in 0..16 {
            let d = Deriver::new(&Key::from_bytes([key; 32]));
            for letter in b'A'..=b'Z' {
                for text in [
                    vec![letter],
                    vec![letter, b'.'],
                    vec![letter.to_ascii_lowercase()],
                ] {
                    let mut out = Vec::new();
                    name(&d, &text, &mut out);
                    assert_eq!(out.len(), text.len());
                    assert!(!out[0].eq_ignore_ascii_case(&letter), "{text:?} -> {out:?}");
                }
            }
        }
    }

    #[test]
    fn offsets_are_earlier_by_a_day_to_a_year() {
        let d = Deriver::new(&Key::from_bytes([3; 32]));
        let offsets: Vec<i64> = (0..500u32)
            .map(|i| date_offset(&d, &i.to_le_bytes()))
            .collect();
        assert!(offsets.iter().all(|o| (-365..=-1).contains(o)));
        assert!(
            offsets
                .iter()
                .collect::<std::collections::HashSet<_>>()
                .len()
                > 200
        );
        assert_eq!(date_offset(&d, b"100234"), date_offset(&d, b"100234"));
    }
}
