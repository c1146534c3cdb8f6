//! The merging event buffer of RAP (Mysore et al., TACO 2008, §3.2.1).
//!
//! Programs repeat themselves: the same PC, value or address arrives many
//! times in a short while. The buffer is a small hash table in front of the
//! tree that combines identical points into one (point, count) entry, so the
//! tree is walked once per run of a point instead of once per event. It is
//! direct-mapped without chaining: a point whose slot holds another point
//! evicts that older entry to the tree and takes the slot.
//!
//! The same table, keyed by block executions instead of points, is the
//! [`BlockBuffer`](super::BlockBuffer) in front of a code profile.

use super::config::entry_bytes;
use coprof_core::Run;

/// What a merging buffer combines: a point, or a block execution.
pub(crate) trait Key: Copy + PartialEq {
    /// A key of an empty slot (its count, 0, is what says empty).
    const EMPTY: Self;
    /// Bytes of an entry (key and count) as hardware would hold it.
    const ENTRY_BYTES: usize;
    /// The key's hash, whose high bits choose its slot.
    fn hash(&self) -> u64;
}

impl<const D: usize> Key for [u64; D] {
    const EMPTY: Self = [0; D];
    const ENTRY_BYTES: usize = entry_bytes(D);
    #[inline(always)]
    fn hash(&self) -> u64 {
        let mut h = 0u64;
        for &x in self {
            h = (h.rotate_left(23) ^ x).wrapping_mul(0x9e37_79b9_7f4a_7c15);
        }
        h
    }
}

/// A block execution: a block id, a length and a 64-bit count per entry.
impl Key for Run {
    const EMPTY: Self = Run { block: 0, len: 0 };
    const ENTRY_BYTES: usize = super::block_buffer::BLOCK_ENTRY_BYTES;
    #[inline(always)]
    fn hash(&self) -> u64 {
        (self.block as u64 ^ (self.len as u64) << 32).wrapping_mul(0x9e37_79b9_7f4a_7c15)
    }
}

/// Hits and evictions counted by a loop of
/// [`Slots::insert_tallied`], apart from the table so that they
/// stay in registers.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Tally {
    hits: u64,
    evictions: u64,
}

#[derive(Clone, Copy, Debug)]
struct Entry<K> {
    point: K,
    /// Events combined in this entry; 0 means the slot is empty.
    count: u64,
}

impl<K: Key> Entry<K> {
    /// Whether this entry is `k`'s, so that `k` coming again only adds to
    /// its count.
    #[inline(always)]
    fn holds(&self, k: &K) -> bool {
        self.count != 0 && self.point == *k
    }
}

/// A direct-mapped table of (key, count) entries: points by default.
///
/// Each slot may carry a tag `X` beside its entry, given when a key takes
/// the slot through [`Slots::insert_tagged`] and handed
/// back when it leaves: a code profile tags each PC with its position in
/// the table of blocks, to find its leaf again
/// ([`LeafHints`](super::hints::LeafHints)). The tags are no part of the
/// paper's entry, change nothing of what the buffer does, and lie in an
/// array of their own that untagged inserts never touch.
#[derive(Clone, Debug)]
pub(crate) struct MergingBuffer<K, X = ()> {
    entries: Vec<Entry<K>>,
    /// Per slot, the tag its key took it with (by `insert_tagged`).
    tags: Vec<X>,
    /// Events that found their point already in the table.
    pub(crate) hits: u64,
    /// Entries sent to the tree because another point took their slot.
    pub(crate) evictions: u64,
}

impl<K: Key, X: Copy + Default> MergingBuffer<K, X> {
    /// A buffer of `entries` slots (at least one).
    pub(crate) fn new(entries: usize) -> MergingBuffer<K, X> {
        MergingBuffer {
            entries: vec![
                Entry {
                    point: K::EMPTY,
                    count: 0,
                };
                entries.max(1)
            ],
            tags: vec![X::default(); entries.max(1)],
            hits: 0,
            evictions: 0,
        }
    }

    /// The table's slots, borrowed for a loop of inserts, and its counts
    /// of hits and evictions, to add the loop's [`Tally`] to at its end.
    /// The slots are plain slices in the loop's hands: inserting through
    /// the table itself would load its arrays' addresses and lengths again
    /// after every store into them, which might have changed them.
    #[inline(always)]
    pub(crate) fn split(&mut self) -> (Slots<'_, K, X>, Counts<'_>) {
        (
            Slots {
                entries: &mut self.entries,
                tags: &mut self.tags,
            },
            Counts {
                hits: &mut self.hits,
                evictions: &mut self.evictions,
            },
        )
    }

