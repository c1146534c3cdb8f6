//! A small uniform random number generator and a natural logarithm, for the
//! samplers that redraw their interval (geometric, periodic).
//!
//! The crate has no dependencies and runs without `std`, which has the
//! logarithm; so it carries its own. Neither is on a sampler's common path:
//! they run once per sample, when a countdown is reset.

/// splitmix64 (Steele, Lea & Flood, OOPSLA 2014): 64-bit state, one add and
/// a 64-bit mix per draw; passes BigCrush, ample for sampling intervals.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SplitMix64 {
    state: u64,
}

impl SplitMix64 {
    /// A generator seeded with `seed`.
    pub const fn new(seed: u64) -> SplitMix64 {
        SplitMix64 { state: seed }
    }

    /// The next 64 uniform bits.
    #[inline]
    pub fn next_u64(&mut self) -> u64 {
        self.state = self.state.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.state;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// A uniform number in (0, 1], with 53 random bits.
    #[inline]
    pub fn next_open01(&mut self) -> f64 {
        ((self.next_u64() >> 11) + 1) as f64 * (1.0 / (1u64 << 53) as f64)
    }

    /// A uniform integer in 0..=n.
    #[inline]
    pub fn below_inclusive(&mut self, n: u64) -> u64 {
        if n == u64::MAX {
            return self.next_u64();
        }
        // Multiply-shift (Lemire): bias below 2^-64 · (n+1), negligible.
        ((self.next_u64() as u128 * (n as u128 + 1)) >> 64) as u64
    }
}

/// Natural logarithm: the standard library's where the `std` feature is
/// on (about twice as fast here), else [`ln_series`].
#[inline]
pub fn ln(x: f64) -> f64 {
    #[cfg(feature = "std")]
    {
        x.ln()
    }
    #[cfg(not(feature = "std"))]
    {
        ln_series(x)
    }
}

/// Natural logarithm of a positive finite `x`, to about 1 ulp, without
/// `std`.
///
/// Splits x = m · 2^e with m in [√½, √2), then ln m = 2·atanh(s) with
/// s = (m − 1)/(m + 1), |s| < 0.172, as its odd series to eleven terms.
pub fn ln_series(x: f64) -> f64 {
    if x.is_nan() || x < 0.0 {
        return f64::NAN;
    }
    if x == 0.0 {
        return f64::NEG_INFINITY;
    }
    if x.is_infinite() {
        return f64::INFINITY;
    }
    let mut bits = x.to_bits();
    let mut e: i64 = ((bits >> 52) & 0x7ff) as i64;
    if e == 0 {
        // Subnormal: scale into the normal range first.
        let y = x * (1u64 << 54) as f64;
        bits = y.to_bits();
        e = ((bits >> 52) & 0x7ff) as i64 - 54;
    }
    e -= 1023;
    let mut m = f64::from_bits((bits & ((1u64 << 52) - 1)) | (1023u64 << 52));
    if m > core::f64::consts::SQRT_2 {
        m *= 0.5;
        e += 1;
    }
    // ln m = 2·(s + s³/3 + s⁵/5 + …); with s² < 0.0295 eleven terms reach
    // below 2^-53 relative, so the series is a fixed polynomial in s²
    // evaluated by Horner's rule, innermost term first: one division per
    // call. (Written as steps, not as one nested expression, which
    // rustfmt takes minutes to lay out.)
    let s = (m - 1.0) / (m + 1.0);
    let z = s * s;
    let mut p = 1.0 / 21.0;
    for odd in [19.0, 17.0, 15.0, 13.0, 11.0, 9.0, 7.0, 5.0, 3.0] {
        p = 1.0 / odd + z * p;
    }
    let p = 1.0 + z * p;
    let sum = s * p;
    2.0 * sum + e as f64 * core::f64::consts::LN_2
}

/// |x| (kept here so that the crate builds on toolchains whose `core` lacks
/// `f64::abs`).
const fn fabs(x: f64) -> f64 {
    if x < 0.0 {
        -x
    } else {
        x
    }
}

/// ln(1 + x) for x > −1, accurate also for tiny x (where 1 + x rounds).
pub fn ln_1p(x: f64) -> f64 {
    if fabs(x) < 1e-4 {
        // ln(1+x) = 2·atanh(x / (2 + x)), exact in form, series in x.
        let s = x / (2.0 + x);
        let s2 = s * s;
        return 2.0 * s * (1.0 + s2 / 3.0 + s2 * s2 / 5.0 + s2 * s2 * s2 / 7.0);
    }
    ln_series(1.0 + x)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ln_matches_std() {
        let mut r = SplitMix64::new(3);
        for _ in 0..100_000 {
            let x = f64::from_bits(r.next_u64() >> 2); // positive, wide range
            if !x.is_finite() || x == 0.0 {
                continue;
            }
            let (a, b) = (ln_series(x), x.ln());
            assert!(
                (a - b).abs() <= 4.0 * f64::EPSILON * b.abs().max(1.0),
                "{x}: {a} vs {b}"
            );
        }
        for x in [1.0, 0.5, 2.0, 1e-300, 5e-324, 1.0 - 1e-16, 1.0 + 1e-15, 3.0] {
            assert!(
                (ln_series(x) - x.ln()).abs() <= 4.0 * f64::EPSILON * x.ln().abs().max(1.0),
                "{x}"
            );
        }
        assert_eq!(ln_series(0.0), f64::NEG_INFINITY);
        assert!(ln_series(-1.0).is_nan());
        assert!((ln(2.0) - ln_series(2.0)).abs() < 1e-15);
    }

    #[test]
    fn ln_1p_is_accurate_for_tiny_arguments() {
        for x in [-1e-5, -1e-9, 1e-12, -0.5, 0.25, -1.0 / 65536.0] {
            let (a, b) = (ln_1p(x), x.ln_1p());
            assert!((a - b).abs() <= 1e-14 * b.abs(), "{x}: {a} vs {b}");
        }
    }

    #[test]
    fn below_inclusive_stays_in_range() {
        let mut r = SplitMix64::new(1);
        let mut seen = [false; 5];
        for _ in 0..1000 {
            let v = r.below_inclusive(4);
            assert!(v <= 4);
            seen[v as usize] = true;
        }
        assert!(seen.iter().all(|&s| s));
        let u = r.next_open01();
        assert!(u > 0.0 && u <= 1.0);
    }
}
