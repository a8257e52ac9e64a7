//! Durations as people read them: rounded to what a reader can use (`115.8ms`, `2.5s`,
//! `3m 20s`), never `115.765986ms`.

use std::fmt;
use std::time::Duration;

/// A duration that displays rounded: a tenth of a millisecond below a second, a tenth of a
/// second below a minute, whole seconds above.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Rounded(pub Duration);

impl fmt::Display for Rounded {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let d = self.0;
        if d.is_zero() {
            return f.write_str("0s");
        }
        let ms = d.as_secs_f64() * 1000.0;
        if ms < 999.95 {
            let text = format!("{ms:.1}");
            return write!(f, "{}ms", text.strip_suffix(".0").unwrap_or(&text));
        }
        let secs = d.as_secs_f64();
        if secs < 59.95 {
            let text = format!("{secs:.1}");
            return write!(f, "{}s", text.strip_suffix(".0").unwrap_or(&text));
        }
        let whole = Duration::from_secs(d.as_secs() + u64::from(d.subsec_millis() >= 500));
        write!(f, "{}", humantime::format_duration(whole))
    }
}

/// Serializes milliseconds to three decimals: the clock's resolution is not worth more digits.
pub fn microsecond_ms<S: serde::Serializer>(ms: &f64, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_f64((ms * 1000.0).round() / 1000.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rounds_to_what_a_reader_uses() {
        let shown = |d: Duration| Rounded(d).to_string();
        assert_eq!(shown(Duration::from_nanos(115_765_986)), "115.8ms");
        assert_eq!(shown(Duration::from_millis(100)), "100ms");
        assert_eq!(shown(Duration::from_micros(250)), "0.2ms");
        assert_eq!(shown(Duration::from_micros(999_990)), "1s");
        assert_eq!(shown(Duration::from_millis(2_549)), "2.5s");
        assert_eq!(shown(Duration::from_millis(200_400)), "3m 20s");
        assert_eq!(shown(Duration::ZERO), "0s");
    }
}
