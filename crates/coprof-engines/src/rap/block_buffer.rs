//! A merging buffer of basic-block executions in front of a code profile:
//! an option beside the paper's per-event merging buffer, not a part of
//! RAP (Mysore et al., TACO 2008, §3.2.1 buffers single events).
//!
//! On the instruction stream, the paper's buffer combines repeats of one
//! PC; a program's hot loop spreads over more instructions than its 64
//! entries hold, so on real programs about half the PCs pass it. This
//! buffer combines repeats of one *block execution* instead, from the
//! runs a simulator delivers ([`coprof_core::Run`]): an entry is a block,
//! the instructions of it that retired, and how many times. An evicted or
//! drained entry gives each of its PCs that many events, through the
//! engine's `Rap::add_counted` (so the paper's buffer and tree see them as
//! weighted events).
//!
//! The profile keeps the paper's guarantee: a weight, like any buffered
//! count, is added to the tree without letting a counter pass the split
//! threshold (a weight larger than the threshold goes down to the point's
//! own leaf, whose count is exact), so every range's count stays within
//! ε·n of the truth. What changes is the order the tree sees the events
//! in, hence where and when it splits: `coprof ranges --exact` shows the
//! error against the exact profile either way.

use super::buffer::MergingBuffer;
use coprof_core::Run;

/// Bytes of one entry as hardware would hold it: a block id, a length and
/// a 64-bit count.
pub const BLOCK_ENTRY_BYTES: usize = 16;

/// A direct-mapped table of (block execution, count) entries: RAP's
/// merging buffer, keyed by block executions.
#[derive(Clone, Debug)]
pub struct BlockBuffer {
    table: MergingBuffer<Run>,
    /// Block executions added.
    pub executions: u64,
}

impl BlockBuffer {
    /// A buffer of `bytes` worth of entries (at least one).
    pub fn new(bytes: usize) -> BlockBuffer {
        BlockBuffer {
            table: MergingBuffer::new(bytes / BLOCK_ENTRY_BYTES),
            executions: 0,
        }
    }

    /// Slots in the table.
    pub fn capacity(&self) -> usize {
        self.table.capacity()
    }

    /// Bytes of the table, [`BLOCK_ENTRY_BYTES`] per slot.
    pub fn bytes(&self) -> usize {
        self.table.bytes()
    }

    /// Block executions that found themselves in the table.
    pub fn hits(&self) -> u64 {
        self.table.hits
    }

    /// Entries evicted by another block execution taking their slot.
    pub fn evictions(&self) -> u64 {
        self.table.evictions
    }

    /// Adds one execution of `run`; returns the entry it evicted, if any,
    /// which the caller must count.
    #[inline(always)]
    pub fn insert(&mut self, run: Run) -> Option<(Run, u64)> {
        self.executions += 1;
        self.table.insert(run, 1)
    }

    /// Empties the table, passing every entry to `sink`.
    pub fn drain(&mut self, mut sink: impl FnMut(Run, u64)) {
        self.table.drain(|run, count| sink(*run, count));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn combines_repeats_and_never_loses_an_execution() {
        let mut b = BlockBuffer::new(4 * BLOCK_ENTRY_BYTES);
        assert_eq!((b.capacity(), b.bytes()), (4, 64));
        let mut counted = std::collections::HashMap::new();
        let mut total = 0u64;
        // Each execution three times in a row, 26 distinct ones in turn.
        for i in 0..10_000u32 {
            let j = i / 3;
            let run = Run {
                block: (j * 7) % 13,
                len: 1 + j % 2,
            };
            total += 1;
            if let Some((r, c)) = b.insert(run) {
                *counted.entry(r).or_insert(0) += c;
            }
        }
        b.drain(|r, c| *counted.entry(r).or_insert(0) += c);
        assert_eq!(counted.values().sum::<u64>(), total);
        assert!(b.hits() > 0 && b.evictions() > 0);
        assert_eq!(b.executions, total);
        // Each block execution is counted under its own (block, len).
        let expected = (0..10_000u32)
            .filter(|i| (i / 3 * 7) % 13 == 0 && i / 3 % 2 == 0)
            .count() as u64;
        assert_eq!(counted[&Run { block: 0, len: 1 }], expected);
    }
}
