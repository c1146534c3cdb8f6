//! The value profilers' quality metric: the root-mean-square error of
//! invariance estimates, weighted by each value's frequency (Zilles & Sohi,
//! "A Programmable Co-processor for Profiling", HPCA 2001, §5.2–5.3).
//!
//! The *invariance* of value `v` at load `pc` is the share of the load's
//! executions that produced `v`. The metric looks only at the pairs worth
//! optimising for: ⟨PC, value⟩ pairs executed at least 200 times with at
//! least 25% invariance. A pair the profiler did not report counts with
//! estimate 0, so a profiler cannot look accurate by staying silent. Each
//! squared error is weighted by the pair's execution count, so that the
//! hot loads dominate, as they do a program's run time.

use crate::exact::ExactCounts;
use serde::Serialize;

/// Which ⟨PC, value⟩ pairs the metric looks at.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct Criteria {
    /// Fewest executions of the pair (paper: 200).
    pub min_executions: u64,
    /// Lowest exact invariance of the pair (paper: 25%).
    pub min_invariance: f64,
}

impl Default for Criteria {
    /// The paper's criteria: at least 200 executions and 25% invariance.
    fn default() -> Criteria {
        Criteria {
            min_executions: 200,
            min_invariance: 0.25,
        }
    }
}

/// One pair the metric scored.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct PairError {
    /// The load's PC.
    pub pc: u64,
    /// The value.
    pub value: u64,
    /// Executions of the pair (its weight).
    pub executions: u64,
    /// Exact invariance: executions of the pair / executions of the load.
    pub exact: f64,
    /// The estimate (0 if the pair was not reported).
    pub estimate: f64,
}

/// The weighted RMS error and what it was computed over.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct InvarianceError {
    /// sqrt(Σ w·(estimate − exact)² / Σ w), w = executions of the pair; 0
    /// when no pair qualifies.
    pub weighted_rms_error: f64,
    /// Pairs that met the criteria.
    pub pairs: usize,
    /// Pairs that met the criteria but were not reported (estimate 0).
    pub unreported: usize,
    /// Σ w over the qualifying pairs.
    pub weight: u64,
}

/// The exact invariance of value `value` at load `pc` in `exact`, or 0.
pub fn exact_invariance(exact: &ExactCounts, pc: u64, value: u64) -> f64 {
    let n = exact.load_count(pc);
    if n == 0 {
        return 0.0;
    }
    exact.load_values.get(&(pc, value)).copied().unwrap_or(0) as f64 / n as f64
}

/// The pairs of `exact` that meet `criteria`, each with the estimate that
/// `estimate(pc, value)` gives (`None` = not reported = 0), sorted by PC
/// then value.
pub fn scored_pairs(
    exact: &ExactCounts,
    criteria: Criteria,
    estimate: impl Fn(u64, u64) -> Option<f64>,
) -> (Vec<PairError>, usize) {
    let mut unreported = 0;
    let mut out: Vec<PairError> = exact
        .load_values
        .iter()
        .filter(|(_, &n)| n >= criteria.min_executions)
        .filter_map(|(&(pc, value), &n)| {
            let exact_inv = n as f64 / exact.load_count(pc).max(1) as f64;
            if exact_inv < criteria.min_invariance {
                return None;
            }
            let est = match estimate(pc, value) {
                Some(e) => e,
                None => {
                    unreported += 1;
                    0.0
                }
            };
            Some(PairError {
                pc,
                value,
                executions: n,
                exact: exact_inv,
                estimate: est,
            })
        })
        .collect();
    out.sort_unstable_by_key(|p| (p.pc, p.value));
    (out, unreported)
}

/// The weighted RMS invariance error of `estimate` against `exact` over
/// the pairs that meet `criteria` (§5.3).
pub fn weighted_rms_error(
    exact: &ExactCounts,
    criteria: Criteria,
    estimate: impl Fn(u64, u64) -> Option<f64>,
) -> InvarianceError {
    let (pairs, unreported) = scored_pairs(exact, criteria, estimate);
    let mut sum = 0.0;
    let mut weight = 0u64;
    for p in &pairs {
        let d = p.estimate - p.exact;
        sum += p.executions as f64 * d * d;
        weight += p.executions;
    }
    InvarianceError {
        weighted_rms_error: if weight == 0 {
            0.0
        } else {
            (sum / weight as f64).sqrt()
        },
        pairs: pairs.len(),
        unreported,
        weight,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::event::Event;
    use crate::stream::Sink;

    fn counts(pairs: &[(u64, u64, u64)]) -> ExactCounts {
        let mut x = ExactCounts::new();
        for &(pc, v, n) in pairs {
            for _ in 0..n {
                x.observe(&[Event::load(pc, 0, 8, v)]);
            }
        }
        x
    }

    #[test]
    fn exact_estimates_score_zero() {
        let x = counts(&[(0x10, 1, 600), (0x10, 2, 400), (0x20, 5, 300)]);
        let e = weighted_rms_error(&x, Criteria::default(), |pc, v| {
            Some(exact_invariance(&x, pc, v))
        });
        assert_eq!(e.pairs, 3);
        assert_eq!(e.unreported, 0);
        assert_eq!(e.weight, 1300);
        assert!(e.weighted_rms_error < 1e-12);
    }

    #[test]
    fn criteria_exclude_rare_and_variant_pairs() {
        // (0x10, 3) has 199 executions; (0x30, *) are each 10% invariant.
        let mut spec = vec![(0x10, 1, 1000), (0x10, 3, 199)];
        for v in 0..10 {
            spec.push((0x30, v, 300));
        }
        let x = counts(&spec);
        let e = weighted_rms_error(&x, Criteria::default(), |_, _| None);
        assert_eq!(e.pairs, 1);
        assert_eq!(e.unreported, 1);
        // Estimate 0 for an invariance of 1000/1199.
        assert!((e.weighted_rms_error - 1000.0 / 1199.0).abs() < 1e-12);
    }

    #[test]
    fn errors_are_weighted_by_frequency() {
        // Pair A: 900 executions, invariance 0.9, estimated 0.8 (error 0.1).
        // Pair B: 300 executions, invariance 1.0, estimated 0.5 (error 0.5).
        let x = counts(&[(0x10, 1, 900), (0x10, 2, 100), (0x20, 7, 300)]);
        let e = weighted_rms_error(&x, Criteria::default(), |pc, _| {
            Some(if pc == 0x10 { 0.8 } else { 0.5 })
        });
        let want = ((900.0 * 0.01 + 300.0 * 0.25) / 1200.0f64).sqrt();
        assert_eq!(e.pairs, 2);
        assert!((e.weighted_rms_error - want).abs() < 1e-12, "{e:?}");
    }

    #[test]
    fn empty_profile_scores_zero_pairs() {
        let x = ExactCounts::new();
        let e = weighted_rms_error(&x, Criteria::default(), |_, _| Some(1.0));
        assert_eq!(e.pairs, 0);
        assert_eq!(e.weighted_rms_error, 0.0);
    }
}
