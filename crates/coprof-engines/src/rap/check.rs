//! Checking a RAP tree against the exact profile of the same stream, with
//! the paper's measures (Mysore et al., TACO 2008, §2.3 and Figure 10): the
//! error of every range relative to n, which the paper bounds by ε, and the
//! percentage error of each hot range.

use super::hot::HotRange;
use super::snapshot::RapSnapshot;
use super::streams::{one_point, point_of, wants_of, Stream};
use coprof_core::{BlockCounts, Blocks, ClassSet, Event, Run, Sink};
use rustc_hash::FxHashMap;
use serde::Serialize;

/// Exact counts of every point of a profile, with unbounded memory: the
/// ground truth for [`check`]. A [`Sink`], so it can listen beside the
/// engine in a `Fanout` and see the very same stream.
#[derive(Clone, Debug)]
pub struct ExactPoints<const D: usize> {
    dims: [Stream; D],
    counts: FxHashMap<[u64; D], u64>,
    n: u64,
    /// With runs of blocks, the counts kept per block (events then add
    /// nothing), until [`finish`](Sink::finish) expands them.
    runs: Option<BlockCounts>,
}

impl<const D: usize> ExactPoints<D> {
    /// Exact counts of the profile over `dims`.
    pub fn new(dims: [Stream; D]) -> ExactPoints<D> {
        ExactPoints {
            dims,
            counts: FxHashMap::default(),
            n: 0,
            runs: None,
        }
    }

    /// Counts `count` events at `p`.
    #[inline]
    pub fn add_points(&mut self, count: u64, p: [u64; D]) {
        *self.counts.entry(p).or_insert(0) += count;
        self.n += count;
    }

    /// Events counted.
    pub fn n(&self) -> u64 {
        self.n
    }

    /// Distinct points seen.
    pub fn distinct(&self) -> usize {
        self.counts.len()
    }

    /// Every point with its count.
    pub fn iter(&self) -> impl Iterator<Item = (&[u64; D], u64)> {
        self.counts.iter().map(|(p, &c)| (p, c))
    }

    /// Approximate bytes held by the hash map: key, count and one control
    /// byte per slot of its capacity.
    pub fn bytes(&self) -> usize {
        self.counts.capacity() * (8 * D + 8 + 1)
    }
}

impl<const D: usize> Sink for ExactPoints<D> {
    fn wants(&self) -> ClassSet {
        wants_of(&self.dims)
    }

    fn observe(&mut self, batch: &[Event]) {
        if self.runs.is_some() {
            return;
        }
        for e in batch {
            if let Some(p) = point_of(&self.dims, e) {
                self.add_points(1, p);
            }
        }
    }

    /// A one-dimensional code profile counts the PCs of runs of blocks,
    /// as [`RangeProfiler`](super::RangeProfiler) does.
    fn wants_with_runs(&self) -> Option<ClassSet> {
        (D == 1 && self.dims[0] == Stream::Pc).then_some(ClassSet::NONE)
    }

    fn runs_follow(&mut self) {
        self.runs = Some(BlockCounts::new());
    }

    fn observe_runs(&mut self, runs: &[Run], blocks: &Blocks) {
        if let Some(r) = &mut self.runs {
            r.add(runs, blocks);
        }
    }

    fn finish(&mut self) {
        if let Some(r) = self.runs.take() {
            r.for_each(|pc, _, n| self.add_points(n, one_point(pc)));
        }
    }
}

/// How far a tree is from the truth.
#[derive(Clone, Debug, Serialize)]
pub struct RangeCheck {
    /// The exact number of events in each node's range, indexed like
    /// [`RapSnapshot::nodes`].
    #[serde(skip)]
    pub exact: Vec<u64>,
    /// Largest exact − estimate over all nodes.
    pub max_abs_error: u64,
    /// `max_abs_error / n`: the paper bounds it by ε.
    pub max_abs_error_over_n: f64,
    /// The node with the largest error.
    pub worst_node: u32,
    /// Nodes whose estimate exceeds the truth (the estimate is a lower
    /// bound, so this must be 0).
    pub over_estimates: u64,
}

