//! The shapes of the simple data types a check reads: timestamps (TS, DTM), dates (DT),
//! sequence IDs (SI) and numbers (NM).

/// `YYYY[MM[DD[HH[MM[SS[.S[S[S[S]]]]]]]]][+/-ZZZZ]`, each part in its range (the day within its
/// month).
pub(crate) fn is_timestamp(value: &[u8]) -> bool {
    let (time, zone) = match value.iter().position(|&b| b == b'+' || b == b'-') {
        Some(at) => (&value[..at], Some(&value[at + 1..])),
        None => (value, None),
    };
    if let Some(zone) = zone {
        if !is_zone(zone) {
            return false;
        }
    }
    let (whole, fraction) = match time.iter().position(|&b| b == b'.') {
        Some(at) => (&time[..at], Some(&time[at + 1..])),
        None => (time, None),
    };
    if let Some(fraction) = fraction {
        // A fraction only follows the seconds.
        if whole.len() != 14 || !(1..=4).contains(&fraction.len()) || !all_digits(fraction) {
            return false;
        }
    }
    if !matches!(whole.len(), 4 | 6 | 8 | 10 | 12 | 14) || !all_digits(whole) {
        return false;
    }
    let n = |at: usize| number(&whole[at..at + 2]);
    let date_ok = is_date(&whole[..whole.len().min(8)]);
    let hour_ok = whole.len() < 10 || n(8) <= 23;
    let minute_ok = whole.len() < 12 || n(10) <= 59;
    let second_ok = whole.len() < 14 || n(12) <= 59;
    date_ok && hour_ok && minute_ok && second_ok
}

/// `YYYY[MM[DD]]`, the month and the day within range.
pub(crate) fn is_date(value: &[u8]) -> bool {
    if !matches!(value.len(), 4 | 6 | 8) || !all_digits(value) {
        return false;
    }
    let year = number(&value[..4]);
    if value.len() == 4 {
        return true;
    }
    let month = number(&value[4..6]);
    if !(1..=12).contains(&month) {
        return false;
    }
    if value.len() == 6 {
        return true;
    }
    let leap = year.is_multiple_of(4) && (!year.is_multiple_of(100) || year.is_multiple_of(400));
    let days = match month {
        2 if leap => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    };
    (1..=days).contains(&number(&value[6..8]))
}

/// A time zone offset after its sign: `HHMM`, hours to 23 and minutes to 59.
fn is_zone(zone: &[u8]) -> bool {
    zone.len() == 4 && all_digits(zone) && number(&zone[..2]) <= 23 && number(&zone[2..]) <= 59
}

/// A sequence ID: a whole number, digits only.
pub(crate) fn is_sequence_id(value: &[u8]) -> bool {
    !value.is_empty() && all_digits(value)
}

/// A number: an optional sign, digits with an optional decimal point, at least one digit.
pub(crate) fn is_number(value: &[u8]) -> bool {
    let unsigned = match value.first() {
        Some(b'+' | b'-') => &value[1..],
        _ => value,
    };
    let (int, frac) = match unsigned.iter().position(|&b| b == b'.') {
        Some(at) => (&unsigned[..at], &unsigned[at + 1..]),
        None => (unsigned, &[][..]),
    };
    all_digits(int) && all_digits(frac) && !(int.is_empty() && frac.is_empty())
}

fn all_digits(bytes: &[u8]) -> bool {
    bytes.iter().all(u8::is_ascii_digit)
}

fn number(digits: &[u8]) -> u32 {
    digits
        .iter()
        .fold(0, |n, &d| n * 10 + u32::from(d.wrapping_sub(b'0')))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn timestamps() {
        for good in [
            &b"2024"[..],
            b"202402",
            b"20240229",
            b"2024022913",
            b"202402291359",
            b"20240229135959",
            b"20240229135959.1234",
            b"20240229135959+0100",
            b"20240229135959.5-0530",
            b"2024+0000",
        ] {
            assert!(is_timestamp(good), "{}", String::from_utf8_lossy(good));
        }
        for bad in [
            &b""[..],
            b"24",
            b"2024021",
            b"20230229",
            b"20241301",
            b"2024010124",
            b"202401011260",
            b"20240101120060",
            b"202401011200.5",
            b"20240101120000.12345",
            b"20240101120000+01",
            b"20240101120000+2500",
            b"2024-01-01",
            b"196203520",
        ] {
            assert!(!is_timestamp(bad), "{}", String::from_utf8_lossy(bad));
        }
    }

    #[test]
    fn dates_ids_and_numbers() {
        assert!(is_date(b"19700101") && is_date(b"1970") && !is_date(b"19700132"));
        assert!(is_sequence_id(b"0001") && !is_sequence_id(b"1a") && !is_sequence_id(b""));
        for good in [&b"1"[..], b"-1.5", b"+.5", b"1.", b"007"] {
            assert!(is_number(good), "{}", String::from_utf8_lossy(good));
        }
        for bad in [&b""[..], b"-", b".", b"1.2.3", b"1e5", b"5.4 "] {
            assert!(!is_number(bad), "{}", String::from_utf8_lossy(bad));
        }
    }
}
