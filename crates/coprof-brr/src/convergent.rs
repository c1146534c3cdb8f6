//! Convergent profiling with branch-on-random (Lee & Zilles, CGO 2008, §7):
//! sample often while the profile is still taking shape, less often once it
//! has converged, and more often again when new samples disagree with it.
//!
//! brr's rate is an operand, so software can change it at run time at no
//! cost. The rule implemented here (the paper names the idea, not a rule):
//!
//! 1. Samples are taken by `brr freq` and arrive in *epochs* of `epoch`
//!    samples; the caller reports each sample's key (a PC, a value, a
//!    method) with [`Convergent::record`].
//! 2. Keys are hashed into [`BUCKETS`] buckets; the profile is the weighted
//!    count per bucket, each sample weighing 2^(freq+1), the inverse of its
//!    probability, so estimates stay unbiased across rate changes.
//! 3. At the end of an epoch, its bucket distribution is compared with the
//!    profile's by total variation distance, tv = 1 − overlap (overlap is
//!    the paper's accuracy metric, §4.1). That distance is judged against
//!    the distance that sampling noise alone would give an epoch drawn from
//!    the profile itself, σ = ½ Σ_i √(2/π · p_i(1 − p_i)/epoch).
//! 4. If tv ≤ `agree` · σ the profile has converged: freq rises by one
//!    (half the rate), up to `max_freq`. If tv > `disagree` · σ the program
//!    has changed: freq falls by one (twice the rate), down to `min_freq`.
//!    Otherwise freq stays. The epoch is then merged into the profile.

use crate::brr::{Brr, MAX_FREQ};
use crate::error::Error;
use crate::Sampler;

/// Buckets of the convergent profile.
pub const BUCKETS: usize = 64;

/// The convergent sampler's settings.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ConvergentConfig {
    /// The freq to start with (default 0: every other event).
    pub start_freq: u32,
    /// Lowest freq (highest rate) the rule may choose (default 0).
    pub min_freq: u32,
    /// Highest freq (lowest rate) the rule may choose (default 15).
    pub max_freq: u32,
    /// Samples per epoch (default 256).
    pub epoch: u32,
    /// Converged when tv ≤ agree · σ (default 1.5).
    pub agree: f64,
    /// Changed when tv > disagree · σ (default 3.0).
    pub disagree: f64,
    /// Seed of the brr unit.
    pub seed: u64,
}

impl Default for ConvergentConfig {
    fn default() -> ConvergentConfig {
        ConvergentConfig {
            start_freq: 0,
            min_freq: 0,
            max_freq: MAX_FREQ,
            epoch: 256,
            agree: 1.5,
            disagree: 3.0,
            seed: crate::lfsr::DEFAULT_SEED,
        }
    }
}

/// A brr sampler that adapts its freq to how settled its profile is.
#[derive(Clone, Debug, PartialEq)]
pub struct Convergent {
    unit: Brr,
    freq: u32,
    config: ConvergentConfig,
    profile: [f64; BUCKETS],
    profile_total: f64,
    epoch_counts: [u32; BUCKETS],
    epoch_n: u32,
    epochs: u64,
    last_tv: Option<(f64, f64)>,
}

impl Convergent {
    /// A convergent sampler with `config`.
    pub fn new(config: ConvergentConfig) -> Result<Convergent, Error> {
        if config.max_freq > MAX_FREQ {
            return Err(Error::Freq(config.max_freq));
        }
        if config.min_freq > config.max_freq {
            return Err(Error::Convergent("min_freq is above max_freq"));
        }
        if !(config.min_freq..=config.max_freq).contains(&config.start_freq) {
            return Err(Error::Convergent(
                "start_freq is outside min_freq..=max_freq",
            ));
        }
        if config.epoch < 2 {
            return Err(Error::Convergent("an epoch needs at least 2 samples"));
        }
        if !(config.agree >= 0.0 && config.disagree >= config.agree) {
            return Err(Error::Convergent("need 0 <= agree <= disagree"));
        }
        Ok(Convergent {
            unit: Brr::new(config.seed),
            freq: config.start_freq,
            config,
            profile: [0.0; BUCKETS],
            profile_total: 0.0,
            epoch_counts: [0; BUCKETS],
            epoch_n: 0,
            epochs: 0,
            last_tv: None,
        })
    }

    /// Reports the key of a sample just taken (call once per `true` from
    /// [`sample`](Sampler::sample)).
    pub fn record(&mut self, key: u64) {
        let b = (crate::lfsr::mix(key) % BUCKETS as u64) as usize;
        self.epoch_counts[b] += 1;
        self.epoch_n += 1;
        if self.epoch_n == self.config.epoch {
            self.end_epoch();
        }
    }

    fn end_epoch(&mut self) {
        // The epoch was sampled at the rate in force before any change.
        let w = self.weight();
        let m = self.epoch_n as f64;
        if self.profile_total > 0.0 {
            let mut overlap = 0.0;
            let mut sigma = 0.0;
            for b in 0..BUCKETS {
                let p = self.profile[b] / self.profile_total;
                let q = self.epoch_counts[b] as f64 / m;
                overlap += if p < q { p } else { q };
                sigma += sqrt(2.0 / core::f64::consts::PI * p * (1.0 - p) / m);
            }
            let tv = 1.0 - overlap;
            let sigma = 0.5 * sigma;
            self.last_tv = Some((tv, sigma));
            if tv <= self.config.agree * sigma {
                if self.freq < self.config.max_freq {
                    self.freq += 1;
                }
            } else if tv > self.config.disagree * sigma && self.freq > self.config.min_freq {
                self.freq -= 1;
            }
        }
        self.merge(w);
        self.epochs += 1;
    }

