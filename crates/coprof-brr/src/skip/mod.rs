//! Branch-on-random at a counter's cost per use: the outcomes of a
//! [`BrrSampler`](crate::BrrSampler), computed 64 at a time and counted
//! down to the next taken one.
//!
//! Hardware brr steps its LFSR beside the branch unit, so the program's
//! path holds one branch (Lee & Zilles, CGO 2008, §3.3). Emulated in
//! instructions, a step is a shift, a few XORs and a mask test at every
//! use, several times a counter's decrement (docs/PERFORMANCE.md). Yet for
//! a site whose freq is fixed, the outcomes are a fixed function of the
//! register's output stream, and both can be computed for many uses at
//! once:
//!
//! - A Fibonacci register feeds back x_k = XOR over its taps t of
//!   x_(k−t), so with the last 64 bits in a word, the next ones come a
//!   whole chunk at a time, each an XOR of the history shifted by every
//!   tap (with the taps multiplied by a power of two, a chunk is the whole
//!   block of 64 bits for the paper's 20-bit register).
//! - The outcome after step k is the AND of bits j of that state, which are
//!   x_(k−j): the AND of the stream shifted by every chosen j gives the
//!   outcomes of 64 uses in one word.
//! - The uses before the next taken outcome are that word's trailing
//!   zeros.
//!
//! So [`BrrSkip`] counts down to the next taken use as a counter does
//! (a decrement and a branch per use) and, when it is reached, makes the
//! next outcome words until one has a bit set ([`blocks`]). With the `std`
//! feature, where the register's period is short enough to walk once and
//! the taken uses in it few enough (the paper's 20-bit register from freq
//! 5 up), it goes round the period at construction and keeps the
//! intervals between taken uses ([`intervals`]): a sample then costs one
//! load, as a counter's reset does. The outcome sequence is
//! exactly that of [`BrrSampler`](crate::BrrSampler) with the same freq and
//! configuration (a test compares them at every width, freq and spacing);
//! only the work per use changes. What it cannot do is what a shared unit
//! does: every site needs its own, with a fixed freq.

use crate::brr::{BrrConfig, MAX_FREQ};
use crate::error::Error;
use crate::lfsr::Lfsr;
use crate::Sampler;
use blocks::OutcomeBlocks;

pub mod blocks;
#[cfg(feature = "std")]
pub mod intervals;

/// Samples when `brr freq` would be taken, with the same outcomes as
/// [`BrrSampler`](crate::BrrSampler), by counting down to the next taken
/// use.
///
/// ```
/// use coprof_brr::{sampled, BrrSampler, BrrSkip, Sampler};
/// let mut site = BrrSkip::new(9, 42).unwrap(); // 1 in 1024
/// let mut stepped = BrrSampler::new(9, 42).unwrap();
/// let mut hits = 0;
/// for _ in 0..100_000 {
///     let s = stepped.sample();
///     assert_eq!(sampled!(site, { hits += 1 }).is_some(), s);
/// }
/// assert!((60..140).contains(&hits));
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BrrSkip {
    /// Uses left until the next taken one, that one included (≥ 1).
    count: u64,
    /// The interval after that, found a sample ahead, so that the work of
    /// finding it (a block or more of outcomes, or a table read) runs
    /// while the site counts down, not between a sample and the next
    /// countdown (as [`Geometric`](crate::Geometric) draws ahead).
    ahead: u64,
    source: Source,
    freq: u8,
}

/// Where the next interval comes from.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Source {
    /// Made from the register's stream, 64 uses at a time.
    Blocks(OutcomeBlocks),
    /// Read from the intervals of one period, cyclically.
    #[cfg(feature = "std")]
    Intervals {
        table: std::boxed::Box<[u32]>,
        next: usize,
    },
}

impl BrrSkip {
    /// Samples with probability (1/2)^(freq+1) from the paper's unit (the
    /// outcomes of `BrrSampler::new(freq, seed)`).
    pub fn new(freq: u32, seed: u64) -> Result<BrrSkip, Error> {
        BrrSkip::with_config(
            freq,
            BrrConfig {
                seed,
                ..BrrConfig::default()
            },
        )
    }

    /// Samples with probability (1/2)^(freq+1) from a unit built from
    /// `config` (the outcomes of `BrrSampler::with_config(freq, config)`).
    pub fn with_config(freq: u32, config: BrrConfig) -> Result<BrrSkip, Error> {
        BrrSkip::build(freq, config, true)
    }

    /// As [`with_config`](BrrSkip::with_config), making outcomes 64 at a
    /// time even where a table of intervals could be made: for tests and
    /// benchmarks that compare the two.
    pub fn blocks_only(freq: u32, config: BrrConfig) -> Result<BrrSkip, Error> {
        BrrSkip::build(freq, config, false)
    }

    fn build(freq: u32, config: BrrConfig, table: bool) -> Result<BrrSkip, Error> {
        if freq > MAX_FREQ {
            return Err(Error::Freq(freq));
        }
        let lfsr = Lfsr::new(config.width, config.seed)?;
        let blocks = OutcomeBlocks::new(config.width, lfsr.state(), freq, config.spacing);
        let (count, mut source) = BrrSkip::first(blocks, config.width, freq, table);
        Ok(BrrSkip {
            count,
            ahead: source.next_interval(),
            source,
            freq: freq as u8,
        })
    }

    /// Where the intervals come from, a table of the period where one is
    /// made (`table`, `std` feature) else `blocks`, and the uses until the
    /// first taken one.
    fn first(blocks: OutcomeBlocks, width: u32, freq: u32, table: bool) -> (u64, Source) {
        #[cfg(feature = "std")]
        if table {
            if let Some((count, table)) = intervals::interval_table(blocks.clone(), width, freq) {
                return (count, Source::Intervals { table, next: 0 });
            }
        }
        let _ = (width, freq, table);
        let (count, blocks) = blocks.next_taken();
        (count, Source::Blocks(blocks))
    }

