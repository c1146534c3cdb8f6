//! Branch-on-random: `brr freq` is taken with probability (1/2)^(freq+1)
//! (Lee & Zilles, CGO 2008, §3.2, Fig. 5).
//!
//! The outcome is the AND of freq+1 bits of an LFSR that steps once per brr
//! (§3.3). Which bits matter: the register shifts by one each step, so if
//! the chosen bits are adjacent, an outcome shares freq of its freq+1 bits
//! with the one before, and a taken brr is followed by another taken one
//! with probability 1/2 whatever freq says. Bits chosen non-contiguous share
//! no bit with the previous outcome, and varied spacing keeps later outcomes
//! from sharing many bits at any one distance, so consecutive outcomes are
//! nearly independent. Both selections are here ([`Spacing`]) so that the
//! difference can be measured.

use crate::error::Error;
use crate::lfsr::{Lfsr, DEFAULT_SEED, DEFAULT_WIDTH};
use crate::Sampler;

/// Largest `freq` operand: a 4-bit field (§3.2).
pub const MAX_FREQ: u32 = 15;

/// How the freq+1 bits that brr ANDs are chosen from the register.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Spacing {
    /// Non-contiguous bits with varied gaps (§3.3), the default.
    Spaced,
    /// Adjacent bits, kept for comparison: consecutive outcomes correlate.
    Adjacent,
    /// Bits spread so that the most bits two outcomes share, at whatever
    /// distance, is as small as a greedy choice makes it (this
    /// implementation's option, see [`spread_mask`]). Where `Spaced`
    /// cannot vary its gaps (at 20 bits, freq 5 and up), it keeps
    /// consecutive outcomes apart but lets outcomes two uses apart share
    /// most of their bits; `Spread` bounds every distance instead.
    Spread,
}

/// The bits brr ANDs for `freq` in a `width`-bit register, as a mask.
///
/// Bit 0 (the freshly fed-back bit) is left out when there is room, so that
/// the next outcome reads only bits of the current state, never their XOR.
///
/// `Spaced` rule: the freq+1 bits lie in bits 1..width with gaps of at least
/// 2 where the width allows it (freq+1 ≤ width/2, i.e. freq ≤ 9 at the
/// default 20 bits). Where they fit, the gaps are b, b+1, b+2, … with the
/// largest base b ≥ 2 that fits the span, any rest widening the widest
/// gaps by one: the smallest gap is as large as the width allows (outcomes
/// fewer than b uses apart share no bit) and the gaps all differ (no lag
/// shares many bits). Otherwise the gaps are 2, 3, 4, … as far as room
/// allows, then 2s. When freq+1 bits cannot all be apart (freq ≥ 10 at 20 bits), the gaps are
/// 1s and 2s spread evenly: adjacent pairs are then unavoidable, and a taken
/// outcome raises the chance of the next one (use a wider register to
/// avoid it, see `BrrConfig::width`). `Adjacent`: bits 1..=freq+1.
pub const fn outcome_mask(width: u32, freq: u32, spacing: Spacing) -> u64 {
    let k = freq + 1;
    if k >= width {
        return crate::lfsr::width_mask(width);
    }
    let slots = width - 1; // bits 1..width
    if let Spacing::Adjacent = spacing {
        return ((1u64 << k) - 1) << 1;
    }
    if let Spacing::Spread = spacing {
        return spread_mask(width, k);
    }
    if k == 1 {
        return 1 << (width - 1);
    }
    let ngaps = k - 1;
    let span = slots - 1; // distance from bit 1 to bit width-1
    let mut gaps = [0u32; 16];
    // Largest base gap b ≥ 2 such that gaps b, b+1, …, b+k−2 fit.
    let tri = ngaps * (ngaps - 1) / 2;
    if 2 * ngaps + tri <= span {
        let b = (span - tri) / ngaps;
        let mut slack = span - tri - b * ngaps;
        let mut i = ngaps as usize;
        while i > 0 {
            i -= 1;
            gaps[i] = b + i as u32;
            // What is left goes to the widest gaps, keeping them distinct.
            if slack > 0 {
                gaps[i] += 1;
                slack -= 1;
            }
        }
    } else if 2 * ngaps <= span {
        // Non-adjacent but tight: gaps 2, 3, 4, … while room is left.
        let mut slack = span - 2 * ngaps;
        let mut i = 0;
        while i < ngaps as usize {
            let extra = if (i as u32) < slack { i as u32 } else { slack };
            gaps[i] = 2 + extra;
            slack -= extra;
            i += 1;
        }
        // Any rest goes to the last gap.
        gaps[ngaps as usize - 1] += slack;
    } else {
        // Adjacency is forced: `twos` gaps of 2 spread evenly among 1s.
        let twos = span - ngaps;
        let mut i = 0;
        while i < ngaps as usize {
            let a = (i as u32 + 1) * twos / ngaps;
            let b = (i as u32) * twos / ngaps;
            gaps[i] = if a > b { 2 } else { 1 };
            i += 1;
        }
    }
    let mut mask = 0u64;
    let mut pos = 1u32;
    mask |= 1 << pos;
    let mut i = 0;
    while i < ngaps as usize {
        pos += gaps[i];
        mask |= 1 << pos;
        i += 1;
    }
    mask
}

