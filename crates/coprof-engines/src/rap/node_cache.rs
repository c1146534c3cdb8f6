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

/// A direct-mapped table of `N` slots from keys to nodes on their path.
#[derive(Clone, Debug)]
pub(crate) struct NodeCache<const D: usize, const N: usize> {
    entries: Box<[Entry<D>; N]>,
}

impl<const D: usize, const N: usize> NodeCache<D, N> {
    /// An empty table of `N` slots, a power of two.
    pub(crate) fn new() -> NodeCache<D, N> {
        const { assert!(N.is_power_of_two()) };
        NodeCache {
            entries: vec![Self::empty(); N]
                .into_boxed_slice()
                .try_into()
                .expect("N entries"),
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
    pub(crate) fn slot(block: &[u64; D]) -> usize {
        let mut h = 0u64;
        for &x in block {
            h = (h.rotate_left(29) ^ x).wrapping_mul(0x9e37_79b9_7f4a_7c15);
        }
        (h >> (64 - N.trailing_zeros())) as usize
    }

    /// The node (index, depth) last recorded for `block`: an ancestor of
    /// the leaves of its points.
    #[inline(always)]
    pub(crate) fn get(&self, block: &[u64; D]) -> Option<(usize, u32)> {
        self.get_at(Self::slot(block), block)
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
        self.put_at(Self::slot(block), block, node, level);
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
        let mut c: NodeCache<1, 64> = NodeCache::new();
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
}
