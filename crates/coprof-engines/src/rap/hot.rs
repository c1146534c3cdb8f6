//! Hot ranges (Mysore et al., TACO 2008, §5.1): the ranges of the tree that
//! take at least a given share of the events by themselves.
//!
//! A range is hot iff its own count plus the counts of its subranges that
//! are not hot reaches the threshold (by default 10% of n). So a hot range
//! deep in the tree hides nothing from its hot ancestors: each event is
//! credited to the smallest hot range that contains it, and a range made
//! hot only by one hot child is not reported again. Each hot range carries
//! its own share (the events credited to it) and its cumulative share (all
//! events of its range, hot subranges included), as in the paper's
//! Figure 7.

use super::snapshot::{share, RapSnapshot};
use serde::Serialize;

/// The paper's default hot-range threshold: 10% of the events (§5.1).
pub const DEFAULT_HOT: f64 = 0.1;

/// One hot range.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct HotRange {
    /// Index of the range's node in [`RapSnapshot::nodes`].
    pub node: u32,
    /// Lowest point, per dimension.
    pub lo: Vec<u64>,
    /// Highest point (inclusive), per dimension.
    pub hi: Vec<u64>,
    /// Depth of the range's node.
    pub depth: u32,
    /// Events credited to this range: its own count plus its non-hot
    /// subranges' counts.
    pub own_count: u64,
    /// `own_count / n`.
    pub own_share: f64,
    /// Estimated events in the whole range, hot subranges included (the
    /// node's total, a lower bound of the truth).
    pub count: u64,
    /// `count / n`: the cumulative share.
    pub share: f64,
}

impl RapSnapshot {
    /// The hot ranges at threshold `fraction` of n, in address order
    /// (enclosing ranges before the ranges they contain). Nothing is hot
    /// in an empty profile.
    pub fn hot_ranges(&self, fraction: f64) -> Vec<HotRange> {
        let need = fraction * self.n as f64;
        let mut credit = vec![0u64; self.nodes.len()];
        let mut hot = vec![false; self.nodes.len()];
        // Children follow their parent in preorder: walk backwards.
        for i in (0..self.nodes.len()).rev() {
            let node = &self.nodes[i];
            let c = node.count
                + node
                    .children
                    .iter()
                    .filter(|&&c| !hot[c as usize])
                    .map(|&c| credit[c as usize])
                    .sum::<u64>();
            credit[i] = c;
            hot[i] = self.n > 0 && c as f64 >= need;
        }
        (0..self.nodes.len())
            .filter(|&i| hot[i])
            .map(|i| {
                let node = &self.nodes[i];
                HotRange {
                    node: i as u32,
                    lo: node.lo.clone(),
                    hi: node.hi.clone(),
                    depth: node.depth,
                    own_count: credit[i],
                    own_share: share(credit[i], self.n),
                    count: node.total,
                    share: share(node.total, self.n),
                }
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use crate::rap::{Rap, RapConfig};

    #[test]
    fn a_hot_point_and_the_root_share_the_credit() {
        let mut rap: Rap<1> = Rap::new(RapConfig::with_epsilon(0.01)).unwrap();
        let mut x = 12345u64;
        for i in 0..200_000u64 {
            if i % 2 == 0 {
                rap.add([0x4000]);
            } else {
                // A spread-out half: no small range of it is hot.
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                rap.add([x]);
            }
        }
        let s = rap.snapshot();
        let hot = s.hot_ranges(0.1);
        let point = hot
            .iter()
            .find(|h| h.lo[0] <= 0x4000 && 0x4000 <= h.hi[0] && h.depth > 0)
            .expect("the hot point's range is hot");
        assert!(point.share >= 0.49, "{point:?}");
        // Every event is credited to exactly one hot range or none.
        let credited: u64 = hot.iter().map(|h| h.own_count).sum();
        assert!(credited <= s.n);
        // The spread half puts 12.5% in each upper quarter of the universe.
        let quarters = hot.iter().filter(|h| h.depth == 1 && h.lo[0] >= 1 << 62);
        assert_eq!(quarters.count(), 3, "{hot:?}");
        for h in &hot {
            assert!(h.own_share >= 0.1 && h.own_count <= h.count);
        }
    }

    #[test]
    fn nothing_is_hot_when_empty() {
        let mut rap: Rap<2> = Rap::new(RapConfig::default()).unwrap();
        assert!(rap.snapshot().hot_ranges(0.1).is_empty());
    }
}
