//! The random bytes the kernel gives a process: the 16 bytes at AT_RANDOM
//! (glibc derives its stack-protector canary and pointer guard from them)
//! and what `getrandom` returns.
//!
//! By default they come from the host, as under Linux, so two runs of the
//! same program load different canaries. With a seed they come from a
//! SplitMix64 generator instead, and a program that reads neither the
//! clock nor its process ID runs the same instructions and loads the same
//! values on every run: the load-value profiles of two runs, or of two
//! engine configurations run one after the other, are then comparable
//! value for value.

/// Where the process's random bytes come from.
#[derive(Clone, Debug)]
pub struct GuestRandom {
    /// The generator's state, or `None` for the host's randomness.
    state: Option<u64>,
}

impl GuestRandom {
    /// Host randomness (`None`) or a generator seeded with `seed`.
    pub fn new(seed: Option<u64>) -> GuestRandom {
        GuestRandom { state: seed }
    }

    /// Fills `buf` with random bytes; returns how many (all of them).
    pub fn fill(&mut self, buf: &mut [u8], flags: u32) -> i64 {
        let Some(state) = &mut self.state else {
            // SAFETY: `buf` is a valid, writable buffer of its length.
            return unsafe { libc::getrandom(buf.as_mut_ptr() as *mut _, buf.len(), flags) } as i64;
        };
        for chunk in buf.chunks_mut(8) {
            let z = coprof_core::synth::mix(*state);
            *state = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
            chunk.copy_from_slice(&z.to_le_bytes()[..chunk.len()]);
        }
        buf.len() as i64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_seed_repeats_and_different_seeds_differ() {
        let draw = |seed| {
            let mut r = GuestRandom::new(Some(seed));
            let mut b = [0u8; 21];
            assert_eq!(r.fill(&mut b, 0), 21);
            b
        };
        assert_eq!(draw(7), draw(7));
        assert_ne!(draw(7), draw(8));
        // Not all zeros, even from seed 0.
        assert!(draw(0).iter().any(|&x| x != 0));
    }

    #[test]
    fn the_host_fills_the_buffer() {
        let mut r = GuestRandom::new(None);
        let mut a = [0u8; 32];
        let mut b = [0u8; 32];
        assert_eq!(r.fill(&mut a, 0), 32);
        r.fill(&mut b, 0);
        assert_ne!(a, b);
    }
}
