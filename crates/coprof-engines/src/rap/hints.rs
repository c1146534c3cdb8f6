//! Where each instruction of a code profile was last counted: a software
//! shortcut around the walk down the RAP tree for the PC stream, not part
//! of the paper's mechanism (Mysore et al., TACO 2008), and invisible in
//! its results.
//!
//! A code profile fed runs of basic blocks knows more of each PC than its
//! value: its position in the table of blocks, which never changes (see
//! `coprof_core::Blocks::run_pcs_at`). The engine keeps, per position, the
//! node the PC there was last counted in. That node stays on the PC's path
//! until a merge batch frees nodes (a split only adds nodes below it), so
//! the next event at that PC starts there: at its leaf, most of the time,
//! with no hashing and no other PC's entry in the way, where the tree's
//! own leaf cache, keyed by hashed PCs, holds 4,096 of a large program's
//! tens of thousands of hot instructions. The PCs reach the tree through
//! the merging buffer, which carries each one's position beside it.
//!
//! A merge batch may free a remembered node and reuse its index for
//! another range, so the hints are forgotten at every merge batch (merge
//! batches come at n = 1, q, q², ...: a few dozen in a run). The tree
//! built is the same node for node: debug builds check every count
//! against a walk from the root.

/// Per position of a table of blocks, the tree node its PC was last
/// counted in and that node's depth; unknown positions name the root,
/// which is on every path.
#[derive(Clone, Debug, Default)]
pub(crate) struct LeafHints {
    /// Per position, the node's index (low 32 bits) and depth (high 32).
    nodes: Vec<u64>,
    /// The tree's merge batches when the hints were last right.
    merges_seen: u64,
}

impl LeafHints {
    /// No hints: every position unknown.
    pub(crate) fn new() -> LeafHints {
        LeafHints::default()
    }

    /// Makes room for positions `0..positions`, unknown if new.
    #[inline(always)]
    pub(crate) fn cover(&mut self, positions: usize) {
        if self.nodes.len() < positions {
            self.grow(positions);
        }
    }

    /// [`cover`](Self::cover) when there is not room yet: rare, as blocks
    /// are found.
    #[cold]
    fn grow(&mut self, positions: usize) {
        self.nodes.resize(positions, 0);
    }

    /// The node and depth remembered at `position`: the root (0, 0) if
    /// none.
    #[inline(always)]
    pub(crate) fn get(&self, position: u32) -> (usize, u32) {
        let h = self.nodes[position as usize];
        (h as u32 as usize, (h >> 32) as u32)
    }

    /// Remembers node `v`, at depth `level`, for `position`.
    #[inline(always)]
    pub(crate) fn set(&mut self, position: u32, v: usize, level: u32) {
        self.nodes[position as usize] = v as u64 | (level as u64) << 32;
    }

    /// Forgets every hint if the tree has run a merge batch since they
    /// were made: its count of batches is now `merges`.
    #[inline(always)]
    pub(crate) fn check_merges(&mut self, merges: u64) {
        if self.merges_seen != merges {
            self.nodes.fill(0);
            self.merges_seen = merges;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hints_start_at_the_root_and_are_forgotten_after_a_merge() {
        let mut h = LeafHints::new();
        h.cover(4);
        assert_eq!(h.get(3), (0, 0));
        h.set(3, 0x1234_5678, 17);
        assert_eq!(h.get(3), (0x1234_5678, 17));
        h.cover(2);
        assert_eq!(h.nodes.len(), 4, "covering fewer positions keeps the rest");
        h.check_merges(0);
        assert_eq!(h.get(3), (0x1234_5678, 17), "no merge batch yet");
        h.check_merges(1);
        assert_eq!(h.get(3), (0, 0));
    }
}
