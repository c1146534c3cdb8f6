//! A cache from keys (points, or blocks of points) to tree nodes on their
//! path: a software shortcut around the walk down the RAP tree, not part
//! of the paper's mechanism (Mysore et al., TACO 2008), and invisible in
//! its results.
//!
//! Counting a point means finding the smallest range that contains it, a
//! leaf, by a walk from the root: one dependent memory load per level, up
//! to 32 of them for 64-bit points with b = 4. The tree remembers, per
//! point (the leaf it was counted in) and per aligned block of points (the
//! deepest node on the block's path down to a fixed depth), a node in a
//! direct-mapped table, and walks from there. A block's entry stays right
//! while the tree only grows: a split adds nodes below it, so it is still
//! an ancestor of its points' leaves; a point's entry is used only while
//! its node is still a leaf. A merge batch frees nodes, whose indices are
//! then reused for other ranges, so the tables forget the entries that
//! name them; every other node keeps its range. The tree built
//! is the same node for node with the caches as without them: debug builds
//! check every walk against one from the root.

/// One remembered node.
#[derive(Clone, Copy, Debug)]
struct Entry<const D: usize> {
    /// The point, or the block with its coordinates' low bits cleared.
    block: [u64; D],
    /// The node's index.
    node: u32,
    /// The node's depth.
    level: u32,
}

/// A direct-mapped table from keys to nodes on their path, of a power of
/// two slots.
#[derive(Clone, Debug)]
pub(crate) struct NodeCache<const D: usize> {
    entries: Box<[Entry<D>]>,
    /// 64 − log2(slots): a key's slot is the top bits of its hash.
    shift: u32,
}

impl<const D: usize> NodeCache<D> {
    /// An empty table of `slots` slots, a power of two of at least 2.
    pub(crate) fn new(slots: usize) -> NodeCache<D> {
        assert!(slots.is_power_of_two() && slots >= 2, "{slots} slots");
        NodeCache {
            entries: vec![Self::empty(); slots].into_boxed_slice(),
            shift: 64 - slots.trailing_zeros(),
        }
    }

    /// Slots in the table.
    pub(crate) fn slots(&self) -> usize {
        self.entries.len()
    }

    /// Doubles the table, keeping every entry: slot `s` of the old table
    /// becomes slot `2s` or `2s + 1`, as the hash's next bit says.
    pub(crate) fn grow(&mut self) {
        let old = std::mem::replace(self, NodeCache::new(self.slots() * 2));
        for e in old.entries.iter().filter(|e| e.node != 0) {
            self.put(&e.block, e.node as usize, e.level);
        }
    }

    /// An empty slot says that the block of zeros lies under the root,
    /// which is true of every block.
    fn empty() -> Entry<D> {
        Entry {
            block: [0; D],
            node: 0,
            level: 0,
        }
    }

    /// Forgets the entries whose node `gone` says no longer exists.
    pub(crate) fn forget(&mut self, gone: impl Fn(usize) -> bool) {
        for e in self.entries.iter_mut() {
            if gone(e.node as usize) {
                *e = Self::empty();
            }
        }
    }

    /// The slot of `block`, to look it up and then record it without
    /// hashing it twice.
    #[inline(always)]
    pub(crate) fn slot(&self, block: &[u64; D]) -> usize {
        let mut h = 0u64;
        for &x in block {
            h = (h.rotate_left(29) ^ x).wrapping_mul(0x9e37_79b9_7f4a_7c15);
        }
        (h >> self.shift) as usize
    }

    /// The node (index, depth) last recorded for `block`: an ancestor of
    /// the leaves of its points.
    #[inline(always)]
    pub(crate) fn get(&self, block: &[u64; D]) -> Option<(usize, u32)> {
        self.get_at(self.slot(block), block)
    }

    /// [`get`](Self::get) at `block`'s slot, `slot`.
    #[inline(always)]
    pub(crate) fn get_at(&self, slot: usize, block: &[u64; D]) -> Option<(usize, u32)> {
        let e = &self.entries[slot];
        (e.block == *block).then_some((e.node as usize, e.level))
    }

    /// Records `node`, at depth `level`, for `block`.
    #[inline(always)]
    pub(crate) fn put(&mut self, block: &[u64; D], node: usize, level: u32) {
        self.put_at(self.slot(block), block, node, level);
    }

    /// [`put`](Self::put) at `block`'s slot, `slot`.
    #[inline(always)]
    pub(crate) fn put_at(&mut self, slot: usize, block: &[u64; D], node: usize, level: u32) {
        self.entries[slot] = Entry {
            block: *block,
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
    fn remembers_until_its_node_is_gone() {
        let mut c: NodeCache<1> = NodeCache::new(64);
        assert_eq!(c.get(&[0x500]), None);
        // Never recorded, the block of zeros is said to be under the root.
        assert_eq!(c.get(&[0]), Some((0, 0)));
        c.put(&[0x500], 17, 3);
        assert_eq!(c.get(&[0x500]), Some((17, 3)));
        assert_eq!(c.get(&[0x600]), None);
        c.put(&[0x700], 18, 3);
        c.forget(|v| v == 17);
        assert_eq!(c.get(&[0x500]), None);
        assert_eq!(c.get(&[0x700]), Some((18, 3)));
        assert_eq!(c.bytes(), 64 * 16);
    }

    #[test]
    fn growing_keeps_every_entry() {
        let mut c: NodeCache<2> = NodeCache::new(64);
        let keys: Vec<[u64; 2]> = (1..200u64).map(|i| [i << 8, i * 7]).collect();
        for (i, k) in keys.iter().enumerate() {
            c.put(k, i + 1, 5);
        }
        let kept: Vec<_> = keys.iter().map(|k| c.get(k)).collect();
        c.grow();
        assert_eq!(c.slots(), 128);
        assert_eq!(keys.iter().map(|k| c.get(k)).collect::<Vec<_>>(), kept);
        assert!(kept.iter().filter(|x| x.is_some()).count() > 32);
    }
}
