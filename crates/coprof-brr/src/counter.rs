//! Counter-based sampling (Arnold & Ryder, PLDI 2001), the framework brr is
//! compared with (Lee & Zilles, CGO 2008, §2, Fig. 1).
//!
//! Each instrumentation site decrements a global counter, tests it, and
//! when it reaches zero resets it to the interval and takes a sample. The
//! common path is a decrement and a branch, but the samples are periodic:
//! a program whose behaviour repeats with a period that shares a factor with
//! the interval is sampled at the same phase every time (resonance, §4.2).

use crate::error::Error;
use crate::Sampler;

/// Samples every `interval`-th event exactly.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Counter {
    count: u64,
    interval: u64,
}

impl Counter {
    /// A counter that samples event `interval`, `2·interval`, ….
    pub fn new(interval: u64) -> Result<Counter, Error> {
        if interval == 0 {
            return Err(Error::ZeroInterval);
        }
        Ok(Counter {
            count: interval,
            interval,
        })
    }

    /// The interval.
    pub fn interval(&self) -> u64 {
        self.interval
    }

    /// The countdown, and what gives the interval after each sample: the
    /// fixed interval.
    #[inline(always)]
    fn countdown(&mut self) -> (&mut u64, impl FnMut() -> u64) {
        let interval = self.interval;
        (&mut self.count, move || interval)
    }
}

impl Sampler for Counter {
    // Decrement, test, reset (Fig. 1).
    crate::count_down_sampling!();
    fn mean_interval(&self) -> f64 {
        self.interval as f64
    }
    fn bytes(&self) -> usize {
        core::mem::size_of::<Counter>()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn samples_exactly_every_interval() {
        let mut c = Counter::new(4).unwrap();
        let hits: std::vec::Vec<usize> = (1..=20).filter(|_| c.sample()).collect();
        assert_eq!(hits, [4, 8, 12, 16, 20]);
        let mut one = Counter::new(1).unwrap();
        assert!((0..10).all(|_| one.sample()));
        assert_eq!(Counter::new(0), Err(Error::ZeroInterval));
    }
}
