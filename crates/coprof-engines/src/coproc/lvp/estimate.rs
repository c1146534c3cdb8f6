//! Invariance estimation from a load's records (Zilles & Sohi, HPCA 2001,
//! Appendix A.6) and the glacial-value test (§5.1.4).
//!
//! A record says that while value `v` was active, it was hit `h` times and
//! missed `m` times, and the slot counted `t ≥ h + m` samples in all (the
//! rest were counted before the last re-selection and belong to no known
//! value). The estimate of `v`'s invariance is
//!
//! - its hits,
//! - plus a share of every other value's misses, in proportion to `v`'s
//!   hits among the values other than that one (a miss against `u` was
//!   some value other than `u`),
//! - plus an equal share of the samples seen only by the total counter,
//!   each share capped at 20% of them,
//!
//! divided by all samples recorded for the load.

use super::handler::PcProfile;

/// The estimated invariance of every value in `p`, most invariant first
/// (ties by lower value).
pub fn invariance(p: &PcProfile, unseen_share_cap: f64) -> Vec<(u64, f64)> {
    if p.samples == 0 || p.values.is_empty() {
        return Vec::new();
    }
    let hits: u64 = p.values.iter().map(|r| r.hits).sum();
    // Σ_u m_u / (H − h_u): each value's misses spread over the hits of the
    // values other than itself.
    let spread: f64 = p
        .values
        .iter()
        .filter(|r| hits > r.hits)
        .map(|r| r.misses as f64 / (hits - r.hits) as f64)
        .sum();
    let share = (1.0 / p.values.len() as f64).min(unseen_share_cap) * p.unseen as f64;
    let mut out: Vec<(u64, f64)> = p
        .values
        .iter()
        .map(|r| {
            let own = if hits > r.hits {
                r.misses as f64 / (hits - r.hits) as f64
            } else {
                0.0
            };
            let from_others = r.hits as f64 * (spread - own);
            let est = (r.hits as f64 + from_others + share) / p.samples as f64;
            (r.value, est.clamp(0.0, 1.0))
        })
        .collect();
    out.sort_unstable_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
    out
}

/// §5.1.4: a load is glacial when several values (`min_values`) each have
/// many hits (`min_hits`) and few misses (at most `max_miss_ratio` per
/// hit): it holds one value for long stretches, then another.
pub fn is_glacial(p: &PcProfile, min_hits: u64, max_miss_ratio: f64, min_values: usize) -> bool {
    p.values
        .iter()
        .filter(|r| r.hits >= min_hits && r.misses as f64 <= max_miss_ratio * r.hits as f64)
        .count()
        >= min_values
}

#[cfg(test)]
mod tests {
    use super::super::handler::{PcProfile, ValueRecord};
    use super::*;

    fn profile(values: &[(u64, u64, u64)], unseen: u64) -> PcProfile {
        let values: Vec<ValueRecord> = values
            .iter()
            .map(|&(value, hits, misses)| ValueRecord {
                value,
                hits,
                misses,
            })
            .collect();
        let samples = values.iter().map(|r| r.hits + r.misses).sum::<u64>() + unseen;
        PcProfile {
            values,
            unseen,
            samples,
            ..PcProfile::default()
        }
    }

    #[test]
    fn one_invariant_value() {
        let est = invariance(&profile(&[(7, 100, 0)], 0), 0.2);
        assert_eq!(est, vec![(7, 1.0)]);
    }

    #[test]
    fn misses_go_to_other_values_by_their_hits() {
        // A: 60 hits, 40 misses. B: 10 hits, 0 misses. C: 30 hits, 0 misses.
        // A's 40 misses split 10:30 between B and C.
        let est = invariance(&profile(&[(1, 60, 40), (2, 10, 0), (3, 30, 0)], 0), 0.2);
        let get = |v| est.iter().find(|e| e.0 == v).unwrap().1;
        let n = 140.0;
        assert!((get(1) - 60.0 / n).abs() < 1e-12);
        assert!((get(2) - 20.0 / n).abs() < 1e-12);
        assert!((get(3) - 60.0 / n).abs() < 1e-12);
    }

    #[test]
    fn unseen_samples_share_is_capped_at_20_percent() {
        // One value, 50 hits, 50 samples seen only by the total counter:
        // it gets 20% of them, not all.
        let est = invariance(&profile(&[(9, 50, 0)], 50), 0.2);
        assert!((est[0].1 - 60.0 / 100.0).abs() < 1e-12, "{est:?}");
        // Ten values: each gets 1/10 of the unseen samples (< 20%).
        let ten: Vec<_> = (0..10).map(|v| (v, 10, 0)).collect();
        let est = invariance(&profile(&ten, 100), 0.2);
        assert!(est.iter().all(|e| (e.1 - 20.0 / 200.0).abs() < 1e-12));
    }

    #[test]
    fn glacial_needs_several_settled_values() {
        let g = |v: &[(u64, u64, u64)]| is_glacial(&profile(v, 0), 32, 0.125, 2);
        assert!(g(&[(1, 200, 3), (2, 150, 10)]));
        assert!(!g(&[(1, 200, 3)]), "one value is invariant, not glacial");
        assert!(!g(&[(1, 200, 100), (2, 150, 100)]), "too many misses");
        assert!(!g(&[(1, 20, 0), (2, 20, 0)]), "too few hits");
    }
}
