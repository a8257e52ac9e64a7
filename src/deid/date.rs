//! Dates moved by whole days: an HL7 date or timestamp (`YYYY[MM[DD[HH[MM[SS[.S...]]]]]]`
//! and an optional `+ZZZZ`/`-ZZZZ`) keeps its precision, its time of day and its zone. A
//! date given to the month or year is moved from its middle and written to the same
//! precision.

/// `value` moved `days` days (negative: earlier), appended to `out`; false (nothing appended)
/// when it is not a date.
pub(super) fn shift(value: &[u8], days: i64, out: &mut Vec<u8>) -> bool {
    let digits = value.iter().take_while(|b| b.is_ascii_digit()).count();
    let rest = &value[digits..];
    if !matches!(digits, 4 | 6 | 8 | 10 | 12 | 14) || !rest_is_time(rest) {
        return false;
    }
    let number = |from: usize, len: usize| -> i64 {
        value[from..from + len]
            .iter()
            .fold(0, |n, &b| n * 10 + i64::from(b - b'0'))
    };
    let year = number(0, 4);
    let month = if digits >= 6 { number(4, 2) } else { 7 };
    let day = if digits >= 8 { number(6, 2) } else { 15 };
    if !(1..=12).contains(&month) || day < 1 || day > days_in_month(year, month) {
        return false;
    }
    let (y, m, d) = civil(days_from_civil(year, month, day) + days);
    if !(0..=9999).contains(&y) {
        return false;
    }
    let digit = |n: i64| b'0' + (n % 10) as u8;
    out.extend_from_slice(&[digit(y / 1000), digit(y / 100), digit(y / 10), digit(y)]);
    if digits >= 6 {
        out.extend_from_slice(&[digit(m / 10), digit(m)]);
    }
    if digits >= 8 {
        out.extend_from_slice(&[digit(d / 10), digit(d)]);
    }
    // The time of day and the zone, as they were.
    out.extend_from_slice(&value[digits.min(8)..]);
    true
}

/// What may follow the date's digits: nothing, fractional seconds, a zone.
fn rest_is_time(rest: &[u8]) -> bool {
    let (time, zone) = match rest.iter().position(|&b| b == b'+' || b == b'-') {
        Some(at) => (&rest[..at], &rest[at + 1..]),
        None => (rest, &b"0000"[..]),
    };
    let fraction_ok = match time.split_first() {
        None => true,
        Some((b'.', digits)) => !digits.is_empty() && digits.iter().all(u8::is_ascii_digit),
        Some(_) => false,
    };
    fraction_ok && zone.len() == 4 && zone.iter().all(u8::is_ascii_digit)
}

fn is_leap(year: i64) -> bool {
    year % 4 == 0 && (year % 100 != 0 || year % 400 == 0)
}

fn days_in_month(year: i64, month: i64) -> i64 {
    match month {
        2 if is_leap(year) => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    }
}

/// Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's algorithm).
fn days_from_civil(year: i64, month: i64, day: i64) -> i64 {
    let y = if month <= 2 { year - 1 } else { year };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (month + 9) % 12;
    let doy = (153 * mp + 2) / 5 + day - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// The date `days` after 1970-01-01.
fn civil(days: i64) -> (i64, i64, i64) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    (year, month, day)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn s(value: &str, days: i64) -> Option<String> {
        let mut out = Vec::new();
        let shifted = shift(value.as_bytes(), days, &mut out);
        assert_eq!(shifted, !out.is_empty());
        shifted.then(|| String::from_utf8(out).unwrap())
    }

    #[test]
    fn moves_the_date_and_keeps_the_rest() {
        assert_eq!(s("19800301", -1).as_deref(), Some("19800229"));
        assert_eq!(s("20240101083000", -365).as_deref(), Some("20230101083000"));
        assert_eq!(
            s("202401010830+0100", 31).as_deref(),
            Some("202402010830+0100")
        );
        assert_eq!(
            s("20240101083012.1234-0500", 1).as_deref(),
            Some("20240102083012.1234-0500")
        );
        assert_eq!(s("198003", -40).as_deref(), Some("198002"));
        assert_eq!(s("1980", -200).as_deref(), Some("1979"));
        for bad in [
            "",
            "198",
            "19801",
            "19801301",
            "19800230",
            "1980010x",
            "20240101+01",
            "202401011",
            "abc",
        ] {
            assert_eq!(s(bad, 5), None, "{bad}");
        }
    }

    proptest! {
        /// Against counting day by day: intervals between two shifted dates stay true.
        #[test]
        fn a_shift_keeps_every_interval(a in 0i64..60_000, b in 0i64..60_000, by in -800i64..800) {
            let text = |d: i64| {
                let (y, m, day) = civil(d);
                format!("{y:04}{m:02}{day:02}")
            };
            let back = |t: &str| {
                let n = |r: std::ops::Range<usize>| t[r].parse::<i64>().unwrap();
                days_from_civil(n(0..4), n(4..6), n(6..8))
            };
            let sa = s(&text(a), by).unwrap();
            let sb = s(&text(b), by).unwrap();
            prop_assert_eq!(back(&sa) - back(&sb), a - b);
            prop_assert_eq!(back(&sa) - a, by);
        }
    }
}
