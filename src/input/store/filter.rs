//! Which rows of a store a replay reads: by arrival time, MSH-9, MSH-10 and, in a relay's
//! store, the upstream status. Decided on a row's columns alone, before its payload is read.

use std::time::SystemTime;

/// Which rows to read. Times compare as instants; the type matches by leading components
/// (`ADT^A08` matches `ADT^A08^ADT_A01`, not `ADT^A081`).
#[derive(Debug, Clone, Default)]
pub struct StoreFilter {
    /// Only messages that arrived at or after this instant; rows without a readable arrival
    /// time are then left out.
    pub since: Option<SystemTime>,
    /// Only messages that arrived before this instant; rows without a readable arrival time
    /// are then left out.
    pub until: Option<SystemTime>,
    /// Only messages whose MSH-9 is this type or starts with it followed by more components.
    pub message_type: Option<String>,
    /// Only messages whose MSH-10 is exactly this.
    pub control_id: Option<String>,
    /// Only rows of a relay's store whose upstream status is one of these (`negative`,
    /// `unknown-fate`, ...); empty for any. A receiver's store keeps no status: a filter that
    /// names one cannot be used on it.
    pub statuses: Vec<String>,
    /// Only messages these admit; the others are counted ([`super::StoreRows::filtered`]).
    /// Decided on the payload, once it is read.
    pub select: crate::hl7::Filters,
}

/// The columns of a row the filter looks at.
#[derive(Debug, Clone, Copy, Default)]
pub(super) struct Columns<'a> {
    pub received_at: Option<SystemTime>,
    pub control_id: Option<&'a str>,
    pub message_type: Option<&'a str>,
    pub status: Option<&'a str>,
}

impl StoreFilter {
    pub(super) fn admits(&self, row: Columns<'_>) -> bool {
        let in_time = match row.received_at {
            Some(at) => {
                self.since.is_none_or(|since| at >= since) && self.until.is_none_or(|u| at < u)
            }
            None => self.since.is_none() && self.until.is_none(),
        };
        let typed = match (&self.message_type, row.message_type) {
            (None, _) => true,
            (Some(want), Some(have)) => {
                have == want
                    || have
                        .strip_prefix(want.as_str())
                        .is_some_and(|r| r.starts_with('^'))
            }
            (Some(_), None) => false,
        };
        let named = self
            .control_id
            .as_deref()
            .is_none_or(|want| row.control_id == Some(want));
        let settled = self.statuses.is_empty()
            || row
                .status
                .is_some_and(|have| self.statuses.iter().any(|want| want == have));
        in_time && typed && named && settled
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_type_matches_by_leading_components() {
        let f = StoreFilter {
            message_type: Some("ADT^A08".into()),
            ..StoreFilter::default()
        };
        let typed = |t| Columns {
            message_type: Some(t),
            ..Columns::default()
        };
        assert!(f.admits(typed("ADT^A08")));
        assert!(f.admits(typed("ADT^A08^ADT_A01")));
        assert!(!f.admits(typed("ADT^A081")));
        assert!(!f.admits(typed("ADT^A01")));
    }

    #[test]
    fn statuses_choose_among_the_named_ones_and_a_row_without_one_is_left_out() {
        let f = StoreFilter {
            statuses: vec!["negative".into(), "unknown-fate".into()],
            ..StoreFilter::default()
        };
        let with = |s| Columns {
            status: s,
            ..Columns::default()
        };
        assert!(f.admits(with(Some("negative"))));
        assert!(f.admits(with(Some("unknown-fate"))));
        assert!(!f.admits(with(Some("accepted"))));
        assert!(!f.admits(with(None)));
        assert!(StoreFilter::default().admits(with(None)));
    }
}
