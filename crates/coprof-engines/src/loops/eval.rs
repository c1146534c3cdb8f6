//! Checking a frequent loop detector against the exact profile of the same
//! stream, with the paper's accuracy, 1 − SOD over the ten most frequent
//! loops (Gordon-Ross & Vahid, CASES 2003, §4; the metric itself is
//! [`coprof_core::metrics::sod`]).

use super::snapshot::{DetectedLoop, LoopProfile};
use coprof_core::metrics::sod::{self, SOD_LOOPS};
use coprof_core::ExactCounts;
use serde::Serialize;

/// The exact iteration shares of the most frequent loops: the "actual"
/// side of SOD.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ExactLoopShares {
    /// (sbb PC, exact share of loop iterations), most frequent first, ties
    /// by lower PC; at most [`SOD_LOOPS`] of them.
    pub top: Vec<(u64, f64)>,
    /// Taken short backward branches in all.
    pub total: u64,
}

impl ExactLoopShares {
    /// From exact (sbb PC, times taken) pairs in any order.
    pub fn from_counts(counts: impl IntoIterator<Item = (u64, u64)>) -> ExactLoopShares {
        let mut v: Vec<(u64, u64)> = counts.into_iter().filter(|c| c.1 > 0).collect();
        let total: u64 = v.iter().map(|c| c.1).sum();
        v.sort_unstable_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
        v.truncate(SOD_LOOPS);
        ExactLoopShares {
            top: v
                .into_iter()
                .map(|(pc, n)| (pc, n as f64 / total as f64))
                .collect(),
            total,
        }
    }

    /// From exact counts (their short-backward-branch distance must match
    /// the detector's).
    pub fn from_exact(exact: &ExactCounts) -> ExactLoopShares {
        ExactLoopShares::from_counts(exact.sbb.iter().map(|(&pc, c)| (pc, c.taken)))
    }

    /// The paper's accuracy of `profile`, 1 − SOD: each of the exact ten
    /// most frequent loops against its estimated share (zero if the cache
    /// lost it).
    pub fn accuracy(&self, profile: &LoopProfile) -> f64 {
        self.accuracy_with(|pc| {
            profile
                .loops
                .iter()
                .find(|l| l.pc == pc)
                .map_or(0.0, |l| l.share)
        })
    }

    /// 1 − SOD with estimated shares looked up by `predicted(pc)`.
    pub fn accuracy_with(&self, predicted: impl Fn(u64) -> f64) -> f64 {
        sod::accuracy(self.top.iter().map(|&(pc, actual)| (actual, predicted(pc))))
    }
}

/// A detected loop beside its exact figures.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ComparedLoop {
    /// What the detector says.
    #[serde(flatten)]
    pub detected: DetectedLoop,
    /// Exact times the loop's sbb was taken.
    pub exact_iterations: u64,
    /// Exact share of loop iterations (compare with `share`).
    pub exact_share: f64,
    /// Exact share of execution: retired instructions whose PC lies in the
    /// body [body_lo, body_hi], over all retired instructions (compare with
    /// `exec_share`).
    pub exact_exec_share: f64,
}

/// A detector's profile checked against the exact one.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct LoopComparison {
    /// The top detected loops with their exact figures.
    pub loops: Vec<ComparedLoop>,
    /// 1 − SOD over the exact ten most frequent loops.
    pub accuracy: f64,
    /// The exact ten most frequent loops and their exact shares.
    pub exact_top: Vec<(u64, f64)>,
}

/// Compares the `top` most frequent loops of `profile` with `exact`.
pub fn compare(profile: &LoopProfile, exact: &ExactCounts, top: usize) -> LoopComparison {
    let shares = ExactLoopShares::from_exact(exact);
    let loops = profile
        .loops
        .iter()
        .take(top)
        .map(|l| {
            let n = exact.sbb.get(&l.pc).map_or(0, |c| c.taken);
            ComparedLoop {
                detected: l.clone(),
                exact_iterations: n,
                exact_share: super::detector::ratio(n, shares.total),
                exact_exec_share: super::detector::ratio(
                    exact.pcs_in(l.body_lo, l.body_hi),
                    exact.events,
                ),
            }
        })
        .collect();
    LoopComparison {
        loops,
        accuracy: shares.accuracy(profile),
        exact_top: shares.top,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exact_shares_rank_and_normalise() {
        let s = ExactLoopShares::from_counts([(0x30, 10), (0x10, 30), (0x20, 10), (0x40, 0)]);
        assert_eq!(s.total, 50);
        assert_eq!(s.top, vec![(0x10, 0.6), (0x20, 0.2), (0x30, 0.2)]);
        assert_eq!(
            s.accuracy_with(|pc| if pc == 0x10 { 0.6 } else { 0.2 }),
            1.0
        );
        // Losing the 0.2 loop at 0x30 costs sqrt(0.2) / 10.
        let a = s.accuracy_with(|pc| {
            if pc == 0x30 {
                0.0
            } else if pc == 0x10 {
                0.6
            } else {
                0.2
            }
        });
        assert!((a - (1.0 - 0.2f64.sqrt() / 10.0)).abs() < 1e-12);
    }
}
