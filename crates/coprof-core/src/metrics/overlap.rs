//! Overlap accuracy of a sampled profile (Lee & Zilles, CGO 2008, §4.1,
//! after Arnold & Ryder, PLDI 2001).
//!
//! Both profiles are normalised to frequencies (each entry's share of its
//! profile's total) and the accuracy is Σ_i min(f_full(i), f_sampled(i)):
//! the share of the full profile that the sampled one reproduces. It is 1
//! when the two distributions are the same, 0 when they share no entry, and
//! it equals 1 − the total variation distance between them. Scaling a
//! profile (weighting every sample by the sampling interval) does not
//! change it.

use rustc_hash::FxHashMap;
use std::hash::Hash;

/// Overlap accuracy of two count profiles, keyed by anything hashable (a
/// PC, a method entry, a (PC, value) pair). Keys may repeat; their counts
/// add. Two empty profiles are identical (1); an empty profile against a
/// non-empty one shares nothing (0).
pub fn overlap<K: Eq + Hash>(
    full: impl IntoIterator<Item = (K, u64)>,
    sampled: impl IntoIterator<Item = (K, u64)>,
) -> f64 {
    overlap_weights(
        full.into_iter().map(|(k, c)| (k, c as f64)),
        sampled.into_iter().map(|(k, c)| (k, c as f64)),
    )
}

/// [`overlap`] for profiles of non-negative real weights (estimates that
/// weight each sample by its inverse probability). Negative and non-finite
/// weights count as zero.
pub fn overlap_weights<K: Eq + Hash>(
    full: impl IntoIterator<Item = (K, f64)>,
    sampled: impl IntoIterator<Item = (K, f64)>,
) -> f64 {
    let clean = |w: f64| if w.is_finite() && w > 0.0 { w } else { 0.0 };
    let mut f: FxHashMap<K, f64> = FxHashMap::default();
    let mut f_total = 0.0;
    for (k, w) in full {
        let w = clean(w);
        *f.entry(k).or_insert(0.0) += w;
        f_total += w;
    }
    let mut s: FxHashMap<K, f64> = FxHashMap::default();
    let mut s_total = 0.0;
    for (k, w) in sampled {
        let w = clean(w);
        *s.entry(k).or_insert(0.0) += w;
        s_total += w;
    }
    match (f_total > 0.0, s_total > 0.0) {
        (false, false) => return 1.0,
        (false, true) | (true, false) => return 0.0,
        _ => {}
    }
    // Walk the smaller map.
    let (small, small_total, large, large_total) = if f.len() <= s.len() {
        (&f, f_total, &s, s_total)
    } else {
        (&s, s_total, &f, f_total)
    };
    let sum: f64 = small
        .iter()
        .filter_map(|(k, &a)| {
            large
                .get(k)
                .map(|&b| (a / small_total).min(b / large_total))
        })
        .sum();
    sum.clamp(0.0, 1.0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn worked_example() {
        // full: a 50%, b 30%, c 20%; sampled: a 60%, b 40%.
        let full = [("a", 50u64), ("b", 30), ("c", 20)];
        let sampled = [("a", 3u64), ("b", 2)];
        let o = overlap(full, sampled);
        assert!((o - (0.5 + 0.3)).abs() < 1e-12, "{o}");
    }

    #[test]
    fn edge_cases() {
        let none: [(u64, u64); 0] = [];
        assert_eq!(overlap(none, none), 1.0);
        assert_eq!(overlap([(1u64, 5u64)], none), 0.0);
        assert_eq!(overlap(none, [(1u64, 5u64)]), 0.0);
        assert_eq!(overlap([(1u64, 5u64)], [(2u64, 5u64)]), 0.0);
        assert_eq!(overlap([(1u64, 0u64)], [(1u64, 0u64)]), 1.0);
        // Repeated keys add up.
        assert_eq!(
            overlap([(1u64, 1u64), (1, 1), (2, 2)], [(1u64, 1u64), (2, 1)]),
            1.0
        );
        assert_eq!(
            overlap_weights([(1u64, f64::NAN), (2, 1.0)], [(2u64, 3.0)]),
            1.0
        );
    }

    fn profile() -> impl Strategy<Value = Vec<(u8, u64)>> {
        prop::collection::vec((0u8..32, 0u64..1000), 0..40)
    }

    proptest! {
        #[test]
        fn bounded_and_symmetric(a in profile(), b in profile()) {
            let x = overlap(a.clone(), b.clone());
            let y = overlap(b, a);
            prop_assert!((0.0..=1.0).contains(&x));
            prop_assert!((x - y).abs() < 1e-12);
        }

        #[test]
        fn identical_profiles_overlap_fully(a in profile(), scale in 1u64..50) {
            let scaled: Vec<(u8, u64)> = a.iter().map(|&(k, c)| (k, c * scale)).collect();
            prop_assert!((overlap(a.clone(), scaled) - 1.0).abs() < 1e-9);
        }

        #[test]
        fn equals_one_minus_total_variation(a in profile(), b in profile()) {
            let total = |p: &[(u8, u64)]| p.iter().map(|x| x.1).sum::<u64>() as f64;
            let (ta, tb) = (total(&a), total(&b));
            prop_assume!(ta > 0.0 && tb > 0.0);
            let mut fa = [0.0f64; 32];
            let mut fb = [0.0f64; 32];
            for &(k, c) in &a { fa[k as usize] += c as f64 / ta; }
            for &(k, c) in &b { fb[k as usize] += c as f64 / tb; }
            let tv: f64 = (0..32).map(|i| (fa[i] - fb[i]).abs()).sum::<f64>() / 2.0;
            prop_assert!((overlap(a, b) - (1.0 - tv)).abs() < 1e-9);
        }
    }
}
