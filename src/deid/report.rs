//! What a run replaced: values counted by rule, never a value itself.

/// What a run replaced: values per rule, never a value itself.
#[derive(Debug, Clone, Default)]
pub struct Report {
    pub(super) paths: Vec<String>,
    pub(super) counts: Vec<u64>,
}

impl Report {
    /// Values replaced under each rule's path, in the policy's order; rules that replaced
    /// nothing left out.
    pub fn counts(&self) -> impl Iterator<Item = (&str, u64)> + '_ {
        self.paths
            .iter()
            .zip(&self.counts)
            .filter(|(_, &n)| n > 0)
            .map(|(p, &n)| (p.as_str(), n))
    }

    /// Values replaced under the rule of `path`, as the policy writes it.
    pub fn replaced(&self, path: &str) -> u64 {
        self.paths
            .iter()
            .position(|p| p == path)
            .map_or(0, |i| self.counts[i])
    }

    /// Values replaced in all.
    pub fn total(&self) -> u64 {
        self.counts.iter().sum()
    }
}
