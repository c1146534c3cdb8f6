//! What the RAP property tests share.

use coprof_engines::rap::RapConfig;
use proptest::prelude::*;

/// A RAP configuration of ε, b = 2^`log_b` and a universe of `bits`,
/// with the paper's 1 KiB merging buffer or none.
pub fn config(epsilon: f64, log_b: u32, buffer: bool, bits: u32) -> RapConfig {
    RapConfig {
        epsilon,
        branching: 1 << log_b,
        bits,
        buffer_bytes: buffer.then_some(1024),
        ..RapConfig::default()
    }
}

/// The values of ε the property tests try: from coarse to the paper's
/// 1%.
pub fn epsilons() -> impl Strategy<Value = f64> {
    prop_oneof![Just(0.5), Just(0.1), Just(0.05), Just(0.01)]
}

/// The next number of a xorshift generator whose state is `x` (not 0).
pub fn xorshift(x: &mut u64) -> u64 {
    *x ^= *x << 13;
    *x ^= *x >> 7;
    *x ^= *x << 17;
    *x
}

/// A table of blocks' PCs, one block after another (blocks may overlap:
/// a PC then sits at several positions), from (first instruction's index,
/// length) pairs; and runs over it as (position of the block's first PC,
/// PCs retired, count), from (block, PCs retired, count) triples, a run
/// stopping early when its length is below the block's.
#[allow(clippy::type_complexity)]
pub fn blocks_and_runs(
    blocks: &[(u64, usize)],
    runs: &[(prop::sample::Index, usize, u64)],
) -> (Vec<u64>, Vec<(usize, usize, u64)>) {
    let mut table = Vec::new();
    let spans: Vec<(usize, usize)> = blocks
        .iter()
        .map(|&(start, len)| {
            let first = table.len();
            table.extend((0..len as u64).map(|i| 0x1_0000 + (start + i) * 2));
            (first, len)
        })
        .collect();
    let runs = runs
        .iter()
        .map(|(block, len, count)| {
            let (first, block_len) = spans[block.index(spans.len())];
            (first, (*len).min(block_len), *count)
        })
        .collect();
    (table, runs)
}

/// Runs as [`blocks_and_runs`] takes them: a block, the PCs retired (up
/// to 23) and a count, 1 three times in four.
pub fn runs(most: usize) -> impl Strategy<Value = Vec<(prop::sample::Index, usize, u64)>> {
    proptest::collection::vec(
        (
            any::<prop::sample::Index>(),
            0usize..24,
            prop_oneof![3 => Just(1u64), 1 => 1u64..50],
        ),
        1..most,
    )
}