/// The most bits that outcomes `lag` uses apart share, over every lag
/// 1..width: the register shifts by one per use, so an outcome reads bit
/// q − lag of the earlier state where the earlier one read bit q, and
/// P(taken | taken `lag` uses before) = 2^−(k − shared(lag)).
pub const fn max_shared(mask: u64, width: u32) -> u32 {
    let mut worst = 0;
    let mut lag = 1;
    while lag < width {
        let shared = (mask & (mask >> lag)).count_ones();
        if shared > worst {
            worst = shared;
        }
        lag += 1;
    }
    worst
}

/// `Spacing::Spread`'s `k` bits among bits 1..width: starting from the top
/// bit, each next bit is the one that keeps the most bits shared at any lag
/// smallest, then the sum over lags of the squared counts, then the count
/// at lag 1, then the highest position. At 20 bits and freq 9 this shares
/// at most 4 bits at any lag (worst P(T | T) 1/64 for p = 1/1024), as
/// does the best of all 92,378 choices; `Spaced` shares 9 at lag 2.
pub const fn spread_mask(width: u32, k: u32) -> u64 {
    let mut mask = 1u64 << (width - 1);
    let mut chosen = 1;
    while chosen < k {
        let (mut best, mut best_max, mut best_sq, mut best_l1) =
            (0u32, u32::MAX, u32::MAX, u32::MAX);
        let mut c = width - 1;
        while c >= 1 {
            if mask >> c & 1 == 0 {
                let m = mask | 1 << c;
                let l1 = (m & (m >> 1)).count_ones();
                let (mut mx, mut sq) = (l1, l1 * l1);
                let mut lag = 2;
                while lag < width {
                    let o = (m & (m >> lag)).count_ones();
                    if o > mx {
                        mx = o;
                    }
                    sq += o * o;
                    lag += 1;
                }
                let better = mx < best_max
                    || (mx == best_max && (sq < best_sq || (sq == best_sq && l1 < best_l1)));
                if better {
                    (best, best_max, best_sq, best_l1) = (c, mx, sq, l1);
                }
            }
            c -= 1;
        }
        mask |= 1 << best;
        chosen += 1;
    }
    mask
}

/// The 16 outcome masks of a register, one per freq.
pub const fn outcome_masks(width: u32, spacing: Spacing) -> [u64; 16] {
    let mut m = [0u64; 16];
    let mut f = 0;
    while f < 16 {
        m[f] = outcome_mask(width, f as u32, spacing);
        f += 1;
    }
    m
}

/// The probability that `brr freq` is taken: (1/2)^(freq+1).
pub fn probability(freq: u32) -> f64 {
    1.0 / (1u64 << (freq.min(MAX_FREQ) + 1)) as f64
}