    /// The countdown, and what gives the interval after each sample: the
    /// one found ahead, while the next is found in its place.
    #[inline(always)]
    fn countdown(&mut self) -> (&mut u64, impl FnMut() -> u64 + '_) {
        let (source, ahead) = (&mut self.source, &mut self.ahead);
        let next = move || core::mem::replace(ahead, source.next_interval());
        (&mut self.count, next)
    }

    /// The freq operand.
    pub fn freq(&self) -> u32 {
        self.freq as u32
    }

    /// Whether the intervals come from a table of one period rather than
    /// from blocks of 64 outcomes.
    pub fn uses_table(&self) -> bool {
        !matches!(self.source, Source::Blocks(_))
    }
}

impl Source {
    /// The uses until the taken one after the one just reached.
    ///
    /// What the work needs goes by value (the blocks, copied) or is the
    /// table's own storage, never a pointer into the sampler: a call that
    /// could read the sampler would oblige the compiler to keep the
    /// countdown in memory, a load and a store at every use of the site.
    #[inline(always)]
    fn next_interval(&mut self) -> u64 {
        match self {
            Source::Blocks(b) => {
                let (count, next) = b.clone().next_taken();
                *b = next;
                count
            }
            #[cfg(feature = "std")]
            Source::Intervals { table, next } => {
                let (count, after) = intervals::read(table, *next);
                *next = after;
                count
            }
        }
    }
}

impl Sampler for BrrSkip {
    crate::count_down_sampling!();
    fn mean_interval(&self) -> f64 {
        (1u64 << (self.freq + 1)) as f64
    }
    fn bytes(&self) -> usize {
        let table = match &self.source {
            Source::Blocks(_) => 0,
            #[cfg(feature = "std")]
            Source::Intervals { table, .. } => table.len() * 4,
        };
        core::mem::size_of::<BrrSkip>() + table
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::brr::Spacing;
    use crate::BrrSampler;

    /// The first `n` outcomes of the stepped register, and of skip-ahead
    /// with blocks and with a table where one is made.
    fn both(freq: u32, config: BrrConfig, n: usize) -> (std::vec::Vec<bool>, std::vec::Vec<bool>) {
        let mut reference = BrrSampler::with_config(freq, config).unwrap();
        let mut skip = BrrSkip::with_config(freq, config).unwrap();
        let mut blocks = BrrSkip::blocks_only(freq, config).unwrap();
        let a = (0..n).map(|_| reference.sample()).collect();
        let b: std::vec::Vec<bool> = (0..n).map(|_| skip.sample()).collect();
        let c: std::vec::Vec<bool> = (0..n).map(|_| blocks.sample()).collect();
        assert!(b == c, "w{} f{freq}: table and blocks differ", config.width);
        (a, b)
    }

    #[test]
    fn same_outcomes_as_the_stepped_register_everywhere() {
        for width in 16..=64 {
            for spacing in [Spacing::Spaced, Spacing::Adjacent, Spacing::Spread] {
                for freq in 0..=MAX_FREQ {
                    let config = BrrConfig {
                        width,
                        seed: u64::from(width * 131 + freq),
                        spacing,
                    };
                    let (a, b) = both(freq, config, 3000);
                    let first = a.iter().zip(&b).position(|(x, y)| x != y);
                    assert_eq!(
                        first, None,
                        "w{width} f{freq} {spacing:?}: first difference"
                    );
                }
            }
        }
    }

    #[test]
    fn same_samples_over_long_runs_at_low_rates() {
        // Freq 15 at the paper's width: about 30 samples, each found
        // across a thousand blocks on average.
        let (a, b) = both(15, BrrConfig::default(), 2_000_000);
        let taken = a.iter().filter(|&&x| x).count();
        assert!(taken > 10, "{taken} samples");
        assert!(a == b);
        // A width whose smallest tap is 1: one bit per chunk.
        let config = BrrConfig {
            width: 19,
            ..BrrConfig::default()
        };
        let (a, b) = both(6, config, 200_000);
        assert!(a == b);
    }

    // Tables are made with the `std` feature only.
    #[cfg(feature = "std")]
    #[test]
    fn tables_go_round_the_period() {
        // The paper's register at freq 9: 1,024 intervals, 4 KiB.
        let s = BrrSkip::new(9, 3).unwrap();
        assert!(s.uses_table());
        assert!(s.bytes() >= 4096);
        assert!(!BrrSkip::new(4, 3).unwrap().uses_table(), "64 KiB cap");
        let wide = BrrConfig {
            width: 33,
            ..BrrConfig::default()
        };
        assert!(!BrrSkip::with_config(12, wide).unwrap().uses_table());
        // Two periods and a bit of a 16-bit register at freq 10: the
        // table wraps round exactly.
        let small = BrrConfig {
            width: 16,
            seed: 9,
            spacing: Spacing::Spaced,
        };
        assert!(BrrSkip::with_config(10, small).unwrap().uses_table());
        let (a, b) = both(10, small, 140_000);
        assert!(a == b);
        let (a, b) = both(15, small, 140_000);
        assert!(a == b);
    }

    #[test]
    fn freq_is_checked_and_rate_is_the_samplers() {
        assert_eq!(BrrSkip::new(16, 1), Err(Error::Freq(16)));
        let s = BrrSkip::new(9, 1).unwrap();
        assert_eq!(s.freq(), 9);
        assert_eq!(s.mean_interval(), 1024.0);
    }
}
