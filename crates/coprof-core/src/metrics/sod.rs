//! SOD, the averaged sum of differences that Gordon-Ross & Vahid (CASES
//! 2003, §4) use to judge a frequent loop detector: over the ten most
//! frequent loops of the exact profile,
//!
//! SOD = Σ_{i=1..10} |actual_i − predicted_i|^(1/2) / 10,
//!
//! with both shares as fractions in [0, 1], and accuracy = 1 − SOD. The
//! square root makes small errors count: a loop whose share is off by 1 %
//! costs 0.1 / 10 = 0.01 of accuracy on its own.

/// The number of loops SOD averages over: the ten most frequent.
pub const SOD_LOOPS: usize = 10;

/// SOD over `pairs` of (actual share, predicted share), the exact profile's
/// most frequent loops first. Only the first [`SOD_LOOPS`] pairs count, and
/// the sum is always divided by [`SOD_LOOPS`]: when fewer loops exist, the
/// missing ones have actual and predicted shares of zero. A loop the
/// detector lost has predicted share zero.
pub fn sod<I: IntoIterator<Item = (f64, f64)>>(pairs: I) -> f64 {
    sod_over(pairs, SOD_LOOPS)
}

/// SOD over the first `n` pairs, divided by `n` (the paper's form with
/// another number of loops). Returns 0 for `n == 0`.
pub fn sod_over<I: IntoIterator<Item = (f64, f64)>>(pairs: I, n: usize) -> f64 {
    if n == 0 {
        return 0.0;
    }
    let sum: f64 = pairs
        .into_iter()
        .take(n)
        .map(|(actual, predicted)| (actual - predicted).abs().sqrt())
        .sum();
    sum / n as f64
}

/// The paper's accuracy, 1 − SOD.
pub fn accuracy<I: IntoIterator<Item = (f64, f64)>>(pairs: I) -> f64 {
    1.0 - sod(pairs)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn perfect_prediction_is_zero() {
        let p = [(0.5, 0.5), (0.3, 0.3), (0.2, 0.2)];
        assert_eq!(sod(p), 0.0);
        assert_eq!(accuracy(p), 1.0);
    }

    #[test]
    fn worked_example() {
        // Off by 0.04 and 0.01 on two loops: (0.2 + 0.1) / 10.
        let p = [(0.50, 0.54), (0.30, 0.29), (0.2, 0.2)];
        assert!((sod(p) - 0.03).abs() < 1e-12);
        // Only the first ten count.
        let many = vec![(0.0, 1.0); 20];
        assert!((sod(many) - 1.0).abs() < 1e-12);
        assert!((sod_over([(0.0, 0.25)], 2) - 0.25).abs() < 1e-12);
        assert_eq!(sod_over([(0.0, 0.25)], 0), 0.0);
    }

    proptest! {
        #[test]
        fn bounded_and_symmetric(v in proptest::collection::vec((0.0f64..=1.0, 0.0f64..=1.0), 0..15)) {
            let s = sod(v.iter().copied());
            prop_assert!((0.0..=1.0).contains(&s));
            let swapped = sod(v.iter().map(|&(a, p)| (p, a)));
            prop_assert!((s - swapped).abs() < 1e-12);
        }
    }
}
