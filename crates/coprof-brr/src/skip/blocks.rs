//! Outcomes of `brr freq` made 64 uses at a time from the register's
//! output stream, without stepping the register once per use.
//!
//! A Fibonacci register feeds back x_k = XOR over its taps t of x_(k−t),
//! and its state after step k holds x_(k−j) in bit j. So with the stream's
//! last 128 bits in a word, the next 64 come from a few shifted copies of
//! it XORed together, and the outcomes of the next 64 uses, the AND of the
//! state bits brr picks, from a few more copies ANDed together.

use crate::brr::outcome_mask;
use crate::taps::taps;

/// The register's output stream and the outcomes made from it, a block of
/// 64 uses at a time.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) struct OutcomeBlocks {
    /// The last 128 bits the register fed back, the newest in bit 127.
    history: u128,
    /// Outcomes of the uses after the next taken one, in the current
    /// block, the first in bit 0; zero past the block's end.
    rest: u64,
    /// How many uses of the current block follow the next taken one.
    left: u32,
    /// The recurrence that extends the stream: x_k = XOR of x_(k−t) over
    /// these t, the register's taps times 2^d (see [`stretch`]).
    taps: [u8; 6],
    ntaps: u8,
    /// Bits made per chunk: the smallest of `taps`, at most 64.
    chunk: u8,
    /// The state bits j that brr ANDs, as shifts 64 − j (1..=64) of the
    /// history.
    picks: [u8; 64],
    npicks: u8,
}

/// The register's taps times 2^d, for the d that makes the smallest as
/// large as it can be while the largest stays within the 128 bits of
/// history.
///
/// Over GF(2), squaring a polynomial doubles its exponents, P(x)² = P(x²),
/// and a sequence that P annihilates is annihilated by every multiple of
/// P, so x_k = XOR of x_(k−2t) holds as well as x_k = XOR of x_(k−t).
/// Larger taps let a chunk make more bits from known ones: the paper's taps
/// 20 and 17 become 80 and 68, and a block of 64 bits is one chunk.
fn stretch(taps: &[u8]) -> [u8; 6] {
    let max = taps.iter().copied().max().unwrap_or(1) as u32;
    let min = taps.iter().copied().min().unwrap_or(1) as u32;
    let mut d = 0;
    while max << (d + 1) <= 128 && min << d < 64 {
        d += 1;
    }
    let mut out = [0u8; 6];
    for (o, &t) in out.iter_mut().zip(taps) {
        *o = ((t as u32) << d) as u8;
    }
    out
}

/// The last 128 bits fed back before a register of `width` bits reached
/// `state`, newest in bit 127.
///
/// The state holds the last `width` of them (bit j is the one fed back j
/// steps ago); the older ones follow from the recurrence run backwards:
/// x_(k−n) = x_k XOR the other taps' x_(k−t), n being the width.
fn full_history(state: u64, width: u32, taps: &[u8]) -> u128 {
    let mut h = (state.reverse_bits() as u128) << 64;
    // History bit b holds x_(b−127); the state fills b ≥ 128 − width.
    for b in (0..128 - width).rev() {
        let k = b + width; // x_k, whose feedback read bit b
        let mut bit = (h >> k) & 1;
        for &t in taps.iter().filter(|&&t| t as u32 != width) {
            bit ^= (h >> (k - t as u32)) & 1;
        }
        h |= bit << b;
    }
    h
}

impl OutcomeBlocks {
    /// The blocks of a `width`-bit register in `state` (a valid register
    /// state of that width) for `freq` with the bits of `mask`.
    pub(super) fn new(width: u32, state: u64, freq: u32, spacing: crate::Spacing) -> OutcomeBlocks {
        let t = taps(width).expect("the width was checked");
        let stretched = stretch(t);
        let mask = outcome_mask(width, freq, spacing);
        let mut picks = [0u8; 64];
        let mut npicks = 0;
        for j in (0..64).filter(|j| mask >> j & 1 != 0) {
            picks[npicks] = 64 - j as u8;
            npicks += 1;
        }
        OutcomeBlocks {
            history: full_history(state, width, t),
            rest: 0,
            left: 0,
            taps: stretched,
            ntaps: t.len() as u8,
            chunk: stretched[..t.len()]
                .iter()
                .copied()
                .min()
                .unwrap_or(1)
                .min(64),
            picks,
            npicks: npicks as u8,
        }
    }

    /// Extends the history by 64 bits.
    #[inline]
    fn extend(&mut self) {
        let taps = &self.taps[..self.ntaps as usize];
        // History bit 128 − t is x_(k+1−t): each tap's term of the next
        // bit, and of the ones after it up to the smallest tap.
        let feedback = |h: u128| {
            taps.iter()
                .fold(0u64, |f, &t| f ^ (h >> (128 - t as u32)) as u64)
        };
        if self.chunk == 64 {
            self.history = (self.history >> 64) | ((feedback(self.history) as u128) << 64);
            return;
        }
        let mut made = 0u32;
        while made < 64 {
            let n = (self.chunk as u32).min(64 - made);
            let bits = feedback(self.history) & ((1u64 << n) - 1);
            self.history = (self.history >> n) | ((bits as u128) << (128 - n));
            made += n;
        }
    }

    /// Outcomes of the next 64 uses (bit i for the use i + 1 from the
    /// start of the block), and the stream advanced past them.
    #[inline]
    fn next_block(&mut self) -> u64 {
        self.extend();
        // The state after use i + 1 holds in bit j the bit fed back j uses
        // before, history bit 64 + i − j: the history shifted right by
        // 64 − j, done on two words (shifts of a u128 by a variable amount
        // cost several instructions each).
        let (lo, hi) = (self.history as u64, (self.history >> 64) as u64);
        let mut outcomes = u64::MAX;
        for &s in &self.picks[..self.npicks as usize] {
            let s = s as u32; // 1..=64
            outcomes &= ((lo >> 1) >> (s - 1)) | (hi << (64 - s));
        }
        outcomes
    }

    /// How many uses from now the next taken one is, and the blocks
    /// advanced past it. Taken by value and returned, as
    /// [`Geometric`](crate::Geometric)'s draw is, so that the countdown
    /// stays in a register at the site.
    #[cold]
    #[inline(never)]
    pub(super) fn next_taken(mut self) -> (u64, OutcomeBlocks) {
        let mut skipped = 0u64;
        loop {
            if self.rest != 0 {
                let k = self.rest.trailing_zeros() + 1;
                self.rest = self.rest.checked_shr(k).unwrap_or(0);
                self.left -= k;
                return (skipped + k as u64, self);
            }
            skipped += self.left as u64;
            self.rest = self.next_block();
            self.left = 64;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stretched_taps_fill_a_block_where_they_can() {
        // The paper's register: one chunk of 64 bits.
        assert_eq!(&stretch(&[20, 17])[..2], &[80, 68]);
        assert_eq!(&stretch(&[64, 63, 61, 60])[..4], &[128, 126, 122, 120]);
        // A tap of 1 allows only 4 bits per chunk within 128 bits.
        assert_eq!(&stretch(&[19, 6, 2, 1])[..4], &[76, 24, 8, 4]);
    }

    #[test]
    fn history_runs_the_register_backwards() {
        // Step a register 128 times from a state; the history of the end
        // state must hold the bits it fed back.
        let mut r = crate::Lfsr::new(20, 5).unwrap();
        let mut fed = 0u128;
        for _ in 0..128 {
            fed = (fed >> 1) | (((r.step() & 1) as u128) << 127);
        }
        assert_eq!(full_history(r.state(), 20, &[20, 17]), fed);
    }
}