/// Compares every range of `snapshot` with `exact`. The exact count of a
/// range is the sum over the points that fall in it, found by walking each
/// point's path down the tree.
pub fn check<const D: usize>(snapshot: &RapSnapshot, exact: &ExactPoints<D>) -> RangeCheck {
    let mut per_node = vec![0u64; snapshot.nodes.len()];
    for (p, c) in exact.iter() {
        for v in snapshot.path(p) {
            per_node[v as usize] += c;
        }
    }
    let mut max_abs_error = 0;
    let mut worst_node = 0;
    let mut over_estimates = 0;
    for (i, (node, &x)) in snapshot.nodes.iter().zip(&per_node).enumerate() {
        if node.total > x {
            over_estimates += 1;
        }
        let err = x.abs_diff(node.total);
        if err > max_abs_error {
            max_abs_error = err;
            worst_node = i as u32;
        }
    }
    RangeCheck {
        exact: per_node,
        max_abs_error,
        max_abs_error_over_n: if snapshot.n == 0 {
            0.0
        } else {
            max_abs_error as f64 / snapshot.n as f64
        },
        worst_node,
        over_estimates,
    }
}

/// A hot range beside its exact count (the paper's Figure 10).
#[derive(Clone, Debug, Serialize)]
pub struct CheckedHotRange {
    /// The hot range.
    #[serde(flatten)]
    pub range: HotRange,
    /// Exact events in the range.
    pub exact: u64,
    /// (exact − count) / exact, in percent.
    pub error_pct: f64,
}

/// The hot ranges with their exact counts, and the largest and average
/// percentage error over them.
pub fn check_hot(hot: Vec<HotRange>, check: &RangeCheck) -> (Vec<CheckedHotRange>, f64, f64) {
    let checked: Vec<CheckedHotRange> = hot
        .into_iter()
        .map(|h| {
            let exact = check.exact[h.node as usize];
            let error_pct = if exact == 0 {
                0.0
            } else {
                (exact as f64 - h.count as f64) / exact as f64 * 100.0
            };
            CheckedHotRange {
                range: h,
                exact,
                error_pct,
            }
        })
        .collect();
    let max = checked
        .iter()
        .map(|c| c.error_pct.abs())
        .fold(0.0, f64::max);
    let avg = if checked.is_empty() {
        0.0
    } else {
        checked.iter().map(|c| c.error_pct.abs()).sum::<f64>() / checked.len() as f64
    };
    (checked, max, avg)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rap::{Rap, RapConfig};

    #[test]
    fn an_exact_tree_has_no_error() {
        // Fewer events than 1/ε: every event sits in a one-point leaf.
        let mut rap: Rap<1> = Rap::new(RapConfig::with_epsilon(0.01)).unwrap();
        let mut exact = ExactPoints::new([Stream::Pc]);
        for x in [5u64, 5, 9, 1 << 40, 5] {
            rap.add([x]);
            exact.add_points(1, [x]);
        }
        let s = rap.snapshot();
        let c = check(&s, &exact);
        assert_eq!(c.max_abs_error, 0);
        assert_eq!(c.over_estimates, 0);
        assert_eq!(c.exact[0], 5);
        let (hot, max, avg) = check_hot(s.hot_ranges(0.1), &c);
        assert!(!hot.is_empty());
        assert_eq!((max, avg), (0.0, 0.0));
    }

    #[test]
    fn a_wrong_truth_is_caught() {
        let mut rap: Rap<1> = Rap::new(RapConfig::with_epsilon(0.01)).unwrap();
        let mut exact = ExactPoints::new([Stream::Pc]);
        rap.add([5]);
        exact.add_points(3, [5]);
        let c = check(&rap.snapshot(), &exact);
        assert_eq!(c.max_abs_error, 2);
        assert_eq!(c.max_abs_error_over_n, 2.0);
    }
}