    /// Adds `weight` events at `p`; returns the entry it evicted, if any,
    /// which the caller must count in the tree.
    #[inline(always)]
    pub(crate) fn insert(&mut self, p: K, weight: u64) -> Option<(K, u64)> {
        let mut tally = Tally::default();
        let (mut slots, counts) = self.split();
        let old = slots.insert_tallied(p, weight, &mut tally);
        counts.add(tally);
        old
    }

    /// Sets every slot's tag to `X::default()`.
    pub(crate) fn clear_tags(&mut self) {
        self.tags.fill(X::default());
    }

    /// Empties the table, passing every entry to `sink`.
    pub(crate) fn drain(&mut self, mut sink: impl FnMut(&K, u64)) {
        for e in &mut self.entries {
            if e.count != 0 {
                sink(&e.point, e.count);
                e.count = 0;
            }
        }
    }

    /// Events held in the table, not yet in the tree.
    pub(crate) fn pending(&self) -> u64 {
        self.entries.iter().map(|e| e.count).sum()
    }

    /// Slots in the table.
    pub(crate) fn capacity(&self) -> usize {
        self.entries.len()
    }

    /// Bytes of the table as the paper's hardware would hold it: a point
    /// and a count per slot.
    pub(crate) fn bytes(&self) -> usize {
        self.entries.len() * K::ENTRY_BYTES
    }
}

/// The slots of a [`MergingBuffer`], borrowed for a loop of inserts
/// ([`MergingBuffer::split`]).
pub(crate) struct Slots<'a, K, X> {
    entries: &'a mut [Entry<K>],
    tags: &'a mut [X],
}

impl<K: Key, X: Copy + Default> Slots<'_, K, X> {
    /// Whether every key of `keys` is in its slot now, so that inserting
    /// them again, one after the other, would only add to their counts.
    #[inline]
    pub(crate) fn holds_all(&self, keys: impl IntoIterator<Item = K>) -> bool {
        keys.into_iter()
            .all(|k| self.entries[self.slot(&k)].holds(&k))
    }

    /// Adds `weight` events to each key of `keys`, which must all be in
    /// their slots ([`holds_all`](Self::holds_all)): what `inserts`
    /// inserts of each, of `weight` events in all, would do, as that many
    /// hits, counted in `tally`.
    #[inline]
    pub(crate) fn add_held(
        &mut self,
        keys: impl IntoIterator<Item = K>,
        weight: u64,
        inserts: u64,
        tally: &mut Tally,
    ) {
        for k in keys {
            let s = self.slot(&k);
            let e = &mut self.entries[s];
            debug_assert!(e.holds(&k), "a key not held");
            e.count += weight;
            tally.hits += inserts;
        }
    }

    /// The slot of `p`: a multiplicative hash reduced to the table size by
    /// a high multiply, so any table size works.
    #[inline(always)]
    fn slot(&self, p: &K) -> usize {
        ((p.hash() as u128 * self.entries.len() as u128) >> 64) as usize
    }

    /// [`MergingBuffer::insert`] for loops over many points: the hits and
    /// evictions are counted in `tally`, which the caller keeps in
    /// registers and adds back with [`Counts::add`], not
    /// in the table, where each event would store them and the next load
    /// them again. The slot's tag is left as it was.
    #[inline(always)]
    pub(crate) fn insert_tallied(
        &mut self,
        p: K,
        weight: u64,
        tally: &mut Tally,
    ) -> Option<(K, u64)> {
        let s = self.slot(&p);
        self.insert_at(s, p, weight, tally).flatten()
    }

    /// [`insert_tallied`](Self::insert_tallied) of a point with a tag: a
    /// point that takes a slot leaves `tag` there, and an entry evicted
    /// comes back with the tag of its slot (what its point left, if it
    /// took the slot here).
    #[inline(always)]
    pub(crate) fn insert_tagged(
        &mut self,
        p: K,
        weight: u64,
        tag: X,
        tally: &mut Tally,
    ) -> Option<(K, u64, X)> {
        let s = self.slot(&p);
        let old = self.insert_at(s, p, weight, tally)?;
        let old_tag = std::mem::replace(&mut self.tags[s], tag);
        old.map(|(k, c)| (k, c, old_tag))
    }

    /// [`insert_tallied`](Self::insert_tallied) with no branch on whether
    /// `p` was there already: it returns the entry the slot held and
    /// whether that entry was evicted (true when another point held the
    /// slot). Whether a point hits is a coin toss on a program's values
    /// (59% of SQLite's load values hit), which a processor guesses wrong
    /// a third of the time or more, throwing away the work of the events
    /// after it; here the outcome only selects values. The caller keeps
    /// the entry when it was evicted. The slot's tag is left as it was:
    /// points with positions, whose tags matter, go through
    /// [`insert_tagged`](Self::insert_tagged), since a program's PCs
    /// revisit their slots in loops the processor learns.
    #[inline(always)]
    pub(crate) fn insert_unbranched(
        &mut self,
        p: K,
        weight: u64,
        tally: &mut Tally,
    ) -> ((K, u64), bool) {
        let s = self.slot(&p);
        let e = self.entries[s];
        let hit = (e.count != 0) & (e.point == p);
        let evicted = !hit & (e.count != 0);
        self.entries[s] = Entry {
            point: p,
            count: if hit { e.count + weight } else { weight },
        };
        tally.hits += hit as u64;
        tally.evictions += evicted as u64;
        ((e.point, e.count), evicted)
    }

    /// [`insert_tallied`](Self::insert_tallied) at `p`'s slot, `s`:
    /// `None` when `p` was there already, else `Some` of the entry it
    /// evicted, if any, when it took the slot.
    #[inline(always)]
    fn insert_at(
        &mut self,
        s: usize,
        p: K,
        weight: u64,
        tally: &mut Tally,
    ) -> Option<Option<(K, u64)>> {
        let e = &mut self.entries[s];
        if e.holds(&p) {
            e.count += weight;
            tally.hits += 1;
            return None;
        }
        let old = *e;
        *e = Entry {
            point: p,
            count: weight,
        };
        if old.count != 0 {
            tally.evictions += 1;
            Some(Some((old.point, old.count)))
        } else {
            Some(None)
        }
    }
}

