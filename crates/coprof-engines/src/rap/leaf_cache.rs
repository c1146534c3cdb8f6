//! A cache of the leaves recent points were counted in: a software
//! shortcut around the walk down the RAP tree, not part of the paper's
//! mechanism (Mysore et al., TACO 2008), and invisible in its results.
//!
//! Counting a point means finding the smallest range that contains it, a
//! leaf, by a walk from the root: one dependent memory load per level, up
//! to 32 of them for 64-bit points with b = 4. Value and address streams
//! repeat their hot points (that is why they are profiled), so the tree
//! remembers, per point, the leaf it was last counted in, in a
//! direct-mapped table. An entry is trusted only while
//!
//! - no merge batch has run since it was made (merges free nodes, whose
//!   indices are then reused for other ranges): a merge batch empties the
//!   table;
//! - its node is still a leaf (a split turns it into an inner node, and the
//!   point's leaf is then below it);
//!
//! and the cached leaf can take the point's weight without splitting. In
//! every other case the tree walks as before. So the tree built is the same
//! node for node with or without the cache (a property test checks it).

/// One remembered leaf.
#[derive(Clone, Copy, Debug)]
struct Entry<const D: usize> {
    point: [u64; D],
    /// The leaf's node index.
    node: u32,
    /// The leaf's depth.
    level: u32,
}

/// An empty slot says that its point lies in the root, which is true of
/// every point: when the root is not a leaf the entry is not trusted.
const EMPTY: Entry<1> = Entry {
    point: [0],
    node: 0,
    level: 0,
};

/// Slots in the table: 4,096 entries, 64 KiB for one-dimensional points,
/// small enough to stay in a core's second-level cache beside the tree.
pub(crate) const LEAF_CACHE_ENTRIES: usize = 4096;

/// A direct-mapped table from points to the leaves they were counted in.
#[derive(Clone, Debug)]
pub(crate) struct LeafCache<const D: usize> {
    entries: Box<[Entry<D>]>,
}

impl<const D: usize> LeafCache<D> {
    pub(crate) fn new() -> LeafCache<D> {
        LeafCache {
            entries: vec![Self::empty(); LEAF_CACHE_ENTRIES].into_boxed_slice(),
        }
    }

    fn empty() -> Entry<D> {
        Entry {
            point: [EMPTY.point[0]; D],
            node: EMPTY.node,
            level: EMPTY.level,
        }
    }

    /// Forgets every entry (after a merge batch).
    pub(crate) fn clear(&mut self) {
        self.entries.fill(Self::empty());
    }

    #[inline(always)]
    fn slot(p: &[u64; D]) -> usize {
        let mut h = 0u64;
        for &x in p {
            h = (h.rotate_left(29) ^ x).wrapping_mul(0x9e37_79b9_7f4a_7c15);
        }
        (h >> (64 - LEAF_CACHE_ENTRIES.trailing_zeros())) as usize
    }

    /// The leaf (node, depth) last recorded for `p`: a node that contains
    /// `p` (the root when nothing is recorded), to be used only if it is
    /// still a leaf.
    #[inline(always)]
    pub(crate) fn get(&self, p: &[u64; D]) -> Option<(usize, u32)> {
        let e = &self.entries[Self::slot(p)];
        (e.point == *p).then_some((e.node as usize, e.level))
    }

    /// Records that `p` was counted in leaf `node` at depth `level`.
    #[inline(always)]
    pub(crate) fn put(&mut self, p: &[u64; D], node: usize, level: u32) {
        self.entries[Self::slot(p)] = Entry {
            point: *p,
            node: node as u32,
            level,
        };
    }

    /// Bytes of the table.
    pub(crate) fn bytes(&self) -> usize {
        std::mem::size_of_val(&*self.entries)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn remembers_until_cleared() {
        let mut c: LeafCache<1> = LeafCache::new();
        assert_eq!(c.get(&[5]), None);
        // Never recorded, the point 0 is said to be in the root.
        assert_eq!(c.get(&[0]), Some((0, 0)));
        c.put(&[5], 17, 3);
        assert_eq!(c.get(&[5]), Some((17, 3)));
        assert_eq!(c.get(&[6]), None);
        c.clear();
        assert_eq!(c.get(&[5]), None);
        assert_eq!(c.bytes(), LEAF_CACHE_ENTRIES * 16);
    }
}
