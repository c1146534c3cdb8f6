//! One Gibbons–Matias hotlist: at most N values with counters and a
//! sampling probability p (Gibbons & Matias, "New Sampling-Based Summary
//! Statistics for Improving Approximate Query Answers", SIGMOD 1998, §3;
//! as DCPI value sampling uses them, Burrows et al., ASPLOS 2000, §2.2).
//!
//! Each value is added with probability p. When an (N+1)-th value would
//! enter, p is divided by f (default N/(N−1)) and every counter is thinned
//! by coin tosses with probability 1/f, again and again until at most N
//! values remain:
//!
//! - concise samples keep each counted occurrence with probability 1/f, so
//!   every occurrence of the stream is in the sample independently with
//!   probability p and `C[v]/p` is an unbiased estimate of v's count;
//! - counting samples toss one coin with probability 1/f; on tails they
//!   take one off the counter and keep taking one off per toss of a coin
//!   with probability p (the new p) until heads, which leaves the counter
//!   as if the value had entered under the new p.

use super::config::Variant;
use rand::RngCore;
use rand_distr::{Binomial, Distribution, Geometric};
use serde::Serialize;

/// A hotlist's scalar state; its values and counters live in the table's
/// flat arrays.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct ListState {
    /// The sampling probability p.
    pub p: f64,
    /// `p` as a threshold on a uniform 64-bit number (heads iff below);
    /// `u64::MAX` stands for p = 1.
    #[serde(skip)]
    pub coin: u64,
    /// Values held.
    pub len: u32,
    /// Occurrences offered to the list (the PC's samples of this type).
    pub offered: u64,
    /// One bit per value held, at a hash of the value ([`filter_bit`]): a
    /// value whose bit is clear is not in the list, and the lookup skips
    /// the values, a cache line or two away from the state. Counting
    /// samples look every sample up, and most samples of a load with many
    /// values are of values not held.
    #[serde(skip)]
    pub filter: u64,
}

/// The bit of `v` in a list's filter.
#[inline(always)]
pub fn filter_bit(v: u64) -> u64 {
    1 << (v.wrapping_mul(0x9e37_79b9_7f4a_7c15) >> 58)
}

impl ListState {
    /// A new list: p = 1, empty.
    pub fn new() -> ListState {
        ListState {
            p: 1.0,
            coin: u64::MAX,
            len: 0,
            offered: 0,
            filter: 0,
        }
    }

    fn set_p(&mut self, p: f64) {
        self.p = p;
        self.coin = if p >= 1.0 {
            u64::MAX
        } else {
            (p * 18_446_744_073_709_551_616.0) as u64
        };
    }
}

impl Default for ListState {
    fn default() -> ListState {
        ListState::new()
    }
}

/// Heads with the probability a threshold stands for.
#[inline]
pub fn toss(rng: &mut impl RngCore, coin: u64) -> bool {
    coin == u64::MAX || rng.next_u64() < coin
}

/// A hotlist: its state and its slices (capacity N + 1 each).
pub struct List<'a> {
    /// p, length, occurrences offered.
    pub state: &'a mut ListState,
    /// Its values (the first `len` are in use).
    pub values: &'a mut [u64],
    /// Their counters.
    pub counts: &'a mut [u64],
}

impl List<'_> {
    /// One occurrence of `v`.
    #[inline]
    pub fn offer(&mut self, v: u64, variant: Variant, factor: f64, rng: &mut impl RngCore) {
        self.state.offered += 1;
        let len = self.state.len as usize;
        match variant {
            Variant::Concise => {
                if !toss(rng, self.state.coin) {
                    return;
                }
                match self.find(v, len) {
                    Some(i) => self.counts[i] += 1,
                    None => self.enter(v, factor, variant, rng),
                }
            }
            Variant::Counting => match self.find(v, len) {
                Some(i) => self.counts[i] += 1,
                None => {
                    if toss(rng, self.state.coin) {
                        self.enter(v, factor, variant, rng);
                    }
                }
            },
        }
    }

    /// Where `v` is among the first `len` values, if it is.
    #[inline(always)]
    fn find(&self, v: u64, len: usize) -> Option<usize> {
        if self.state.filter & filter_bit(v) == 0 {
            return None;
        }
        self.values[..len].iter().position(|&x| x == v)
    }

    fn enter(&mut self, v: u64, factor: f64, variant: Variant, rng: &mut impl RngCore) {
        let len = self.state.len as usize;
        self.state.filter |= filter_bit(v);
        self.values[len] = v;
        self.counts[len] = 1;
        self.state.len += 1;
        let capacity = self.values.len() - 1;
        while self.state.len as usize > capacity {
            self.thin(factor, variant, rng);
        }
    }

    /// Divides p by f and thins every counter (one round).
    fn thin(&mut self, factor: f64, variant: Variant, rng: &mut impl RngCore) {
        let new_p = self.state.p / factor;
        self.state.set_p(new_p);
        let keep = 1.0 / factor;
        let keep_coin = (keep * 18_446_744_073_709_551_616.0) as u64;
        let len = self.state.len as usize;
        match variant {
            Variant::Concise => thin_binomial_all(&mut self.counts[..len], keep, rng),
            Variant::Counting => {
                // One distribution per round: building it takes a logarithm.
                let tails = (new_p < 1.0).then(|| Geometric::new(new_p).expect("0 < p < 1"));
                for c in &mut self.counts[..len] {
                    if rng.next_u64() >= keep_coin {
                        let tails = tails.as_ref().map_or(0, |g| g.sample(rng));
                        *c = (*c - 1).saturating_sub(tails);
                    }
                }
            }
        }
        let mut w = 0;
        let mut filter = 0;
        for r in 0..len {
            if self.counts[r] > 0 {
                self.values[w] = self.values[r];
                self.counts[w] = self.counts[r];
                filter |= filter_bit(self.values[r]);
                w += 1;
            }
        }
        self.state.len = w as u32;
        self.state.filter = filter;
    }
}

