//! UTC timestamps without a calendar crate: HL7 `YYYYMMDDHHMMSS`, RFC 3339, and file-name stamps.

use std::time::{SystemTime, UNIX_EPOCH};

/// A broken-down UTC instant.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Utc {
    /// The year, e.g. 2024.
    pub year: i64,
    /// The month, 1 to 12.
    pub month: u32,
    /// The day of the month, 1 to 31.
    pub day: u32,
    /// The hour, 0 to 23.
    pub hour: u32,
    /// The minute, 0 to 59.
    pub minute: u32,
    /// The second, 0 to 59.
    pub second: u32,
    /// Microseconds within the second.
    pub micros: u32,
}

impl Utc {
    /// Break `t` down; an instant before 1970 (a broken clock) reads as the epoch.
    pub(crate) fn from_system(t: SystemTime) -> Utc {
        // Before 1970 only on a broken clock: clamp to the epoch rather than fail.
        let d = t.duration_since(UNIX_EPOCH).unwrap_or_default();
        let secs = d.as_secs() as i64;
        let (year, month, day) = civil_from_days(secs.div_euclid(86_400));
        let rem = secs.rem_euclid(86_400) as u32;
        Utc {
            year,
            month,
            day,
            hour: rem / 3600,
            minute: rem / 60 % 60,
            second: rem % 60,
            micros: d.subsec_micros(),
        }
    }

    /// HL7 DTM to the second: `20240131235959`.
    pub(crate) fn hl7(&self) -> String {
        format!(
            "{:04}{:02}{:02}{:02}{:02}{:02}",
            self.year, self.month, self.day, self.hour, self.minute, self.second
        )
    }

    /// RFC 3339 with microseconds: `2024-01-31T23:59:59.123456Z`.
    pub(crate) fn rfc3339(&self) -> String {
        format!(
            "{:04}-{:02}-{:02}T{:02}:{:02}:{:02}.{:06}Z",
            self.year, self.month, self.day, self.hour, self.minute, self.second, self.micros
        )
    }

    /// Sortable and safe in file names: `20240131T235959.123456Z`.
    pub(crate) fn file_stamp(&self) -> String {
        format!(
            "{:04}{:02}{:02}T{:02}{:02}{:02}.{:06}Z",
            self.year, self.month, self.day, self.hour, self.minute, self.second, self.micros
        )
    }
}

/// Howard Hinnant's days-to-civil algorithm (proleptic Gregorian).
fn civil_from_days(z: i64) -> (i64, u32, u32) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let month = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    let year = yoe + era * 400 + i64::from(month <= 2);
    (year, month, day)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn known_instants_format() {
        let t = UNIX_EPOCH + Duration::from_micros(951_782_400_000_001); // 2000-02-29
        let u = Utc::from_system(t);
        assert_eq!(u.hl7(), "20000229000000");
        assert_eq!(u.rfc3339(), "2000-02-29T00:00:00.000001Z");
        let t = UNIX_EPOCH + Duration::from_secs(1_706_745_599); // 2024-01-31T23:59:59
        assert_eq!(Utc::from_system(t).file_stamp(), "20240131T235959.000000Z");
        assert_eq!(Utc::from_system(UNIX_EPOCH).hl7(), "19700101000000");
    }
}