/// A [`MergingBuffer`]'s counts of hits and evictions, borrowed beside its
/// [`Slots`].
pub(crate) struct Counts<'a> {
    hits: &'a mut u64,
    evictions: &'a mut u64,
}

impl Counts<'_> {
    /// Adds the counts of a loop of inserts.
    #[inline]
    pub(crate) fn add(self, tally: Tally) {
        *self.hits += tally.hits;
        *self.evictions += tally.evictions;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn combines_repeats_and_evicts_on_conflict() {
        let mut b: MergingBuffer<[u64; 1]> = MergingBuffer::new(1);
        assert_eq!(b.insert([7], 1), None);
        assert_eq!(b.insert([7], 2), None);
        assert_eq!(b.hits, 1);
        assert_eq!(b.insert([8], 1), Some(([7], 3)));
        assert_eq!(b.pending(), 1);
        let mut out = vec![];
        b.drain(|p, c| out.push((p[0], c)));
        assert_eq!(out, vec![(8, 1)]);
        assert_eq!(b.pending(), 0);
    }

    #[test]
    fn an_evicted_entry_keeps_the_tag_its_point_took_the_slot_with() {
        let mut b: MergingBuffer<[u64; 1], u32> = MergingBuffer::new(1);
        let mut tally = Tally::default();
        let (mut slots, _) = b.split();
        assert_eq!(slots.insert_tagged([7], 1, 70, &mut tally), None);
        // A hit adds to the count and leaves the tag as it was.
        assert_eq!(slots.insert_tagged([7], 1, 71, &mut tally), None);
        let evicted = slots.insert_tagged([8], 1, 80, &mut tally);
        assert_eq!(evicted, Some(([7], 2, 70)));
        // An untagged insert leaves the slot's tag; clearing sets it to 0.
        assert_eq!(slots.insert_tallied([9], 4, &mut tally), Some(([8], 1)));
        let evicted = slots.insert_tagged([10], 1, 100, &mut tally);
        assert_eq!(evicted, Some(([9], 4, 80)));
        b.clear_tags();
        let (mut slots, counts) = b.split();
        // Without a branch: the old entry comes back whether or not it
        // is evicted, and the tag stays as it was.
        let evicted = slots.insert_unbranched([11], 1, &mut tally);
        assert_eq!(evicted, (([10], 1), true));
        let hit = slots.insert_unbranched([11], 2, &mut tally);
        assert_eq!(hit, (([11], 1), false));
        let evicted = slots.insert_tagged([12], 1, 120, &mut tally);
        assert_eq!(evicted, Some(([11], 3, 0)));
        counts.add(tally);
        assert_eq!((b.hits, b.evictions), (2, 5));
        assert_eq!(b.pending(), 1);
    }

    #[test]
    fn never_loses_events() {
        let mut b: MergingBuffer<[u64; 2]> = MergingBuffer::new(32);
        let mut out = 0u64;
        for i in 0..10_000u64 {
            if let Some((_, c)) = b.insert([i % 97, i % 13], 1) {
                out += c;
            }
        }
        b.drain(|_, c| out += c);
        assert_eq!(out, 10_000);
        assert_eq!(b.bytes(), 32 * 24);
    }
}
