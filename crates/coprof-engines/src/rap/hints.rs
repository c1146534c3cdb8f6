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
/// which is on every path. Positions are given as tags, the position plus
/// one: tag 0 is a point with no position, whose hint is always the root.
#[derive(Clone, Debug, Default)]
pub(crate) struct LeafHints {
    /// Per tag, the node's index (low 32 bits) and depth (high 32).
    nodes: Vec<u64>,
}

impl LeafHints {
    /// No hints: every position unknown.
    pub(crate) fn new() -> LeafHints {
        LeafHints::default()
    }

    /// Makes room for tags `0..tags`, unknown if new.
    #[inline(always)]
    pub(crate) fn cover(&mut self, tags: usize) {
        if self.nodes.len() < tags {
            self.grow(tags);
        }
    }

    /// [`cover`](Self::cover) when there is not room yet: rare, as blocks
    /// are found.
    #[cold]
    fn grow(&mut self, tags: usize) {
        self.nodes.resize(tags, 0);
    }

    /// The node and depth remembered for `tag`: the root (0, 0) if none.
    #[inline(always)]
    pub(crate) fn get(&self, tag: u32) -> (usize, u32) {
        let h = self.nodes[tag as usize];
        (h as u32 as usize, (h >> 32) as u32)
    }

    /// Remembers node `v`, at depth `level`, for `tag` (unless 0, no
    /// position).
    #[inline(always)]
    pub(crate) fn set(&mut self, tag: u32, v: usize, level: u32) {
        if tag != 0 {
            self.nodes[tag as usize] = v as u64 | (level as u64) << 32;
        }
    }

    /// Forgets every hint: the tree calls it at each merge batch, which
    /// may free a remembered node.
    pub(crate) fn forget(&mut self) {
        self.nodes.fill(0);
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
        h.set(0, 5, 1);
        assert_eq!(h.get(0), (0, 0), "tag 0, no position, stays at the root");
        h.cover(2);
        assert_eq!(h.nodes.len(), 4, "covering fewer tags keeps the rest");
        assert_eq!(h.get(3), (0x1234_5678, 17));
        h.forget();
        assert_eq!(h.get(3), (0, 0));
    }
}
