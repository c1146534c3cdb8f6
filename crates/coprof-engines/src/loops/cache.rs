//! The frequent loop cache (Gordon-Ross & Vahid, CASES 2003, §3.3): a tiny
//! set-associative cache of short-backward-branch addresses, each with a
//! saturating frequency counter.
//!
//! - Indexed by the sbb's PC. A hit increments the entry's counter.
//! - A miss with a free way inserts the loop with count 1; a miss in a full
//!   set replaces the least frequent way (the lowest-numbered way among
//!   equals, a choice the paper leaves open).
//! - When an update makes a counter saturate (reach 2^width − 1), every
//!   counter in the cache is shifted right by one. Halving keeps the
//!   counters' ratios, which is all the detector reports, and ages out loops
//!   that were hot long ago so that the least-frequent replacement can evict
//!   them.
//!
//! Besides single increments the cache takes two batched forms, both exact
//! rewritings of the hardware's step-by-step behaviour, not approximations:
//! [`FrequencyCache::increment`] with `n > 1` is `n` consecutive increments
//! of one loop (nothing else touches the cache in between, so only the
//! halvings need care), and [`FrequencyCache::add`] is the coalescing
//! register's single addition of a whole count (§5).

use serde::Serialize;

/// What the cache did, for estimating its power as the paper does (§5,
/// Fig. 4): every update is one read of a set and one write of an entry; a
/// halving rewrites every entry.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct CacheCost {
    /// Cache updates: increments or coalesced additions, hits and misses.
    pub updates: u64,
    /// Set reads: one per update.
    pub reads: u64,
    /// Entry writes: one per update plus one per entry per halving.
    pub writes: u64,
    /// Times every counter was shifted right by one.
    pub halvings: u64,
    /// Updates that missed and inserted a loop (into a free way or over the
    /// least frequent one).
    pub misses: u64,
    /// Misses that evicted a resident loop.
    pub replacements: u64,
}

/// One resident loop.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct CacheEntry {
    /// The loop's identity, its sbb's PC (or any tag the caller chose).
    pub tag: u64,
    /// The sbb's target, the start of the loop body, as of the insertion.
    pub target: u64,
    /// The frequency counter.
    pub count: u64,
}

/// The cache: `sets × ways` entries of (tag, target, counter).
#[derive(Clone, Debug)]
pub struct FrequencyCache {
    set_mask: u64,
    ways: usize,
    max: u64,
    tags: Vec<u64>,
    targets: Vec<u64>,
    /// Counter values as of `epochs[slot]` halvings.
    counts: Vec<u32>,
    /// The number of halvings each counter has taken in. A counter's value
    /// is `counts[slot] >> (halvings − epochs[slot])`: shifting right k
    /// times one bit at a time equals shifting right by k bits, so halving
    /// every counter is a single increment of the halving count rather than
    /// a pass over the cache, and its state is the hardware's exactly.
    epochs: Vec<u64>,
    /// Ways in use per set. Entries are never invalidated, so a set fills
    /// its ways in order and the first `filled` ways are the valid ones.
    filled: Vec<u32>,
    cost: CacheCost,
}

impl FrequencyCache {
    /// An empty cache of `sets × ways` entries with `width`-bit counters.
    /// `sets` and `ways` are powers of two and `width` is 4 to 32 (checked
    /// by [`LoopConfig::validate`](super::LoopConfig::validate)).
    pub fn new(sets: usize, ways: usize, width: u32) -> FrequencyCache {
        debug_assert!(sets.is_power_of_two() && ways >= 1 && (1..=32).contains(&width));
        let n = sets * ways;
        FrequencyCache {
            set_mask: sets as u64 - 1,
            ways,
            max: (1u64 << width) - 1,
            tags: vec![0; n],
            targets: vec![0; n],
            counts: vec![0; n],
            epochs: vec![0; n],
            filled: vec![0; sets],
            cost: CacheCost::default(),
        }
    }

    /// The counter value that triggers a halving.
    pub fn counter_max(&self) -> u64 {
        self.max
    }

