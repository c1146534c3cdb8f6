//! The intervals between taken outcomes over a whole period of the
//! register, for registers short enough to go round once (`std` feature).
//!
//! The outcome sequence of a fixed freq repeats with the register's period
//! 2^n − 1, and at freq f it holds exactly 2^(n−f−1) taken outcomes per
//! period (the states whose f+1 chosen bits are all 1). For the paper's
//! 20-bit register at freq 9 that is 1,024 intervals, 4 KiB as `u32`s:
//! with them a sample costs a load, where blocks cost a few dozen
//! instructions per 64 uses in between.

use super::blocks::OutcomeBlocks;
use std::boxed::Box;
use std::vec::Vec;

/// Widest register whose period is walked to make a table (2^24 uses,
/// 262,144 blocks).
pub(super) const MAX_WIDTH: u32 = 24;

/// Largest table made, in bytes.
pub(super) const MAX_BYTES: usize = 64 * 1024;

/// How many taken outcomes a period of a `width`-bit register holds at
/// `freq`: the non-zero states with freq+1 given bits set.
fn taken_per_period(width: u32, freq: u32) -> u64 {
    let k = freq + 1;
    if k >= width {
        1
    } else {
        1 << (width - k)
    }
}

/// The intervals between consecutive taken outcomes, cyclically, and the
/// uses until the first: walks one period of `blocks` (of a register of
/// `width` bits). `None` when the register is too wide or the table too
/// large.
pub(super) fn interval_table(
    mut blocks: OutcomeBlocks,
    width: u32,
    freq: u32,
) -> Option<(u64, Box<[u32]>)> {
    let len = taken_per_period(width, freq);
    if width > MAX_WIDTH || len as usize * 4 > MAX_BYTES {
        return None;
    }
    let period = (1u64 << width) - 1;
    let (first, b) = blocks.next_taken();
    blocks = b;
    let mut at = first;
    let mut table = Vec::with_capacity(len as usize);
    // The last interval wraps round to the first taken use of the next
    // period, at first + period.
    while at < first + period {
        let (d, b) = blocks.next_taken();
        blocks = b;
        table.push(d as u32);
        at += d;
    }
    debug_assert_eq!(at, first + period);
    debug_assert_eq!(table.len() as u64, len);
    Some((first, table.into_boxed_slice()))
}

/// The interval at `next` and the index after it, cyclically.
#[cold]
#[inline(never)]
pub(super) fn read(table: &[u32], next: usize) -> (u64, usize) {
    let after = if next + 1 == table.len() { 0 } else { next + 1 };
    (table[next] as u64, after)
}