/// How to build a [`Brr`] unit.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BrrConfig {
    /// Register width, 16..=64; the paper's is 20 (§3.3).
    pub width: u32,
    /// Seed of the register (§3.4: deterministic runs).
    pub seed: u64,
    /// Which bits are ANDed.
    pub spacing: Spacing,
}

impl Default for BrrConfig {
    fn default() -> BrrConfig {
        BrrConfig {
            width: DEFAULT_WIDTH,
            seed: DEFAULT_SEED,
            spacing: Spacing::Spaced,
        }
    }
}

/// A branch-on-random unit: one LFSR and the outcome masks for every freq.
///
/// [`brr`](Brr::brr) is the instruction: any freq may be used at any time,
/// and each use steps the register once.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Brr {
    lfsr: Lfsr,
    masks: [u64; 16],
    spacing: Spacing,
}

impl Brr {
    /// The paper's unit: a 20-bit register with spaced bits, seeded.
    pub fn new(seed: u64) -> Brr {
        Brr::with_config(BrrConfig {
            seed,
            ..BrrConfig::default()
        })
        .expect("the default width is supported")
    }

    /// A unit built from `config`.
    pub fn with_config(config: BrrConfig) -> Result<Brr, Error> {
        let lfsr = Lfsr::new(config.width, config.seed)?;
        Ok(Brr {
            masks: outcome_masks(config.width, config.spacing),
            lfsr,
            spacing: config.spacing,
        })
    }

    /// Executes `brr freq`: steps the register and returns whether the
    /// branch is taken, with probability (1/2)^(freq+1). Only the low four
    /// bits of `freq` are used, as in the instruction's 4-bit field.
    #[inline(always)]
    pub fn brr(&mut self, freq: u32) -> bool {
        let s = self.lfsr.step();
        let m = self.masks[(freq & MAX_FREQ) as usize];
        s & m == m
    }

    /// The bits ANDed for `freq`.
    pub fn mask(&self, freq: u32) -> u64 {
        self.masks[(freq & MAX_FREQ) as usize]
    }

    /// The bit selection.
    pub fn spacing(&self) -> Spacing {
        self.spacing
    }

    /// The register.
    pub fn lfsr(&self) -> &Lfsr {
        &self.lfsr
    }

    /// Memory held, in bytes.
    pub fn bytes(&self) -> usize {
        core::mem::size_of::<Brr>()
    }
}

/// A [`Sampler`] that samples when `brr freq` is taken: on average one
/// event in 2^(freq+1), at random.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BrrSampler {
    unit: Brr,
    freq: u32,
}

impl BrrSampler {
    /// Samples with probability (1/2)^(freq+1) from the paper's unit.
    pub fn new(freq: u32, seed: u64) -> Result<BrrSampler, Error> {
        BrrSampler::with_config(
            freq,
            BrrConfig {
                seed,
                ..BrrConfig::default()
            },
        )
    }

    /// Samples with probability (1/2)^(freq+1) from a unit built from
    /// `config`.
    pub fn with_config(freq: u32, config: BrrConfig) -> Result<BrrSampler, Error> {
        if freq > MAX_FREQ {
            return Err(Error::Freq(freq));
        }
        Ok(BrrSampler {
            unit: Brr::with_config(config)?,
            freq,
        })
    }

    /// The freq operand.
    pub fn freq(&self) -> u32 {
        self.freq
    }

    /// The unit.
    pub fn unit(&self) -> &Brr {
        &self.unit
    }
}