    /// Finds `tag` in the set that `index` selects, inserting it on a miss
    /// with count `initial` (replacing the least frequent way of a full
    /// set). Returns the entry's slot and whether it was a hit.
    #[inline]
    fn find_or_insert(&mut self, tag: u64, index: u64, target: u64, initial: u64) -> (usize, bool) {
        let set = (index & self.set_mask) as usize;
        let base = set * self.ways;
        let filled = self.filled[set] as usize;
        // Compare every way without branching on the outcome (a set is
        // searched in parallel in hardware; here it spares mispredictions).
        let ways = &self.tags[base..base + self.ways];
        let mut found = usize::MAX;
        for (w, &t) in ways.iter().enumerate() {
            found = if t == tag && w < filled { w } else { found };
        }
        if found != usize::MAX {
            let slot = base + found;
            self.normalize(slot);
            return (slot, true);
        }
        self.cost.misses += 1;
        let slot = if filled < self.ways {
            self.filled[set] += 1;
            base + filled
        } else {
            self.cost.replacements += 1;
            let mut victim = base;
            let mut least = self.value(base);
            for s in base + 1..base + self.ways {
                let v = self.value(s);
                if v < least {
                    victim = s;
                    least = v;
                }
            }
            victim
        };
        self.tags[slot] = tag;
        self.targets[slot] = target;
        // `initial` is below the maximum except for a coalesced count that
        // the caller let grow past it; `settle` below takes care of that.
        self.counts[slot] = initial.min(u32::MAX as u64) as u32;
        self.epochs[slot] = self.cost.halvings;
        (slot, false)
    }

    /// `n` consecutive increments of loop `tag` (the non-coalescing
    /// hardware, §3.3): the first may miss and insert with count 1, the rest
    /// hit. Returns the number of halvings they caused.
    #[inline]
    pub fn increment(&mut self, tag: u64, index: u64, target: u64, n: u64) -> u64 {
        if n == 0 {
            return 0;
        }
        self.cost.updates += n;
        let (slot, hit) = self.find_or_insert(tag, index, target, 1);
        let mut rest = if hit { n } else { n - 1 };
        let mut f = self.counts[slot] as u64;
        if rest == 1 && f + 1 < self.max {
            self.counts[slot] = (f + 1) as u32;
            return 0;
        }
        let mut halvings = 0;
        loop {
            // Saturation check after the last increment.
            while f >= self.max {
                self.halve_all();
                f >>= 1;
                halvings += 1;
            }
            if rest == 0 {
                break;
            }
            let step = rest.min(self.max - f);
            f += step;
            rest -= step;
        }
        self.counts[slot] = f as u32;
        self.epochs[slot] = self.cost.halvings;
        halvings
    }

    /// One addition of `c` to loop `tag` (the coalescing register's write,
    /// §5): a miss inserts the loop with count `c`. If the sum reaches the
    /// maximum, every counter is halved (as many times as needed; once,
    /// when `c` is itself below the maximum). Returns the halvings.
    #[inline]
    pub fn add(&mut self, tag: u64, index: u64, target: u64, c: u64) -> u64 {
        self.cost.updates += 1;
        let (slot, hit) = self.find_or_insert(tag, index, target, c);
        let mut f = if hit { self.counts[slot] as u64 + c } else { c };
        let mut halvings = 0;
        while f >= self.max {
            self.halve_all();
            f >>= 1;
            halvings += 1;
        }
        self.counts[slot] = f as u32;
        self.epochs[slot] = self.cost.halvings;
        halvings
    }

    /// Shifts every counter right by one (by counting the halving; see
    /// `epochs`).
    #[inline]
    pub fn halve_all(&mut self) {
        self.cost.halvings += 1;
    }

    /// The current value of the counter in `slot`.
    #[inline]
    fn value(&self, slot: usize) -> u64 {
        let behind = self.cost.halvings - self.epochs[slot];
        if behind >= 32 {
            0
        } else {
            (self.counts[slot] >> behind) as u64
        }
    }

    /// Brings the counter in `slot` up to date with every halving.
    #[inline]
    fn normalize(&mut self, slot: usize) {
        self.counts[slot] = self.value(slot) as u32;
        self.epochs[slot] = self.cost.halvings;
    }

    /// The count of `tag`, if resident.
    pub fn get(&self, tag: u64, index: u64) -> Option<u64> {
        let set = (index & self.set_mask) as usize;
        let base = set * self.ways;
        let filled = self.filled[set] as usize;
        (base..base + filled)
            .find(|&s| self.tags[s] == tag)
            .map(|s| self.value(s))
    }

    /// Every resident loop, in slot order.
    pub fn entries(&self) -> Vec<CacheEntry> {
        let mut v = Vec::new();
        for (set, &filled) in self.filled.iter().enumerate() {
            let base = set * self.ways;
            for s in base..base + filled as usize {
                v.push(CacheEntry {
                    tag: self.tags[s],
                    target: self.targets[s],
                    count: self.value(s),
                });
            }
        }
        v
    }