/// Keeps each occurrence counted in `counts` independently with
/// probability `keep` (binomial thinning of every counter). It walks from
/// one discarded occurrence to the next with geometric gaps across all
/// the counters at once, about 1 + (1 − keep)·Σc random numbers instead of
/// Σc; a very large counter draws its binomial directly.
fn thin_binomial_all(counts: &mut [u64], keep: f64, rng: &mut impl RngCore) {
    let ln_keep = keep.ln();
    // Occurrences kept before the next discarded one: Geometric(1 − keep),
    // memoryless, so one walk serves every counter in turn.
    let mut gap = || -> u64 {
        let u = ((rng.next_u64() >> 11) as f64 + 0.5) * (1.0 / (1u64 << 53) as f64);
        let g = (u.ln() / ln_keep).floor();
        if g >= u64::MAX as f64 {
            u64::MAX
        } else {
            g as u64
        }
    };
    let mut next = gap();
    for c in counts.iter_mut() {
        if *c > 1024 {
            continue;
        }
        let mut remaining = *c;
        while next < remaining {
            *c -= 1;
            remaining -= next + 1;
            next = gap();
        }
        next -= remaining;
    }
    for c in counts.iter_mut().filter(|c| **c > 1024) {
        *c = Binomial::new(*c, keep).expect("0 < keep < 1").sample(rng);
    }
}

/// Binomial thinning of one counter (see [`thin_binomial_all`]).
#[cfg(test)]
fn thin_binomial(c: u64, keep: f64, _ln_keep: f64, rng: &mut impl RngCore) -> u64 {
    let mut one = [c];
    thin_binomial_all(&mut one, keep, rng);
    one[0]
}

/// The estimated count of a value with counter `c` in a list with
/// probability `p`: C/p for concise samples, C + 1/p − 1 for counting
/// samples (the occurrences expected to have passed before it entered).
pub fn estimate(c: u64, p: f64, variant: Variant) -> f64 {
    match variant {
        Variant::Concise => c as f64 / p,
        Variant::Counting => c as f64 + 1.0 / p - 1.0,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;

    #[test]
    fn binomial_thinning_has_the_right_mean_and_spread() {
        let mut rng = rand_xoshiro::Xoshiro256PlusPlus::seed_from_u64(5);
        for (c, keep) in [(1u64, 0.9375), (10, 0.75), (300, 0.5), (5000, 0.9)] {
            // Thinning several counters in one walk keeps them independent.
            let mut pair = [c, c];
            let mut both = 0.0;
            for _ in 0..2000 {
                pair = [c, c];
                thin_binomial_all(&mut pair, keep, &mut rng);
                both += (pair[0] as f64 - c as f64 * keep) * (pair[1] as f64 - c as f64 * keep);
            }
            let v = c as f64 * keep * (1.0 - keep);
            assert!(
                (both / 2000.0).abs() < 0.15 * v + 0.01,
                "c {c}: covariance {}",
                both / 2000.0
            );
            assert!(pair.iter().all(|&x| x <= c));
            let n = 20_000;
            let xs: Vec<f64> = (0..n)
                .map(|_| thin_binomial(c, keep, f64::ln(keep), &mut rng) as f64)
                .collect();
            let mean = xs.iter().sum::<f64>() / n as f64;
            let var = xs.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / n as f64;
            let (m, v) = (c as f64 * keep, c as f64 * keep * (1.0 - keep));
            assert!(
                (mean - m).abs() < 4.0 * (v / n as f64).sqrt() + 1e-9,
                "c {c}: mean {mean} vs {m}"
            );
            assert!(
                (var - v).abs() < 0.1 * v + 1e-9,
                "c {c}: variance {var} vs {v}"
            );
            assert!(xs.iter().all(|&x| x <= c as f64));
        }
    }
}
