//! The coalescing register (Gordon-Ross & Vahid, CASES 2003, §5): adds up
//! consecutive short backward branches of one loop so that the cache sees
//! one addition per visit to a loop instead of one increment per iteration.
//!
//! The hardware has a *coal* register (address and frequency) that counts
//! while the same sbb repeats, and a *hold* register: when a different sbb
//! arrives the coal contents move to hold, the coal register starts on the
//! new loop, and the cache performs hold's read-modify-write in the
//! background. In this model that write completes before the next sbb
//! arrives (a loop body is at least the branch itself), so the hold
//! register is drained in the same step it is filled and needs no state of
//! its own; the write happens before the new loop's first count, so a
//! halving it causes does not touch the new loop's count.
//!
//! Saturation of the coal register (its frequency reaching the counter
//! maximum) halves every counter in the cache and the coal register itself,
//! exactly as a saturating cache counter does (§5). With counters that never
//! saturate and a cache that never evicts, coalescing leaves every count as
//! it would be without it; the cache only sees fewer, larger updates.

use super::cache::FrequencyCache;

/// The coal register: the loop being counted and its pending count.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CoalescingRegister {
    valid: bool,
    addr: u64,
    index: u64,
    target: u64,
    freq: u64,
    /// Short backward branches absorbed without a cache update of their own.
    coalesced: u64,
}

impl CoalescingRegister {
    /// An empty register.
    pub fn new() -> CoalescingRegister {
        CoalescingRegister::default()
    }

    /// `n` consecutive tallied sbbs of the loop at `addr` (cache index
    /// `index`, body start `target`).
    #[inline]
    pub fn tally(
        &mut self,
        cache: &mut FrequencyCache,
        addr: u64,
        index: u64,
        target: u64,
        n: u64,
    ) {
        if n == 0 {
            return;
        }
        if self.valid && self.addr == addr {
            self.coalesced += n;
            self.count(cache, n);
            return;
        }
        // hold ← coal, written to the cache; coal ← the new loop.
        self.write_back(cache);
        *self = CoalescingRegister {
            valid: true,
            addr,
            index,
            target,
            freq: 0,
            coalesced: self.coalesced + (n - 1),
        };
        self.count(cache, n);
    }

    /// Adds `n` to the coal frequency; each time it saturates, every counter
    /// (the cache's and this one) is halved.
    #[inline]
    fn count(&mut self, cache: &mut FrequencyCache, n: u64) {
        let max = cache.counter_max();
        let mut rest = n;
        loop {
            while self.freq >= max {
                cache.halve_all();
                self.freq >>= 1;
            }
            if rest == 0 {
                return;
            }
            let step = rest.min(max - self.freq);
            self.freq += step;
            rest -= step;
        }
    }

    /// Writes the pending count to the cache as one addition (what happens
    /// through the hold register when the loop changes, and at the end of
    /// the stream), leaving the register empty.
    pub fn write_back(&mut self, cache: &mut FrequencyCache) {
        if self.valid {
            cache.add(self.addr, self.index, self.target, self.freq);
            self.valid = false;
            self.freq = 0;
        }
    }

    /// The loop being counted and its pending count, if any.
    pub fn pending(&self) -> Option<(u64, u64)> {
        self.valid.then_some((self.addr, self.freq))
    }

    /// Short backward branches absorbed so far without their own update.
    pub fn coalesced(&self) -> u64 {
        self.coalesced
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn count_of(c: &FrequencyCache, tag: u64) -> Option<u64> {
        c.get(tag, tag)
    }

    #[test]
    fn consecutive_sbbs_become_one_update() {
        let mut cache = FrequencyCache::new(4, 2, 24);
        let mut r = CoalescingRegister::new();
        for _ in 0..10 {
            r.tally(&mut cache, 1, 1, 0, 1);
        }
        assert_eq!(cache.cost().updates, 0);
        assert_eq!(r.pending(), Some((1, 10)));
        r.tally(&mut cache, 2, 2, 0, 1);
        assert_eq!(cache.cost().updates, 1);
        assert_eq!(count_of(&cache, 1), Some(10));
        assert_eq!(r.coalesced(), 9);
    }

    #[test]
    fn alternating_loops_coalesce_nothing_but_count_right() {
        // A B A B ...: every sbb changes the loop, so every one is written.
        let mut cache = FrequencyCache::new(1, 4, 24);
        let mut r = CoalescingRegister::new();
        for i in 0..100u64 {
            let l = 1 + (i % 2);
            r.tally(&mut cache, l, 0, 0, 1);
        }
        r.write_back(&mut cache);
        assert_eq!(r.coalesced(), 0);
        assert_eq!(cache.cost().updates, 100);
        assert_eq!(cache.get(1, 0), Some(50));
        assert_eq!(cache.get(2, 0), Some(50));
    }

    #[test]
    fn alternating_runs_add_up_per_visit() {
        // A×5 B×3 A×5 B×3: four visits, four additions.
        let mut cache = FrequencyCache::new(1, 4, 24);
        let mut r = CoalescingRegister::new();
        for _ in 0..2 {
            for _ in 0..5 {
                r.tally(&mut cache, 1, 0, 0, 1);
            }
            for _ in 0..3 {
                r.tally(&mut cache, 2, 0, 0, 1);
            }
        }
        r.write_back(&mut cache);
        assert_eq!(cache.cost().updates, 4);
        assert_eq!(cache.get(1, 0), Some(10));
        assert_eq!(cache.get(2, 0), Some(6));
        assert_eq!(r.coalesced(), 16 - 4);
    }

    #[test]
    fn saturating_coal_register_halves_everything() {
        // 4-bit: the coal register saturates at 15.
        let mut cache = FrequencyCache::new(1, 4, 4);
        let mut r = CoalescingRegister::new();
        r.tally(&mut cache, 7, 0, 0, 8);
        r.tally(&mut cache, 1, 0, 0, 14);
        assert_eq!(cache.cost().halvings, 0);
        r.tally(&mut cache, 1, 0, 0, 1); // reaches 15
        assert_eq!(cache.cost().halvings, 1);
        assert_eq!(cache.get(7, 0), Some(4));
        assert_eq!(r.pending(), Some((1, 7)));
    }

    #[test]
    fn a_run_equals_single_sbbs() {
        for n in 0..70u64 {
            let mut c1 = FrequencyCache::new(2, 2, 4);
            let mut c2 = c1.clone();
            let (mut r1, mut r2) = (CoalescingRegister::new(), CoalescingRegister::new());
            for (l, k) in [(1u64, 9u64), (2, 3), (1, 4)] {
                r1.tally(&mut c1, l, l, 0, k);
                for _ in 0..k {
                    r2.tally(&mut c2, l, l, 0, 1);
                }
            }
            r1.tally(&mut c1, 3, 3, 0, n);
            for _ in 0..n {
                r2.tally(&mut c2, 3, 3, 0, 1);
            }
            r1.write_back(&mut c1);
            r2.write_back(&mut c2);
            assert_eq!(c1.entries(), c2.entries(), "n {n}");
            assert_eq!(c1.cost(), c2.cost(), "n {n}");
            assert_eq!(r1.coalesced(), r2.coalesced());
        }
    }
}
