//! The finalized RAP tree (Mysore et al., TACO 2008, §2.1 and the
//! `finalize` step of §3): every range with its counter, and the paper's
//! text dump of the tree.
//!
//! A node's `count` is the events counted at that node itself; its `total`
//! adds every descendant's count. `total` is the estimate of how many
//! events fell in the node's range: a lower bound, short of the truth by at
//! most ε·n (§2.3) because only ancestors can hold events of the range.

use super::engine::Rap;
use serde::Serialize;
use std::io::{self, Write};

/// One range of the tree.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct RangeNode {
    /// Lowest point of the range, per dimension.
    pub lo: Vec<u64>,
    /// Highest point of the range (inclusive), per dimension.
    pub hi: Vec<u64>,
    /// Depth below the root (the root is 0).
    pub depth: u32,
    /// Events counted at this node itself.
    pub count: u64,
    /// Events counted at this node and all its descendants: the estimate
    /// for the range.
    pub total: u64,
    /// Indices of the children in [`RapSnapshot::nodes`]; empty for a
    /// leaf. Children wholly outside the universe are left out.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub children: Vec<u32>,
}

impl RangeNode {
    /// Whether `p` lies in the range.
    pub fn contains(&self, p: &[u64]) -> bool {
        p.iter()
            .zip(self.lo.iter().zip(&self.hi))
            .all(|(x, (lo, hi))| lo <= x && x <= hi)
    }
}

/// The tree and what it cost.
#[derive(Clone, Debug, Serialize)]
pub struct RapSnapshot {
    /// Dimensions of a point.
    pub dims: usize,
    /// Bits per dimension of the universe.
    pub bits: u32,
    /// Children per split.
    pub branching: u32,
    /// The error bound ε.
    pub epsilon: f64,
    /// Height of the tree, log_b(R^dims) rounded up.
    pub levels: u32,
    /// Growth factor q of the merge period.
    pub merge_factor: f64,
    /// Events counted in the tree.
    pub n: u64,
    /// Events whose point lay outside the universe, not counted.
    pub outside: u64,
    /// SplitThreshold at the end, ε·n / levels.
    pub split_threshold: f64,
    /// Live nodes now.
    pub nodes_final: usize,
    /// Most live nodes at any time.
    pub nodes_max: usize,
    /// Live nodes averaged over events.
    pub nodes_avg: f64,
    /// Bytes held by the tree and the merging buffer.
    pub bytes: usize,
    /// Splits performed.
    pub splits: u64,
    /// Merges performed (each folds one node's children).
    pub merges: u64,
    /// Merge batches run.
    pub merge_batches: u64,
    /// Slots of the merging buffer (0 when it is off).
    pub buffer_entries: usize,
    /// Events combined into an existing buffer entry.
    pub buffer_hits: u64,
    /// Buffer entries evicted to the tree on a conflict.
    pub buffer_evictions: u64,
    /// Every range inside the universe, in preorder (the root first, then
    /// each child's subtree in address order).
    pub nodes: Vec<RangeNode>,
}

impl RapSnapshot {
    pub(crate) fn of<const D: usize>(rap: &Rap<D>) -> RapSnapshot {
        let (tree, buffer, outside) = rap.parts();
        let cfg = rap.config();
        let max = if cfg.bits == 64 {
            u64::MAX as u128
        } else {
            (1u128 << cfg.bits) - 1
        };
        let mut nodes: Vec<RangeNode> = Vec::with_capacity(tree.live);
        // (tree index, snapshot parent, depth, lo per dimension)
        let mut stack: Vec<(usize, Option<u32>, u32, [u128; D])> = vec![(0, None, 0, [0; D])];
        while let Some((v, parent, depth, lo)) = stack.pop() {
            let width_bits = (tree.levels - depth) * tree.k;
            let me = nodes.len() as u32;
            let hi: Vec<u64> = lo
                .iter()
                .map(|&l| (l + (1u128 << width_bits) - 1).min(max) as u64)
                .collect();
            nodes.push(RangeNode {
                lo: lo.iter().map(|&l| l as u64).collect(),
                hi,
                depth,
                count: tree.count[v],
                total: 0,
                children: Vec::new(),
            });
            if let Some(p) = parent {
                nodes[p as usize].children.push(me);
            }
            let first = tree.first[v] as usize;
            if first != 0 {
                let child_bits = width_bits - tree.k;
                let mask = (1usize << tree.k) - 1;
                // Pushed in reverse so that children pop in address order.
                for j in (0..tree.b as usize).rev() {
                    let mut clo = lo;
                    for (d, l) in clo.iter_mut().enumerate() {
                        *l += (((j >> (d as u32 * tree.k)) & mask) as u128) << child_bits;
                    }
                    if clo.iter().all(|&l| l <= max) {
                        stack.push((first + j, Some(me), depth + 1, clo));
                    }
                }
            }
        }
        for i in (0..nodes.len()).rev() {
            let t = nodes[i].count
                + nodes[i]
                    .children
                    .iter()
                    .map(|&c| nodes[c as usize].total)
                    .sum::<u64>();
            nodes[i].total = t;
        }
        RapSnapshot {
            dims: D,
            bits: cfg.bits,
            branching: cfg.branching,
            epsilon: cfg.epsilon,
            levels: tree.levels,
            merge_factor: cfg.merge_factor,
            n: tree.n,
            outside,
            split_threshold: tree.split_threshold(),
            nodes_final: tree.live,
            nodes_max: tree.nodes_max,
            nodes_avg: if tree.n == 0 {
                1.0
            } else {
                tree.node_events() as f64 / tree.n as f64
            },
            bytes: rap.bytes(),
            splits: tree.splits,
            merges: tree.merges,
            merge_batches: tree.merge_batches,
            buffer_entries: buffer.map_or(0, |b| b.capacity()),
            buffer_hits: buffer.map_or(0, |b| b.hits),
            buffer_evictions: buffer.map_or(0, |b| b.evictions),
            nodes,
        }
    }

