//! The co-processor's hardware primitives (Zilles & Sohi, "A Programmable
//! Co-processor for Profiling", HPCA 2001, §3.3): an associative array with
//! valid bits, data arrays of saturating counters and of plain words, a
//! pseudo-random LFSR, and the two exits a profiling program ends a sample
//! with.
//!
//! Profiling programs are written against these and nothing else, so that
//! what a program does is what the paper's hardware could do. In hardware
//! the associative array is a CAM searched in one cycle; here it is a small
//! open-addressed index beside the entries, which answers the same
//! question (which valid entry holds this key) in a few instructions.

/// What a profiling program does when it has handled a sample (§3.3).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Exit<R> {
    /// Wait for the next sample.
    Done,
    /// Stop and raise an interrupt on the main processor, which runs the
    /// program's handler with this reason.
    Interrupt(R),
}

const EMPTY: u32 = u32::MAX;

/// An associative array: `entries` keys, each with a valid bit. `find`
/// returns the entry whose valid key equals the key searched for.
#[derive(Clone, Debug)]
pub struct AssocArray {
    keys: Vec<u64>,
    valid: Vec<bool>,
    /// Open-addressed index (linear probing): key and entry number.
    index: Vec<(u64, u32)>,
    shift: u32,
}

impl AssocArray {
    /// An array of `entries` entries, all invalid.
    ///
    /// # Panics
    /// If `entries` is 0 or above 2^24.
    pub fn new(entries: usize) -> AssocArray {
        assert!(entries > 0 && entries <= 1 << 24, "entries out of range");
        let size = (entries * 4).next_power_of_two();
        AssocArray {
            keys: vec![0; entries],
            valid: vec![false; entries],
            index: vec![(0, EMPTY); size],
            shift: 64 - size.trailing_zeros(),
        }
    }

    /// Number of entries.
    pub fn len(&self) -> usize {
        self.keys.len()
    }

    /// Whether the array has no entries (never true: see [`new`](Self::new)).
    pub fn is_empty(&self) -> bool {
        self.keys.is_empty()
    }

    #[inline]
    fn home(&self, key: u64) -> usize {
        (key.wrapping_mul(0x9e37_79b9_7f4a_7c15) >> self.shift) as usize
    }

    /// The valid entry holding `key` (the CAM's match line), if any.
    #[inline]
    pub fn find(&self, key: u64) -> Option<usize> {
        let mask = self.index.len() - 1;
        let mut i = self.home(key);
        loop {
            let (k, e) = self.index[i];
            if e == EMPTY {
                return None;
            }
            if k == key {
                return Some(e as usize);
            }
            i = (i + 1) & mask;
        }
    }

    /// Whether entry `entry` is valid.
    #[inline]
    pub fn is_valid(&self, entry: usize) -> bool {
        self.valid[entry]
    }

    /// The key last written to entry `entry` (meaningful even after it was
    /// invalidated: the bits stay until overwritten).
    #[inline]
    pub fn key(&self, entry: usize) -> u64 {
        self.keys[entry]
    }

    /// Writes `key` into entry `entry` and sets its valid bit. If another
    /// valid entry already holds `key`, that entry is invalidated first, so
    /// that a key matches at most one entry.
    pub fn insert(&mut self, entry: usize, key: u64) {
        self.invalidate(entry);
        if let Some(other) = self.find(key) {
            self.invalidate(other);
        }
        self.keys[entry] = key;
        self.valid[entry] = true;
        let mask = self.index.len() - 1;
        let mut i = self.home(key);
        while self.index[i].1 != EMPTY {
            i = (i + 1) & mask;
        }
        self.index[i] = (key, entry as u32);
    }

    /// Clears entry `entry`'s valid bit; its key no longer matches.
    pub fn invalidate(&mut self, entry: usize) {
        if !self.valid[entry] {
            return;
        }
        self.valid[entry] = false;
        let key = self.keys[entry];
        let mask = self.index.len() - 1;
        let mut i = self.home(key);
        while self.index[i].1 != entry as u32 {
            i = (i + 1) & mask;
        }
        // Backward-shift deletion keeps every probe sequence unbroken.
        let mut hole = i;
        let mut j = i;
        loop {
            j = (j + 1) & mask;
            let (k, e) = self.index[j];
            if e == EMPTY {
                break;
            }
            let h = self.home(k);
            // Move j into the hole unless its home lies cyclically in (hole, j].
            let stays = if hole <= j {
                hole < h && h <= j
            } else {
                hole < h || h <= j
            };
            if !stays {
                self.index[hole] = self.index[j];
                hole = j;
            }
        }
        self.index[hole] = (0, EMPTY);
    }

