//! Natural (numeric-aware) order for file names: `x#9` before `x#10`, as people count.

use std::cmp::Ordering;
use std::path::Path;

/// Compare two texts run by run: digit runs by their value, other characters one by one. Names
/// equal that way (`x#01`, `x#1`) fall back to plain byte order, so the order is total.
pub(crate) fn natural_cmp(a: &str, b: &str) -> Ordering {
    let (mut x, mut y) = (a.as_bytes(), b.as_bytes());
    loop {
        match (x.first(), y.first()) {
            (None, None) => return a.cmp(b),
            (None, Some(_)) => return Ordering::Less,
            (Some(_), None) => return Ordering::Greater,
            (Some(c), Some(d)) if c.is_ascii_digit() && d.is_ascii_digit() => {
                let (m, rest_x) = digit_run(x);
                let (n, rest_y) = digit_run(y);
                let order = compare_numbers(m, n);
                if order != Ordering::Equal {
                    return order;
                }
                (x, y) = (rest_x, rest_y);
            }
            (Some(c), Some(d)) => {
                if c != d {
                    return c.cmp(d);
                }
                (x, y) = (&x[1..], &y[1..]);
            }
        }
    }
}

/// Paths in natural order of their text.
pub(crate) fn natural_path_cmp(a: &Path, b: &Path) -> Ordering {
    natural_cmp(&a.to_string_lossy(), &b.to_string_lossy())
}

fn digit_run(s: &[u8]) -> (&[u8], &[u8]) {
    let end = s
        .iter()
        .position(|b| !b.is_ascii_digit())
        .unwrap_or(s.len());
    s.split_at(end)
}

/// Digit strings by value, of any length: leading zeros dropped, then the longer is larger.
fn compare_numbers(m: &[u8], n: &[u8]) -> Ordering {
    let strip = |s: &[u8]| {
        let start = s.iter().position(|&b| b != b'0').unwrap_or(s.len());
        s[start..].to_vec()
    };
    let (m, n) = (strip(m), strip(n));
    m.len().cmp(&n.len()).then_with(|| m.cmp(&n))
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn numbers_count_as_numbers() {
        let mut names = vec![
            "x#10", "x#9", "x#1", "a", "x#2b", "x#2a", "x", "y#0", "x#01",
        ];
        names.sort_by(|a, b| natural_cmp(a, b));
        assert_eq!(
            names,
            ["a", "x", "x#01", "x#1", "x#2a", "x#2b", "x#9", "x#10", "y#0"]
        );
        assert_eq!(
            natural_cmp("000006-a.hl7#6.hl7", "000010-a.hl7#10.hl7"),
            Ordering::Less
        );
        assert_eq!(
            natural_cmp("n99999999999999999999999", "n100000000000000000000000"),
            Ordering::Less
        );
    }

    proptest! {
        /// Against the obvious reference: the same prefix with two numbers orders by value.
        #[test]
        fn orders_like_the_numbers(prefix in "[a-z#._-]{0,6}", m in 0u64..1_000_000, n in 0u64..1_000_000, suffix in "[a-z.]{0,4}") {
            let a = format!("{prefix}{m}{suffix}");
            let b = format!("{prefix}{n}{suffix}");
            prop_assert_eq!(natural_cmp(&a, &b), m.cmp(&n));
        }

        #[test]
        fn is_a_total_order(a in "[a0-9]{0,6}", b in "[a0-9]{0,6}", c in "[a0-9]{0,6}") {
            prop_assert_eq!(natural_cmp(&a, &b), natural_cmp(&b, &a).reverse());
            prop_assert_eq!(natural_cmp(&a, &b) == Ordering::Equal, a == b);
            if natural_cmp(&a, &b) != Ordering::Greater && natural_cmp(&b, &c) != Ordering::Greater {
                prop_assert_ne!(natural_cmp(&a, &c), Ordering::Greater);
            }
        }
    }
}
