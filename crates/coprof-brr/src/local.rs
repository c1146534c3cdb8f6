//! The thread-local default branch-on-random unit behind [`brr()`] and
//! `brr!(freq, {..})` (`std` feature).
//!
//! Hardware brr has one LFSR per core (Lee & Zilles, CGO 2008, §3.3); the
//! software counterpart is one per thread. It is the paper's 20-bit register
//! with spaced bits, specialised to constant taps so that a use is a few
//! register operations on one thread-local word. Every thread starts from
//! the same state, so runs are deterministic (§3.4); threads that should not
//! sample in lock-step call [`seed_thread`] with, say, their index.

use crate::brr::{outcome_masks, Spacing};
use crate::lfsr::{mix, width_mask, DEFAULT_SEED};
use core::cell::Cell;

const WIDTH: u32 = 20;
const MASK: u64 = width_mask(WIDTH);
const MASKS: [u64; 16] = outcome_masks(WIDTH, Spacing::Spaced);

const fn initial_state(seed: u64) -> u64 {
    let s = mix(seed) & MASK;
    if s == 0 {
        1
    } else {
        s
    }
}

std::thread_local! {
    static STATE: Cell<u64> = const { Cell::new(initial_state(DEFAULT_SEED)) };
}

/// Executes `brr freq` on this thread's unit: true with probability
/// (1/2)^(freq+1). Only the low four bits of `freq` are used.
#[inline(always)]
pub fn brr(freq: u32) -> bool {
    STATE.with(|cell| {
        let s = cell.get();
        // Taps 20 and 17 (bits 19 and 16), as `Lfsr` of width 20; bits
        // above the width are left in the word, as `Lfsr::step` does.
        let next = (s << 1) | (((s >> 19) ^ (s >> 16)) & 1);
        cell.set(next);
        let m = MASKS[(freq & 15) as usize];
        next & m == m
    })
}

/// Reseeds this thread's unit; equal seeds give equal outcome sequences.
pub fn seed_thread(seed: u64) {
    STATE.with(|cell| cell.set(initial_state(seed)));
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Brr;

    #[test]
    fn matches_the_explicit_unit() {
        seed_thread(77);
        let mut unit = Brr::new(77);
        for i in 0..10_000u32 {
            assert_eq!(brr(i % 16), unit.brr(i % 16), "use {i}");
        }
        // A fresh thread starts from the default state.
        let fresh: std::vec::Vec<bool> = std::thread::spawn(|| (0..64).map(|_| brr(0)).collect())
            .join()
            .unwrap();
        let mut d = Brr::new(DEFAULT_SEED);
        let expect: std::vec::Vec<bool> = (0..64).map(|_| d.brr(0)).collect();
        assert_eq!(fresh, expect);
    }
}