    /// Invalidates every entry.
    pub fn clear(&mut self) {
        self.valid.iter_mut().for_each(|v| *v = false);
        self.index.iter_mut().for_each(|s| *s = (0, EMPTY));
    }

    /// Bytes held.
    pub fn bytes(&self) -> usize {
        self.keys.len() * 9 + self.index.len() * 16
    }

    /// Bytes the hardware holds: a 64-bit key and a valid bit per entry.
    /// The hash index that stands in for the hardware's parallel compare
    /// is software's alone.
    pub fn hardware_bytes(&self) -> usize {
        self.keys.len() * 8 + self.keys.len().div_ceil(8)
    }
}

/// A data array of saturating counters `width` bits wide (1 to 16).
#[derive(Clone, Debug)]
pub struct SatCounters {
    values: Vec<u16>,
    max: u16,
}

impl SatCounters {
    /// `entries` counters of `width` bits, all zero.
    ///
    /// # Panics
    /// If `width` is not in 1..=16.
    pub fn new(entries: usize, width: u32) -> SatCounters {
        assert!(
            (1..=16).contains(&width),
            "counter width {width} out of 1..=16"
        );
        SatCounters {
            values: vec![0; entries],
            max: ((1u32 << width) - 1) as u16,
        }
    }

    /// The largest value a counter holds.
    pub fn max(&self) -> u16 {
        self.max
    }

    /// Counter `i`.
    #[inline]
    pub fn get(&self, i: usize) -> u16 {
        self.values[i]
    }

    /// Sets counter `i` to `v`, saturating at the maximum.
    #[inline]
    pub fn set(&mut self, i: usize, v: u16) {
        self.values[i] = v.min(self.max);
    }

    /// Adds one unless saturated; returns the new value.
    #[inline]
    pub fn inc(&mut self, i: usize) -> u16 {
        let v = &mut self.values[i];
        if *v < self.max {
            *v += 1;
        }
        *v
    }

    /// Subtracts one unless zero; returns the new value.
    #[inline]
    pub fn dec(&mut self, i: usize) -> u16 {
        let v = &mut self.values[i];
        *v = v.saturating_sub(1);
        *v
    }

    /// Whether counter `i` holds its maximum.
    #[inline]
    pub fn is_saturated(&self, i: usize) -> bool {
        self.values[i] == self.max
    }

    /// Zeroes every counter.
    pub fn clear(&mut self) {
        self.values.iter_mut().for_each(|v| *v = 0);
    }

    /// Bytes held (as the hardware would: `width` bits per counter,
    /// rounded up to whole bytes).
    pub fn bytes(&self) -> usize {
        let bits = 16 - self.max.leading_zeros() as usize;
        self.values.len() * bits.div_ceil(8)
    }
}

/// A data array of plain 64-bit words (for example each slot's active
/// value).
#[derive(Clone, Debug)]
pub struct Words {
    values: Vec<u64>,
}

impl Words {
    /// `entries` zero words.
    pub fn new(entries: usize) -> Words {
        Words {
            values: vec![0; entries],
        }
    }

    /// Word `i`.
    #[inline]
    pub fn get(&self, i: usize) -> u64 {
        self.values[i]
    }

    /// Writes word `i`.
    #[inline]
    pub fn set(&mut self, i: usize, v: u64) {
        self.values[i] = v;
    }

    /// Bytes held.
    pub fn bytes(&self) -> usize {
        self.values.len() * 8
    }
}

/// A single saturating counter register of `width` bits.
#[derive(Clone, Copy, Debug)]
pub struct SatCounter {
    value: u32,
    max: u32,
}

impl SatCounter {
    /// A zero counter that saturates at `max`.
    pub fn saturating_at(max: u32) -> SatCounter {
        SatCounter { value: 0, max }
    }

    /// Its value.
    #[inline]
    pub fn get(&self) -> u32 {
        self.value
    }

    /// Adds one unless saturated; returns the new value.
    #[inline]
    pub fn inc(&mut self) -> u32 {
        self.value = (self.value + 1).min(self.max);
        self.value
    }