impl Sampler for BrrSampler {
    #[inline(always)]
    fn sample(&mut self) -> bool {
        self.unit.brr(self.freq)
    }
    fn mean_interval(&self) -> f64 {
        (1u64 << (self.freq + 1)) as f64
    }
    fn bytes(&self) -> usize {
        core::mem::size_of::<BrrSampler>()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn positions(mask: u64) -> std::vec::Vec<u32> {
        (0..64).filter(|b| mask >> b & 1 != 0).collect()
    }

    #[test]
    fn masks_have_freq_plus_one_bits_in_width() {
        for width in 16..=64 {
            for sp in [Spacing::Spaced, Spacing::Adjacent] {
                for f in 0..=MAX_FREQ {
                    let m = outcome_mask(width, f, sp);
                    assert_eq!(m.count_ones(), f + 1, "w{width} f{f} {sp:?}");
                    assert_eq!(m & !crate::lfsr::width_mask(width), 0);
                    if f + 1 < width {
                        assert_eq!(m & 1, 0, "bit 0 used at w{width} f{f}");
                    }
                }
            }
        }
    }

    #[test]
    fn spaced_bits_are_apart_where_they_fit() {
        for width in 16..=64u32 {
            for f in 0..=MAX_FREQ {
                let m = outcome_mask(width, f, Spacing::Spaced);
                let adjacent = (m & (m >> 1)).count_ones();
                if 2 * f <= width - 2 {
                    assert_eq!(adjacent, 0, "w{width} f{f}: {:?}", positions(m));
                }
            }
        }
        // The paper's register: apart up to freq 9.
        assert_eq!(
            outcome_mask(20, 9, Spacing::Spaced) & (outcome_mask(20, 9, Spacing::Spaced) >> 1),
            0
        );
        let m = outcome_mask(20, 3, Spacing::Spaced);
        let p = positions(m);
        let gaps: std::vec::Vec<u32> = p.windows(2).map(|w| w[1] - w[0]).collect();
        let mut sorted = gaps.clone();
        sorted.sort_unstable();
        sorted.dedup();
        assert_eq!(sorted.len(), gaps.len(), "gaps not varied: {gaps:?}");
    }

    #[test]
    fn spread_bounds_the_bits_shared_at_every_distance() {
        // Every width and freq: never worse than the default selection,
        // and strictly better wherever the default's gaps cannot vary.
        for width in 16..=64u32 {
            for f in 0..=MAX_FREQ {
                let spread = max_shared(outcome_mask(width, f, Spacing::Spread), width);
                let spaced = max_shared(outcome_mask(width, f, Spacing::Spaced), width);
                assert!(spread <= spaced, "w{width} f{f}: {spread} > {spaced}");
            }
        }
        // The paper's 20 bits at freq 9: the default's bits 1, 3, …, 19
        // share 9 bits two uses apart; spread shares at most 4 anywhere.
        let spaced = outcome_mask(20, 9, Spacing::Spaced);
        assert_eq!(max_shared(spaced, 20), 9);
        let spread = outcome_mask(20, 9, Spacing::Spread);
        assert_eq!(max_shared(spread, 20), 4);
        assert_eq!(positions(spread), [1, 2, 3, 4, 6, 10, 13, 14, 17, 19]);
        // Where the default already varies its gaps, both share one bit.
        for f in 1..=4 {
            assert_eq!(max_shared(outcome_mask(20, f, Spacing::Spaced), 20), 1);
            assert_eq!(max_shared(outcome_mask(20, f, Spacing::Spread), 20), 1);
        }
    }

    #[test]
    fn adjacent_bits_are_contiguous() {
        let m = outcome_mask(20, 4, Spacing::Adjacent);
        assert_eq!(m, 0b11111 << 1);
    }

    #[test]
    fn freq_is_checked() {
        assert_eq!(BrrSampler::new(16, 1), Err(Error::Freq(16)));
        assert!(BrrSampler::new(15, 1).is_ok());
        assert_eq!(probability(0), 0.5);
        assert_eq!(probability(15), 1.0 / 65536.0);
    }

    #[test]
    fn same_seed_same_outcomes() {
        let mut a = Brr::new(42);
        let mut b = Brr::new(42);
        let mut c = Brr::new(43);
        let xa: std::vec::Vec<bool> = (0..1000).map(|i| a.brr(i % 4)).collect();
        let xb: std::vec::Vec<bool> = (0..1000).map(|i| b.brr(i % 4)).collect();
        let xc: std::vec::Vec<bool> = (0..1000).map(|i| c.brr(i % 4)).collect();
        assert_eq!(xa, xb);
        assert_ne!(xa, xc);
    }
}
