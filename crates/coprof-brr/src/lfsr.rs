//! The Fibonacci linear feedback shift register behind branch-on-random
//! (Lee & Zilles, CGO 2008, §3.3).
//!
//! Hardware brr keeps one small LFSR per core and steps it once per brr
//! executed: a shift and an XOR of a few taps, cheap enough to sit beside a
//! branch unit. The paper's register is 20 bits wide; wider registers trade
//! a few flip-flops for a longer period and for room to space the bits that
//! brr ANDs together (see [`crate::brr`](mod@crate::brr)).

use crate::error::Error;
use crate::taps::{taps, MAX_WIDTH, MIN_WIDTH};

/// A Fibonacci LFSR of 16 to 64 bits with a maximal-length tap set.
///
/// Each [`step`](Lfsr::step) shifts the register left by one and inserts at
/// bit 0 the XOR of the tap bits. The state is never all zeros, so the
/// register cycles through all 2^n − 1 non-zero states.
#[derive(Clone, Debug)]
pub struct Lfsr {
    state: u64,
    mask: u64,
    // Right shifts that bring each tap to bit 0; unused entries repeat
    // the first, and `ntaps` says how many count.
    shifts: [u8; 6],
    ntaps: u8,
    width: u8,
}

/// Registers are equal when they have the same width and state (the
/// bits above the width are not part of the state).
impl PartialEq for Lfsr {
    fn eq(&self, other: &Lfsr) -> bool {
        self.width == other.width && self.state() == other.state()
    }
}

impl Eq for Lfsr {}

/// The paper's register width (§3.3).
pub const DEFAULT_WIDTH: u32 = 20;

/// The state a register starts from when no seed is given.
pub const DEFAULT_SEED: u64 = 0x5eed_1234_abcd_9876;

/// All-ones mask of the low `width` bits.
pub(crate) const fn width_mask(width: u32) -> u64 {
    if width >= 64 {
        u64::MAX
    } else {
        (1u64 << width) - 1
    }
}

/// Spreads a seed over all 64 bits (splitmix64's finaliser), so that small
/// or similar seeds give unrelated register states.
pub(crate) const fn mix(mut x: u64) -> u64 {
    x = x.wrapping_add(0x9e37_79b9_7f4a_7c15);
    x = (x ^ (x >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    x ^ (x >> 31)
}

impl Lfsr {
    /// A register of `width` bits whose state is derived from `seed`
    /// (mixed, masked to the width, and never zero). Equal seeds give equal
    /// sequences on every machine (§3.4: deterministic runs).
    pub fn new(width: u32, seed: u64) -> Result<Lfsr, Error> {
        let mask = width_mask(width);
        let mut state = mix(seed) & mask;
        if state == 0 {
            state = 1;
        }
        Lfsr::with_state(width, state)
    }

    /// A register of `width` bits holding exactly `state` (bits above the
    /// width must be zero, and the state must not be zero).
    pub fn with_state(width: u32, state: u64) -> Result<Lfsr, Error> {
        if !(MIN_WIDTH..=MAX_WIDTH).contains(&width) {
            return Err(Error::Width(width));
        }
        let mask = width_mask(width);
        if state & mask == 0 || state & !mask != 0 {
            return Err(Error::ZeroState);
        }
        let t = taps(width).ok_or(Error::Width(width))?;
        let mut shifts = [t[0] - 1; 6];
        for (i, &tap) in t.iter().enumerate() {
            shifts[i] = tap - 1;
        }
        Ok(Lfsr {
            state,
            mask,
            shifts,
            ntaps: t.len() as u8,
            width: width as u8,
        })
    }

    /// The paper's 20-bit register, seeded with `seed`.
    pub fn default_width(seed: u64) -> Lfsr {
        Lfsr::new(DEFAULT_WIDTH, seed).expect("20 bits is a supported width")
    }

    /// Advances one step and returns the new state.
    ///
    /// The register word is not masked back to the width after the shift:
    /// bits above the width never reach a tap or an outcome, and leaving
    /// them saves an operation on the step's dependency chain (the next
    /// step waits for this one). The state returned is masked.
    #[inline(always)]
    pub fn step(&mut self) -> u64 {
        let s = self.state;
        let [a, b, c, d, e, f] = self.shifts;
        // The tap count is fixed per register, so this branch always
        // predicts; two- and four-tap sets are the common case.
        let fb = match self.ntaps {
            2 => (s >> a) ^ (s >> b),
            4 => (s >> a) ^ (s >> b) ^ (s >> c) ^ (s >> d),
            _ => (s >> a) ^ (s >> b) ^ (s >> c) ^ (s >> d) ^ (s >> e) ^ (s >> f),
        } & 1;
        self.state = (s << 1) | fb;
        self.state & self.mask
    }

    /// The current state.
    #[inline]
    pub fn state(&self) -> u64 {
        self.state & self.mask
    }

    /// The width in bits.
    pub fn width(&self) -> u32 {
        self.width as u32
    }

    /// The period, 2^n − 1 (saturating at `u64::MAX` for 64 bits, which is
    /// exact).
    pub fn period(&self) -> u64 {
        self.mask
    }

    /// Memory held, in bytes.
    pub fn bytes(&self) -> usize {
        core::mem::size_of::<Lfsr>()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn walk_period(width: u32) -> u64 {
        let mut r = Lfsr::with_state(width, 1).unwrap();
        let start = r.state();
        let mut n = 0u64;
        loop {
            let s = r.step();
            n += 1;
            assert_ne!(s, 0, "width {width} reached zero");
            if s == start {
                return n;
            }
            assert!(n <= r.period(), "width {width} exceeded its period");
        }
    }

    #[test]
    fn small_widths_have_full_period() {
        for width in 16..=22 {
            assert_eq!(walk_period(width), (1u64 << width) - 1, "width {width}");
        }
    }

    #[test]
    fn rejects_bad_width_and_zero_state() {
        assert_eq!(Lfsr::new(15, 1), Err(Error::Width(15)));
        assert_eq!(Lfsr::new(65, 1), Err(Error::Width(65)));
        assert_eq!(Lfsr::with_state(20, 0), Err(Error::ZeroState));
        assert_eq!(Lfsr::with_state(20, 1 << 20), Err(Error::ZeroState));
    }

    #[test]
    fn seeding_is_deterministic_and_never_zero() {
        for seed in 0..1000u64 {
            let mut a = Lfsr::new(16, seed).unwrap();
            let mut b = Lfsr::new(16, seed).unwrap();
            assert_ne!(a.state(), 0);
            for _ in 0..10 {
                assert_eq!(a.step(), b.step());
            }
        }
        assert_ne!(
            Lfsr::new(20, 1).unwrap().state(),
            Lfsr::new(20, 2).unwrap().state()
        );
    }

    #[test]
    fn wide_registers_stay_in_width_and_balanced() {
        for width in [23, 32, 37, 48, 63, 64] {
            let mut r = Lfsr::new(width, 99).unwrap();
            let mut ones = 0u64;
            let n = 100_000;
            for _ in 0..n {
                let s = r.step();
                assert_ne!(s, 0);
                assert_eq!(s & !width_mask(width), 0);
                ones += s & 1;
            }
            let share = ones as f64 / n as f64;
            assert!((0.49..0.51).contains(&share), "width {width}: {share}");
        }
    }
}