    /// Subtracts one unless zero; returns the new value.
    #[inline]
    pub fn dec(&mut self) -> u32 {
        self.value = self.value.saturating_sub(1);
        self.value
    }

    /// Whether it holds its maximum.
    #[inline]
    pub fn is_saturated(&self) -> bool {
        self.value == self.max
    }

    /// Back to zero.
    pub fn reset(&mut self) {
        self.value = 0;
    }
}

/// A 32-bit Galois linear-feedback shift register, the co-processor's
/// source of pseudo-random numbers (§3.3). Its period is 2^32 − 1; the
/// all-zero state is never reached.
#[derive(Clone, Copy, Debug)]
pub struct Lfsr {
    state: u32,
}

/// Feedback taps of x^32 + x^22 + x^2 + x + 1, a primitive polynomial.
const TAPS: u32 = 0x8020_0003;

impl Lfsr {
    /// An LFSR started from `seed` (0 is replaced by 1, the all-zero state
    /// being a fixed point).
    pub fn new(seed: u32) -> Lfsr {
        Lfsr {
            state: if seed == 0 { 1 } else { seed },
        }
    }

    /// One shift; returns the bit shifted out.
    #[inline]
    pub fn step(&mut self) -> u32 {
        let out = self.state & 1;
        self.state >>= 1;
        if out != 0 {
            self.state ^= TAPS;
        }
        out
    }

    /// `n` fresh bits (n ≤ 32), one shift per bit, as a number in
    /// 0..2^n.
    #[inline]
    pub fn bits(&mut self, n: u32) -> u32 {
        let mut r = 0;
        for _ in 0..n {
            r = (r << 1) | self.step();
        }
        r
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use std::collections::HashMap;

    #[test]
    fn assoc_array_matches_valid_keys_only() {
        let mut a = AssocArray::new(4);
        a.insert(0, 0x100);
        a.insert(1, 0x200);
        assert_eq!(a.find(0x100), Some(0));
        assert_eq!(a.find(0x200), Some(1));
        a.invalidate(0);
        assert_eq!(a.find(0x100), None);
        assert_eq!(a.key(0), 0x100, "bits stay after invalidation");
        a.insert(1, 0x300); // overwrite replaces the old key
        assert_eq!(a.find(0x200), None);
        assert_eq!(a.find(0x300), Some(1));
        a.insert(2, 0x300); // the same key moves, never matches twice
        assert_eq!(a.find(0x300), Some(2));
        assert!(!a.is_valid(1));
    }

    proptest! {
        #[test]
        fn assoc_array_agrees_with_a_map(ops in prop::collection::vec((0usize..16, 0u64..40, any::<bool>()), 1..400)) {
            let mut a = AssocArray::new(16);
            let mut model: HashMap<usize, u64> = HashMap::new();
            for (entry, key, insert) in ops {
                if insert {
                    model.retain(|_, k| *k != key);
                    model.insert(entry, key);
                    a.insert(entry, key);
                } else {
                    model.remove(&entry);
                    a.invalidate(entry);
                }
                for key in 0..40u64 {
                    let want = model.iter().find(|(_, k)| **k == key).map(|(e, _)| *e);
                    prop_assert_eq!(a.find(key), want);
                }
            }
        }
    }

    #[test]
    fn counters_saturate_at_their_width() {
        let mut c = SatCounters::new(2, 8);
        for _ in 0..300 {
            c.inc(0);
        }
        assert_eq!(c.get(0), 255);
        assert!(c.is_saturated(0));
        assert_eq!(c.dec(1), 0);
        c.set(1, 1000);
        assert_eq!(c.get(1), 255);
        assert_eq!(c.bytes(), 2);
        assert_eq!(SatCounters::new(3, 16).bytes(), 6);
        let mut r = SatCounter::saturating_at(3);
        r.inc();
        r.inc();
        r.inc();
        r.inc();
        assert!(r.is_saturated());
        assert_eq!(r.dec(), 2);
    }

    #[test]
    fn lfsr_bits_are_roughly_uniform() {
        let mut l = Lfsr::new(12345);
        let mut hist = [0u32; 16];
        for _ in 0..16_000 {
            hist[l.bits(4) as usize] += 1;
        }
        for h in hist {
            assert!((800..1200).contains(&h), "{hist:?}");
        }
        let mut z = Lfsr::new(0);
        assert!((0..64).map(|_| z.step()).any(|b| b == 1));
    }
}
