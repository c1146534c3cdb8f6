//! DCPI-style periodic sampling: an interrupt every N events, with a random
//! jitter (Anderson et al., SOSP 1997; the value sampling of Burrows et al.,
//! ASPLOS 2000).
//!
//! DCPI's performance counters interrupt after a period drawn at random
//! around its nominal length, so that the interrupts do not lock onto loops
//! whose length divides the period. Here the period counts the events the
//! front end lets through (the classes selected), and each reset draws
//! N − J + U(0, 2J): the mean stays N.

use crate::error::Error;
use crate::rng::SplitMix64;
use crate::Sampler;

/// The default period: 65536 events.
pub const DEFAULT_PERIOD: u64 = 65536;

/// Samples once per period of N ± J events.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Periodic {
    count: u64,
    period: u64,
    jitter: u64,
    rng: SplitMix64,
}

impl Periodic {
    /// A sampler with period `period` and jitter `jitter` (< period).
    pub fn new(period: u64, jitter: u64, seed: u64) -> Result<Periodic, Error> {
        if period == 0 {
            return Err(Error::ZeroInterval);
        }
        if jitter >= period {
            return Err(Error::Jitter { period, jitter });
        }
        let mut p = Periodic {
            count: 0,
            period,
            jitter,
            rng: SplitMix64::new(crate::lfsr::mix(seed ^ 0xdc71)),
        };
        (p.count, p.rng) = Periodic::draw(p.rng.clone(), period, jitter);
        Ok(p)
    }

    /// The DCPI default: the default period with a jitter of 1/16 of it.
    pub fn dcpi(seed: u64) -> Periodic {
        Periodic::new(DEFAULT_PERIOD, default_jitter(DEFAULT_PERIOD), seed)
            .expect("valid constants")
    }

    /// The next period, N − J + U(0, 2J), and the generator advanced past
    /// it. By value, as `Geometric`'s draw is: a call given a pointer into
    /// the sampler would oblige the compiler to keep the countdown in
    /// memory at every site.
    #[cold]
    #[inline(never)]
    fn draw(mut rng: SplitMix64, period: u64, jitter: u64) -> (u64, SplitMix64) {
        if jitter == 0 {
            return (period, rng);
        }
        (period - jitter + rng.below_inclusive(2 * jitter), rng)
    }

    /// The countdown, and what gives the period after each sample.
    #[inline(always)]
    fn countdown(&mut self) -> (&mut u64, impl FnMut() -> u64 + '_) {
        let (period, jitter, rng) = (self.period, self.jitter, &mut self.rng);
        let next = move || {
            let (interval, r) = Periodic::draw(rng.clone(), period, jitter);
            *rng = r;
            interval
        };
        (&mut self.count, next)
    }

    /// The nominal period N.
    pub fn period(&self) -> u64 {
        self.period
    }

    /// The jitter J.
    pub fn jitter(&self) -> u64 {
        self.jitter
    }
}

/// The jitter used when none is given: N/16 (DCPI drew its periods from a
/// window a sixteenth as wide as the period, 60K to 64K cycles).
pub const fn default_jitter(period: u64) -> u64 {
    period / 16
}

impl Sampler for Periodic {
    crate::count_down_sampling!();
    fn mean_interval(&self) -> f64 {
        self.period as f64
    }
    fn bytes(&self) -> usize {
        core::mem::size_of::<Periodic>()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn periods_stay_within_jitter_and_average_n() {
        let mut p = Periodic::new(100, 10, 3).unwrap();
        let mut since = 0u64;
        let mut seen = std::vec::Vec::new();
        for _ in 0..1_000_000 {
            since += 1;
            if p.sample() {
                seen.push(since);
                since = 0;
            }
        }
        assert!(seen.iter().all(|&k| (90..=110).contains(&k)));
        let mean = seen.iter().sum::<u64>() as f64 / seen.len() as f64;
        assert!((mean - 100.0).abs() < 0.5, "{mean}");
        assert!(seen.contains(&90) && seen.contains(&110));
    }

    #[test]
    fn no_jitter_is_exact_and_bad_jitter_is_rejected() {
        let mut p = Periodic::new(8, 0, 3).unwrap();
        let hits: std::vec::Vec<u32> = (1..=32).filter(|_| p.sample()).collect();
        assert_eq!(hits, [8, 16, 24, 32]);
        assert_eq!(
            Periodic::new(8, 8, 1),
            Err(Error::Jitter {
                period: 8,
                jitter: 8
            })
        );
        assert_eq!(Periodic::dcpi(1).jitter(), 4096);
    }
}
