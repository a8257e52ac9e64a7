//! Fresh MSH-10 values for the acknowledgements we write, and HL7 timestamps for MSH-7.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::OnceLock;
use std::time::{SystemTime, UNIX_EPOCH};

/// A control ID unique across this process (a counter) and across processes (process start
/// time and process id): letters and digits plus one `-`, at most 20 characters for years to
/// come (HL7 v2.5 caps MSH-10 at 20).
pub(crate) fn next_control_id() -> String {
    static PREFIX: OnceLock<String> = OnceLock::new();
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let prefix = PREFIX.get_or_init(|| {
        let started_ms = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| d.as_millis() as u64);
        format!(
            "{}{}",
            base36(started_ms),
            base36(u64::from(std::process::id()))
        )
    });
    let n = COUNTER.fetch_add(1, Ordering::Relaxed);
    format!("{prefix}-{}", base36(n))
}

fn base36(mut n: u64) -> String {
    const DIGITS: &[u8; 36] = b"0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ";
    let mut buf = Vec::new();
    loop {
        buf.push(DIGITS[(n % 36) as usize]);
        n /= 36;
        if n == 0 {
            break;
        }
    }
    buf.reverse();
    String::from_utf8(buf).unwrap_or_default()
}

/// `YYYYMMDDHHMMSS` in UTC; times before 1970 read as 1970.
pub(crate) fn hl7_timestamp(time: SystemTime) -> String {
    let secs = time.duration_since(UNIX_EPOCH).map_or(0, |d| d.as_secs());
    let (days, rem) = (secs / 86_400, secs % 86_400);
    let (year, month, day) = civil_from_days(days);
    format!(
        "{year:04}{month:02}{day:02}{:02}{:02}{:02}",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60
    )
}

/// Days since 1970-01-01 to a proleptic Gregorian date (H. Hinnant's algorithm).
fn civil_from_days(days: u64) -> (u64, u64, u64) {
    let z = days + 719_468;
    let era = z / 146_097;
    let doe = z % 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + u64::from(month <= 2);
    (year, month, day)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashSet;
    use std::time::Duration;

    #[test]
    fn timestamps_are_utc_calendar_dates() {
        let at = |s| hl7_timestamp(UNIX_EPOCH + Duration::from_secs(s));
        assert_eq!(at(0), "19700101000000");
        assert_eq!(at(951_782_400), "20000229000000");
        assert_eq!(at(1_709_251_199), "20240229235959");
        assert_eq!(at(4_102_444_800), "21000101000000");
        assert_eq!(
            hl7_timestamp(UNIX_EPOCH - Duration::from_secs(5)),
            "19700101000000"
        );
    }

    #[test]
    fn control_ids_are_unique_short_and_plain() {
        let ids: Vec<String> = (0..10_000).map(|_| next_control_id()).collect();
        let distinct: HashSet<&String> = ids.iter().collect();
        assert_eq!(distinct.len(), ids.len());
        for id in &ids {
            assert!(id.len() <= 20, "{id}");
            assert!(id.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-'));
        }
    }
}