    /// What the cache has done so far. Reads and writes follow from the
    /// updates and halvings, so only those are counted on the hot path.
    pub fn cost(&self) -> CacheCost {
        CacheCost {
            reads: self.cost.updates,
            writes: self.cost.updates + self.cost.halvings * self.counts.len() as u64,
            ..self.cost
        }
    }

    /// Bytes this software model holds.
    pub fn bytes(&self) -> usize {
        self.tags.len() * (8 + 8 + 4 + 8) + self.filled.len() * 4
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn counts(c: &FrequencyCache) -> Vec<(u64, u64)> {
        let mut v: Vec<_> = c.entries().iter().map(|e| (e.tag, e.count)).collect();
        v.sort();
        v
    }

    #[test]
    fn hit_increments_miss_inserts_with_one() {
        let mut c = FrequencyCache::new(1, 4, 8);
        c.increment(10, 0, 0, 1);
        c.increment(10, 0, 0, 1);
        c.increment(20, 0, 0, 1);
        assert_eq!(counts(&c), vec![(10, 2), (20, 1)]);
        assert_eq!(c.cost().misses, 2);
        assert_eq!(c.cost().updates, 3);
    }

    #[test]
    fn full_set_replaces_the_least_frequent_way() {
        // One set of two ways: loop 1 seen 5 times, loop 2 twice; loop 3
        // must evict loop 2, then loop 4 evicts loop 3 (count 1 < 5).
        let mut c = FrequencyCache::new(1, 2, 8);
        c.increment(1, 0, 0, 5);
        c.increment(2, 0, 0, 2);
        c.increment(3, 0, 0, 1);
        assert_eq!(counts(&c), vec![(1, 5), (3, 1)]);
        c.increment(4, 0, 0, 1);
        assert_eq!(counts(&c), vec![(1, 5), (4, 1)]);
        assert_eq!(c.cost().replacements, 2);
        // Ties go to the lowest way: loop 1 in way 0, loop 5 in way 1.
        let mut t = FrequencyCache::new(1, 2, 8);
        t.increment(1, 0, 0, 1);
        t.increment(5, 0, 0, 1);
        t.increment(6, 0, 0, 1);
        assert_eq!(counts(&t), vec![(5, 1), (6, 1)]);
    }

    #[test]
    fn sets_are_chosen_by_index_bits() {
        // Direct mapped, 4 sets: indices 0 and 4 collide, 1 does not.
        let mut c = FrequencyCache::new(4, 1, 8);
        c.increment(100, 0, 0, 3);
        c.increment(101, 1, 0, 1);
        c.increment(104, 4, 0, 1);
        assert_eq!(c.get(100, 0), None);
        assert_eq!(c.get(104, 4), Some(1));
        assert_eq!(c.get(101, 1), Some(1));
    }

    #[test]
    fn saturation_halves_every_counter() {
        // 4-bit counters saturate at 15.
        let mut c = FrequencyCache::new(1, 4, 4);
        c.increment(1, 0, 0, 14);
        c.increment(2, 0, 0, 9);
        assert_eq!(c.cost().halvings, 0);
        let h = c.increment(1, 0, 0, 1); // reaches 15
        assert_eq!(h, 1);
        assert_eq!(counts(&c), vec![(1, 7), (2, 4)]);
        assert_eq!(c.cost().halvings, 1);
    }

    #[test]
    fn run_of_increments_equals_single_steps() {
        for width in [4, 5, 8] {
            for n in 0..100 {
                let mut a = FrequencyCache::new(2, 2, width);
                let mut b = a.clone();
                for (tag, k) in [(1u64, 3u64), (2, 7), (3, 1)] {
                    a.increment(tag, tag, 0, k);
                    b.increment(tag, tag, 0, k);
                }
                a.increment(2, 2, 0, n);
                for _ in 0..n {
                    b.increment(2, 2, 0, 1);
                }
                assert_eq!(counts(&a), counts(&b), "width {width} n {n}");
                assert_eq!(a.cost(), b.cost(), "width {width} n {n}");
            }
        }
    }

    #[test]
    fn coalesced_addition_halves_when_the_sum_saturates() {
        let mut c = FrequencyCache::new(1, 2, 4);
        c.add(1, 0, 0, 10);
        c.add(2, 0, 0, 3);
        assert_eq!(c.cost().halvings, 0);
        let h = c.add(1, 0, 0, 6); // 16 ≥ 15: halve once
        assert_eq!(h, 1);
        assert_eq!(counts(&c), vec![(1, 8), (2, 1)]);
        assert_eq!(c.cost().updates, 3);
        assert_eq!(c.cost().writes, 3 + 2);
    }
}