    fn merge(&mut self, w: f64) {
        for b in 0..BUCKETS {
            self.profile[b] += self.epoch_counts[b] as f64 * w;
        }
        self.profile_total += self.epoch_n as f64 * w;
        self.epoch_counts = [0; BUCKETS];
        self.epoch_n = 0;
    }

    /// Merges the samples of the unfinished epoch into the profile without
    /// judging them (at the end of a run).
    pub fn flush(&mut self) {
        let w = self.weight();
        self.merge(w);
    }

    /// The current freq.
    pub fn freq(&self) -> u32 {
        self.freq
    }

    /// How many events one sample taken now stands for: 2^(freq+1).
    pub fn weight(&self) -> f64 {
        (1u64 << (self.freq + 1)) as f64
    }

    /// Completed epochs.
    pub fn epochs(&self) -> u64 {
        self.epochs
    }

    /// The last epoch's (tv, σ), if an epoch has been compared.
    pub fn last_distance(&self) -> Option<(f64, f64)> {
        self.last_tv
    }

    /// Estimated events per bucket (weighted samples of merged epochs).
    pub fn profile(&self) -> &[f64; BUCKETS] {
        &self.profile
    }

    /// Estimated events covered by the merged epochs.
    pub fn estimated_events(&self) -> f64 {
        self.profile_total
    }

    /// The bucket a key falls into.
    pub fn bucket(key: u64) -> usize {
        (crate::lfsr::mix(key) % BUCKETS as u64) as usize
    }
}

/// √x for x ≥ 0 by Newton's method (no `std`).
fn sqrt(x: f64) -> f64 {
    if x <= 0.0 {
        return 0.0;
    }
    // Halving the exponent gives a guess within a factor of √2.
    let mut y = f64::from_bits((x.to_bits() >> 1) + (1023u64 << 51));
    for _ in 0..6 {
        y = 0.5 * (y + x / y);
    }
    y
}

impl Sampler for Convergent {
    #[inline(always)]
    fn sample(&mut self) -> bool {
        self.unit.brr(self.freq)
    }
    fn mean_interval(&self) -> f64 {
        self.weight()
    }
    fn bytes(&self) -> usize {
        core::mem::size_of::<Convergent>()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::SplitMix64;

    /// Runs `events` events whose keys come from `key`, returning the
    /// freq after each 100k events.
    fn drive(c: &mut Convergent, events: u64, mut key: impl FnMut() -> u64) -> std::vec::Vec<u32> {
        let mut trace = std::vec::Vec::new();
        for i in 0..events {
            let k = key();
            if c.sample() {
                c.record(k);
            }
            if (i + 1) % 100_000 == 0 {
                trace.push(c.freq());
            }
        }
        trace
    }

    #[test]
    fn rate_falls_while_stable_and_rises_on_change() {
        let mut c = Convergent::new(ConvergentConfig {
            max_freq: 10,
            ..ConvergentConfig::default()
        })
        .unwrap();
        let mut r = SplitMix64::new(9);
        // A stable skewed profile over 20 keys.
        let stable = drive(&mut c, 3_000_000, || {
            let u = r.next_u64();
            (u % 4).min(u % 20)
        });
        assert_eq!(*stable.last().unwrap(), 10, "did not converge: {stable:?}");
        let before = c.freq();
        // The program changes: keys from a disjoint range.
        let mut r2 = SplitMix64::new(10);
        let mut lowest = before;
        for _ in 0..400_000 {
            let k = 1000 + r2.next_u64() % 20;
            if c.sample() {
                c.record(k);
            }
            lowest = lowest.min(c.freq());
        }
        assert!(lowest < before, "rate never rose after the change");
    }

    #[test]
    fn weighted_estimate_is_unbiased() {
        let mut c = Convergent::new(ConvergentConfig {
            max_freq: 8,
            epoch: 64,
            ..ConvergentConfig::default()
        })
        .unwrap();
        let mut r = SplitMix64::new(4);
        let n = 4_000_000u64;
        let mut hot = 0u64;
        for _ in 0..n {
            let k = if r.next_u64().is_multiple_of(4) {
                7
            } else {
                r.next_u64() % 1000
            };
            if k == 7 {
                hot += 1;
            }
            if c.sample() {
                c.record(k);
            }
        }
        c.flush();
        let total = c.estimated_events();
        assert!(
            (total / n as f64 - 1.0).abs() < 0.05,
            "total {total} vs {n}"
        );
        let b = Convergent::bucket(7);
        let share = c.profile()[b] / total;
        assert!(
            share >= hot as f64 / n as f64 - 0.03,
            "hot key share {share}"
        );
    }

    #[test]
    fn bad_settings_are_named() {
        let bad = |cfg: ConvergentConfig| Convergent::new(cfg).unwrap_err();
        let d = ConvergentConfig::default();
        assert_eq!(bad(ConvergentConfig { max_freq: 16, ..d }), Error::Freq(16));
        assert!(matches!(
            bad(ConvergentConfig {
                min_freq: 5,
                max_freq: 4,
                ..d
            }),
            Error::Convergent(_)
        ));
        assert!(matches!(
            bad(ConvergentConfig {
                start_freq: 9,
                max_freq: 4,
                ..d
            }),
            Error::Convergent(_)
        ));
        assert!(matches!(
            bad(ConvergentConfig { epoch: 1, ..d }),
            Error::Convergent(_)
        ));
        assert!(matches!(
            bad(ConvergentConfig {
                agree: 2.0,
                disagree: 1.0,
                ..d
            }),
            Error::Convergent(_)
        ));
        assert!((sqrt(2.0) - core::f64::consts::SQRT_2).abs() < 1e-15);
    }
}
