//! coprof-brr: branch-on-random (Lee & Zilles, "Branch-on-Random", CGO
//! 2008) and the sampling frameworks it is compared with, for any Rust
//! program.
//!
//! Sampled instrumentation runs a piece of profiling code at a fraction of
//! the executions of a site. Its cost is the *framework* (deciding whether
//! to sample, paid at every execution) plus the instrumentation (paid only
//! when sampled). Lee & Zilles propose an instruction, `brr freq`, that is
//! taken with probability (1/2)^(freq+1), so that the framework is a single
//! branch and the samples are random. In software the decision is an LFSR
//! step and a mask test; this crate provides it beside its baselines:
//!
//! | sampler | module | decision per event | intervals |
//! |---|---|---|---|
//! | [`BrrSampler`] (and the [`Brr`] unit) | [`brr`](mod@brr) | LFSR step, AND of bits | random, mean 2^(freq+1) |
//! | [`BrrSkip`] | [`skip`] | decrement, test | brr's own, counted down (a table of one period, or blocks of 64) |
//! | [`Counter`] (Arnold–Ryder) | [`counter`] | decrement, test | fixed N: can resonate |
//! | [`Geometric`] | [`geometric`] | decrement, test | random, geometric, mean N |
//! | [`Periodic`] (DCPI) | [`periodic`] | decrement, test | N ± J, uniform |
//! | [`Convergent`] | [`convergent`] | LFSR step | adapts to the profile (§7) |
//!
//! [`brr!`] wraps instrumentation so that it is out of line and cold and the
//! common path falls through (§4.1, Fig. 8). With the default `std`
//! feature, [`brr()`] and `brr!(freq, {..})` use a thread-local register.
//! Without it the crate is `no_std` and every sampler is an explicit value.
//! Nothing here allocates.
//!
//! One site of a runtime sampled at 1 in 32 of its executions, by brr and
//! by Arnold–Ryder's counter:
//!
//! ```
//! use coprof_brr::{sampled, BrrSampler, Counter};
//! // Taken with probability (1/2)^(4+1): at random, 1 in 32 on average.
//! let mut brr = BrrSampler::new(4, 1).unwrap();
//! // Every 32nd execution exactly, which can resonate with the program.
//! let mut counter = Counter::new(32).unwrap();
//! let (mut by_brr, mut by_counter) = (0u32, 0u32);
//! for _ in 0..32_000 {
//!     sampled!(brr, { by_brr += 1 });
//!     sampled!(counter, { by_counter += 1 });
//! }
//! assert_eq!(by_counter, 1_000);
//! assert!((800..1_200).contains(&by_brr), "{by_brr}");
//! ```

#![no_std]
#![warn(missing_docs)]

#[cfg(any(feature = "std", test))]
extern crate std;

pub mod brr;
pub mod convergent;
pub mod counter;
mod error;
pub mod geometric;
pub mod lfsr;
#[cfg(feature = "std")]
mod local;
#[doc(hidden)]
pub mod macros;
pub mod periodic;
pub mod rng;
pub mod skip;
pub mod spec;
pub mod taps;

pub use crate::brr::{Brr, BrrConfig, BrrSampler, Spacing};
pub use convergent::{Convergent, ConvergentConfig};
pub use counter::Counter;
pub use error::Error;
pub use geometric::Geometric;
pub use lfsr::Lfsr;
#[cfg(feature = "std")]
pub use local::{brr, seed_thread};
pub use periodic::Periodic;
pub use skip::BrrSkip;
pub use spec::{AnySampler, SamplerSpec, SpecError};

/// Decides, one event at a time, which events are sampled.
///
/// Call [`sample`](Sampler::sample) once per execution of the site (or per
/// event of the stream); it returns true for the executions to instrument.
/// A sampler knows nothing of what is being profiled.
pub trait Sampler {
    /// Whether this execution is sampled.
    fn sample(&mut self) -> bool;

    /// Makes the decisions for the next `n` executions at once, calling
    /// `taken(i)` for each sampled one, `i` in `0..n` increasing: the same
    /// decisions as `n` calls of [`sample`](Sampler::sample). For a stream
    /// handled in batches. The samplers that count down to their next
    /// sample (all but the stepped [`BrrSampler`] and [`Convergent`]) go
    /// from one sample to the next without visiting the executions in
    /// between.
    #[inline]
    fn sample_many(&mut self, n: usize, mut taken: impl FnMut(usize))
    where
        Self: Sized,
    {
        for i in 0..n {
            if self.sample() {
                taken(i);
            }
        }
    }

    /// The mean number of executions per sample: the weight that turns a
    /// sample count into an estimate of executions.
    fn mean_interval(&self) -> f64;

    /// Memory held, in bytes.
    fn bytes(&self) -> usize;
}

/// [`Sampler::sample`] for a sampler that counts down: `count` is the
/// executions left until the next sample, that one included (≥ 1), and
/// `next` gives the interval to the sample after the one it reaches.
/// Decrement, test and, on a sample, reload (Lee & Zilles, CGO 2008, Fig.
/// 1); `next` runs only then.
#[inline(always)]
pub(crate) fn count_down(count: &mut u64, next: impl FnOnce() -> u64) -> bool {
    *count -= 1;
    if *count == 0 {
        *count = next();
        true
    } else {
        false
    }
}

/// [`Sampler::sample_many`] for a sampler that counts down: `count` is the
/// executions left until the next sample, that one included (≥ 1), and
/// `next` gives the interval to the sample after each one taken.
#[inline(always)]
pub(crate) fn count_down_many(
    count: &mut u64,
    n: usize,
    mut next: impl FnMut() -> u64,
    mut taken: impl FnMut(usize),
) {
    let n = n as u64;
    // The index in this run of the next sample.
    let mut at = *count - 1;
    while at < n {
        taken(at as usize);
        // An interval near 2^64 (geometric at a vanishing rate) saturates;
        // the run is then sampled no more, as it would not be in 2^64
        // calls of `sample`.
        at = at.saturating_add(next());
    }
    *count = at - n + 1;
}

/// [`Sampler::sample`] and [`Sampler::sample_many`] of a sampler that
/// counts down, in its `impl Sampler`: both take `self.countdown()`, the
/// count and what gives the next interval, to [`count_down`] and
/// [`count_down_many`]. The counter, geometric, periodic and skip-ahead
/// samplers differ only in their `countdown()`.
macro_rules! count_down_sampling {
    () => {
        #[inline(always)]
        fn sample(&mut self) -> bool {
            let (count, next) = self.countdown();
            $crate::count_down(count, next)
        }
        #[inline]
        fn sample_many(&mut self, n: usize, taken: impl FnMut(usize)) {
            let (count, next) = self.countdown();
            $crate::count_down_many(count, n, next, taken);
        }
    };
}
pub(crate) use count_down_sampling;

impl<S: Sampler + ?Sized> Sampler for &mut S {
    #[inline(always)]
    fn sample(&mut self) -> bool {
        (**self).sample()
    }
    fn mean_interval(&self) -> f64 {
        (**self).mean_interval()
    }
    fn bytes(&self) -> usize {
        (**self).bytes()
    }
}
