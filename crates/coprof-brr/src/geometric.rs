//! Geometric countdown sampling: a counter whose reset value is drawn from
//! a geometric distribution with the counter's mean.
//!
//! This keeps counter-based sampling's common path (one decrement and one
//! branch, Lee & Zilles, CGO 2008, §2) while making the intervals random,
//! so that no program period can resonate with them (§4.2). Drawing the
//! interval costs a logarithm, paid once per sample. Each event is sampled
//! independently with probability 1/N, exactly as a Bernoulli sampler (or
//! brr with N = 2^(freq+1)) would; the countdown only skips the coin flips.

use crate::error::Error;
use crate::rng::{ln, ln_1p, SplitMix64};
use crate::Sampler;

/// Samples each event independently with probability 1/`mean`, by counting
/// down geometric intervals.
#[derive(Clone, Debug, PartialEq)]
pub struct Geometric {
    count: u64,
    /// The interval after the current one, drawn a sample ahead: the draw
    /// (a logarithm) then runs while the site goes on counting down, not
    /// on the path from one sample to the next countdown. The intervals
    /// are the same, in the same order.
    ahead: u64,
    mean: u64,
    // 1 / ln(1 − 1/mean): an interval is 1 + ⌊ln U · inv_ln_q⌋.
    inv_ln_q: f64,
    rng: SplitMix64,
}

impl Geometric {
    /// A sampler with mean interval `mean` (probability 1/mean per event).
    pub fn new(mean: u64, seed: u64) -> Result<Geometric, Error> {
        if mean == 0 {
            return Err(Error::ZeroInterval);
        }
        let inv_ln_q = if mean == 1 {
            0.0
        } else {
            1.0 / ln_1p(-1.0 / mean as f64)
        };
        let (count, rng) = Geometric::draw(SplitMix64::new(crate::lfsr::mix(seed)), mean, inv_ln_q);
        let (ahead, rng) = Geometric::draw(rng, mean, inv_ln_q);
        Ok(Geometric {
            count,
            ahead,
            mean,
            inv_ln_q,
            rng,
        })
    }

    /// The next interval: P(k) = (1 − p)^(k−1) · p for k ≥ 1, p = 1/mean
    /// (inversion of the geometric distribution function), and the
    /// generator advanced past it.
    ///
    /// Everything goes by value: a call given a pointer into the sampler
    /// would oblige the compiler to keep the countdown in memory at every
    /// site, since the call could read it.
    #[cold]
    #[inline(never)]
    fn draw(mut rng: SplitMix64, mean: u64, inv_ln_q: f64) -> (u64, SplitMix64) {
        if mean == 1 {
            return (1, rng);
        }
        let u = rng.next_open01();
        let k = ln(u) * inv_ln_q; // ≥ 0
        let interval = if k >= (u64::MAX - 1) as f64 {
            u64::MAX
        } else {
            1 + k as u64
        };
        (interval, rng)
    }

    /// The mean interval.
    pub fn mean(&self) -> u64 {
        self.mean
    }

    /// The countdown, and what gives the interval after each sample: the
    /// one drawn ahead, while the next is drawn in its place.
    #[inline(always)]
    fn countdown(&mut self) -> (&mut u64, impl FnMut() -> u64 + '_) {
        let (mean, inv_ln_q) = (self.mean, self.inv_ln_q);
        let (rng, ahead) = (&mut self.rng, &mut self.ahead);
        let next = move || {
            let (interval, r) = Geometric::draw(rng.clone(), mean, inv_ln_q);
            *rng = r;
            core::mem::replace(ahead, interval)
        };
        (&mut self.count, next)
    }
}

impl Sampler for Geometric {
    crate::count_down_sampling!();
    fn mean_interval(&self) -> f64 {
        self.mean as f64
    }
    fn bytes(&self) -> usize {
        core::mem::size_of::<Geometric>()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn intervals_are_geometric() {
        let n = 16u64;
        let mut g = Geometric::new(n, 5).unwrap();
        let mut intervals = std::vec::Vec::new();
        let mut since = 0u64;
        for _ in 0..2_000_000 {
            since += 1;
            if g.sample() {
                intervals.push(since);
                since = 0;
            }
        }
        let m = intervals.len() as f64;
        let mean = intervals.iter().sum::<u64>() as f64 / m;
        assert!((mean - 16.0).abs() < 0.3, "mean {mean}");
        // P(k = 1) = 1/16 and P(k > 16) = (15/16)^16.
        let ones = intervals.iter().filter(|&&k| k == 1).count() as f64 / m;
        assert!((ones - 1.0 / 16.0).abs() < 0.004, "P(1) = {ones}");
        let long = intervals.iter().filter(|&&k| k > 16).count() as f64 / m;
        let expect = (15.0f64 / 16.0).powi(16);
        assert!((long - expect).abs() < 0.01, "P(>16) = {long} vs {expect}");
    }

    #[test]
    fn mean_one_samples_everything_and_zero_is_rejected() {
        let mut g = Geometric::new(1, 1).unwrap();
        assert!((0..100).all(|_| g.sample()));
        assert_eq!(Geometric::new(0, 1), Err(Error::ZeroInterval));
    }
}