    /// The deepest range containing `p`: the node that counted it last
    /// (indices into [`nodes`](Self::nodes), root first). Empty if `p` is
    /// outside the universe.
    pub fn path(&self, p: &[u64]) -> Vec<u32> {
        let mut path = Vec::new();
        if self.nodes.is_empty() || !self.nodes[0].contains(p) {
            return path;
        }
        let mut v = 0u32;
        loop {
            path.push(v);
            let node = &self.nodes[v as usize];
            match node
                .children
                .iter()
                .find(|&&c| self.nodes[c as usize].contains(p))
            {
                Some(&c) => v = c,
                None => return path,
            }
        }
    }

    /// The estimated number of events in the range of node `i`.
    pub fn estimate(&self, i: usize) -> u64 {
        self.nodes[i].total
    }

    /// Writes the tree as text: one range per line, indented by depth,
    /// with its own count, its total and the total's share of n.
    pub fn dump(&self, out: &mut dyn Write) -> io::Result<()> {
        writeln!(
            out,
            "# RAP tree: n={} epsilon={} branching={} bits={} dims={} nodes={} (max {}) split_threshold={:.3}",
            self.n,
            self.epsilon,
            self.branching,
            self.bits,
            self.dims,
            self.nodes_final,
            self.nodes_max,
            self.split_threshold
        )?;
        writeln!(out, "# range  count  total  share-of-n")?;
        for node in &self.nodes {
            writeln!(
                out,
                "{:indent$}{}  {}  {}  {:.4}%",
                "",
                format_range(&node.lo, &node.hi),
                node.count,
                node.total,
                share(node.total, self.n) * 100.0,
                indent = 2 * node.depth as usize
            )?;
        }
        Ok(())
    }
}

/// `[0x..., 0x...]`, with `×` between dimensions.
pub fn format_range(lo: &[u64], hi: &[u64]) -> String {
    lo.iter()
        .zip(hi)
        .map(|(l, h)| format!("[{l:#x}, {h:#x}]"))
        .collect::<Vec<_>>()
        .join(" × ")
}

/// `part / n`, or 0 when n is 0.
pub(crate) fn share(part: u64, n: u64) -> f64 {
    if n == 0 {
        0.0
    } else {
        part as f64 / n as f64
    }
}

#[cfg(test)]
mod tests {
    use crate::rap::{Rap, RapConfig};

    #[test]
    fn ranges_nest_and_totals_add_up() {
        let mut rap: Rap<1> = Rap::new(RapConfig::with_epsilon(0.05)).unwrap();
        for i in 0..50_000u64 {
            rap.add([(i * 2654435761) % 5000]);
        }
        let s = rap.snapshot();
        assert_eq!(s.nodes[0].lo, vec![0]);
        assert_eq!(s.nodes[0].hi, vec![u64::MAX]);
        assert_eq!(s.nodes[0].total, 50_000);
        assert_eq!(s.nodes.len(), s.nodes_final);
        for n in &s.nodes {
            for &c in &n.children {
                let c = &s.nodes[c as usize];
                assert!(n.lo[0] <= c.lo[0] && c.hi[0] <= n.hi[0]);
                assert_eq!(c.depth, n.depth + 1);
            }
        }
        let path = s.path(&[1234]);
        let leaf = &s.nodes[*path.last().unwrap() as usize];
        assert!(leaf.children.is_empty() && leaf.contains(&[1234]));
        let mut text = Vec::new();
        s.dump(&mut text).unwrap();
        let text = String::from_utf8(text).unwrap();
        assert!(text.contains("[0x0, 0xffffffffffffffff]"));
        assert_eq!(text.lines().count(), s.nodes.len() + 2);
    }

    #[test]
    fn a_short_top_level_stays_inside_the_universe() {
        // 64 bits in levels of 3: the root's children start every 2^63, so
        // only two of its eight children are inside the universe.
        let cfg = RapConfig {
            branching: 8,
            buffer_bytes: None,
            ..RapConfig::default()
        };
        let mut rap: Rap<1> = Rap::new(cfg).unwrap();
        rap.add([u64::MAX]);
        let s = rap.snapshot();
        assert_eq!(s.nodes[0].children.len(), 2);
        let top = &s.nodes[s.nodes[0].children[1] as usize];
        assert_eq!((top.lo[0], top.hi[0]), (1 << 63, u64::MAX));
        let leaf = &s.nodes[*s.path(&[u64::MAX]).last().unwrap() as usize];
        assert_eq!(
            (leaf.lo[0], leaf.hi[0], leaf.count),
            (u64::MAX, u64::MAX, 1)
        );
    }
}
