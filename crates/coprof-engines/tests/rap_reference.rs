//! The RAP engine against a reference written from the paper alone
//! (Mysore et al., TACO 2008, §2.2 and §3.1): a tree of boxed nodes, each
//! event walked from the root, split when its leaf's counter would pass
//! SplitThreshold = ε·n/L, merge batches at n = 1, q, q², ... folding,
//! bottom-up, the children of every node whose subtree holds at most
//! ε·n/L events. No merging buffer, no caches, no hints, no room handed
//! out in advance: the engine's shortcuts (its leaf and block caches, the
//! parts of a leaf's room its positions and cache slots hold) must leave
//! the tree node for node, counter for counter, what this one builds.

use coprof_engines::rap::{Rap, RapConfig, RapSnapshot};
use proptest::prelude::*;

mod common;

/// One range of the reference tree: its counter and, once split, its `b`
/// children in address order.
struct Node {
    count: u64,
    children: Option<Vec<Node>>,
}

impl Node {
    fn leaf() -> Node {
        Node {
            count: 0,
            children: None,
        }
    }
}

/// A one-dimensional RAP tree, straight from the paper.
struct Reference {
    root: Node,
    /// Children per split, and bits of a point consumed per level.
    b: usize,
    k: u32,
    /// Height of the tree: ⌈bits / k⌉.
    levels: u32,
    epsilon: f64,
    merge_factor: f64,
    n: u64,
    next_merge: u64,
    live: usize,
    nodes_max: usize,
    splits: u64,
    merges: u64,
    merge_batches: u64,
}

impl Reference {
    fn new(cfg: &RapConfig) -> Reference {
        Reference {
            root: Node::leaf(),
            b: cfg.branching as usize,
            k: cfg.bits_per_level(1),
            levels: cfg.levels(1),
            epsilon: cfg.epsilon,
            merge_factor: cfg.merge_factor,
            n: 0,
            next_merge: 1,
            live: 1,
            nodes_max: 1,
            splits: 0,
            merges: 0,
            merge_batches: 0,
        }
    }

    /// ε·n/L, as a real number (the merge test) and rounded down (the
    /// split test on integer counters: a count is at most ε·n/L exactly
    /// when it is at most the floor).
    fn split_threshold(&self) -> f64 {
        self.epsilon / self.levels as f64 * self.n as f64
    }

    /// Counts `weight` events at `x` (§2.2.1): walk to the leaf holding
    /// `x`; while adding them would carry the leaf past the threshold,
    /// split it and go on into the child holding `x`; a leaf at the last
    /// level (a single point) takes any count. Then the merge schedule
    /// (§3.1).
    fn add(&mut self, x: u64, weight: u64) {
        self.n += weight;
        let threshold = self.split_threshold() as u64;
        let (b, k, levels) = (self.b, self.k, self.levels);
        let digit = |depth: u32| ((x >> ((levels - 1 - depth) * k)) as usize) & (b - 1);
        let mut node = &mut self.root;
        let mut depth = 0;
        while node.children.is_some() {
            node = &mut node.children.as_mut().unwrap()[digit(depth)];
            depth += 1;
        }
        loop {
            if node.count + weight <= threshold || depth == levels {
                node.count += weight;
                break;
            }
            node.children = Some((0..b).map(|_| Node::leaf()).collect());
            self.splits += 1;
            self.live += b;
            self.nodes_max = self.nodes_max.max(self.live);
            node = &mut node.children.as_mut().unwrap()[digit(depth)];
            depth += 1;
        }
        if self.n >= self.next_merge {
            self.merge_batch();
        }
    }

    /// One batch of merges (§2.2.2), and the time of the next: n·q
    /// rounded up, at least n + 1.
    fn merge_batch(&mut self) {
        let threshold = self.split_threshold();
        let mut merges = 0;
        merge_below(&mut self.root, threshold, &mut merges);
        self.merges += merges;
        self.live -= merges as usize * self.b;
        self.merge_batches += 1;
        let next = (self.next_merge as f64 * self.merge_factor).ceil() as u64;
        self.next_merge = next.max(self.n + 1);
    }

    /// Every range inside a universe whose largest point is `max`, in
    /// preorder, children in address order: (lo, hi, depth, count).
    fn nodes(&self, max: u64) -> Vec<(u64, u64, u32, u64)> {
        let mut out = Vec::new();
        self.walk(&self.root, 0, 0, max as u128, &mut out);
        out
    }

    fn walk(
        &self,
        node: &Node,
        lo: u128,
        depth: u32,
        max: u128,
        out: &mut Vec<(u64, u64, u32, u64)>,
    ) {
        let width = (self.levels - depth) * self.k;
        let hi = (lo + (1u128 << width) - 1).min(max);
        out.push((lo as u64, hi as u64, depth, node.count));
        if let Some(children) = &node.children {
            for (j, child) in children.iter().enumerate() {
                let clo = lo + ((j as u128) << (width - self.k));
                if clo <= max {
                    self.walk(child, clo, depth + 1, max, out);
                }
            }
        }
    }
}

/// Merges under `node`, counting the merges; returns whether `node` is a
/// leaf afterwards. A node whose children are all leaves (after merging
/// below them) folds them in when its count and theirs sum to at most
/// `threshold`.
fn merge_below(node: &mut Node, threshold: f64, merges: &mut u64) -> bool {
    let Some(children) = &mut node.children else {
        return true;
    };
    let mut all_leaves = true;
    let mut sum = node.count;
    for child in children.iter_mut() {
        if merge_below(child, threshold, merges) {
            sum += child.count;
        } else {
            all_leaves = false;
        }
    }
    if all_leaves && sum as f64 <= threshold {
        node.count = sum;
        node.children = None;
        *merges += 1;
        true
    } else {
        false
    }
}

/// What of a snapshot the reference computes too.
fn tree_of(s: &RapSnapshot) -> Vec<(u64, u64, u32, u64)> {
    s.nodes
        .iter()
        .map(|v| (v.lo[0], v.hi[0], v.depth, v.count))
        .collect()
}

/// Points drawn from a few hot values, their neighbours and noise over a
/// span: hot points split their ranges down to single points, then move,
/// so that merges fold what they leave behind, and neighbours share leaves
/// whose room the engine hands out in parts.
fn stream(seed: u64, n: usize, hot: &[u64], span_bits: u32) -> Vec<(u64, u64)> {
    let mut x = seed | 1;
    let mask = if span_bits == 64 {
        u64::MAX
    } else {
        (1u64 << span_bits) - 1
    };
    (0..n)
        .map(|i| {
            common::xorshift(&mut x);
            let phase = hot[(i * hot.len() / n.max(1)) % hot.len()];
            let point = match x % 8 {
                0..=3 => phase,
                4 | 5 => phase ^ (x >> 40 & 0x3f),
                _ => x >> 3 & mask,
            };
            let weight = if x >> 60 == 0 { 1 + (x >> 20) % 300 } else { 1 };
            (point & mask, weight)
        })
        .collect()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn the_engine_builds_the_reference_tree(
        epsilon in common::epsilons(),
        log_b in 1u32..=4,
        bits in prop_oneof![Just(32u32), Just(64)],
        seed in any::<u64>(),
        n in 1usize..40_000,
        hot in proptest::collection::vec(any::<u64>(), 1..6),
        span_bits in 4u32..=64,
        chunk in 1usize..3000,
        checkpoints in proptest::collection::vec(any::<prop::sample::Index>(), 0..3),
    ) {
        // Values through the engine's loops a chunk at a time (as a value
        // profile takes them), one point at a time, and the reference;
        // snapshots along the way settle the parts handed out and must
        // leave the tree as it was.
        let cfg = common::config(epsilon, log_b, false, bits);
        let max = if bits == 64 { u64::MAX } else { (1u64 << bits) - 1 };
        let points = stream(seed, n, &hot, span_bits.min(bits));
        let stops: Vec<usize> = checkpoints.iter().map(|i| i.index(points.len())).collect();
        let mut reference = Reference::new(&cfg);
        let mut chunked: Rap<1> = Rap::new(cfg.clone()).unwrap();
        let mut single: Rap<1> = Rap::new(cfg).unwrap();
        let mut done = 0;
        for part in points.chunks(chunk) {
            for &(x, w) in part {
                reference.add(x, w);
                single.add_points(w, [x]);
            }
            chunked.add_counted(part.iter().map(|&(x, w)| ([x], w)));
            done += part.len();
            if stops.iter().any(|&s| s < done && s >= done - part.len()) {
                let s = chunked.snapshot();
                prop_assert_eq!(tree_of(&s), reference.nodes(max));
            }
        }
        for (name, rap) in [("chunked", &mut chunked), ("single", &mut single)] {
            let s = rap.snapshot();
            prop_assert_eq!(s.n, reference.n, "{}", name);
            prop_assert_eq!(tree_of(&s), reference.nodes(max), "{}", name);
            prop_assert_eq!(
                (s.splits, s.merges, s.merge_batches, s.nodes_final, s.nodes_max),
                (reference.splits, reference.merges, reference.merge_batches, reference.live, reference.nodes_max),
                "{}", name
            );
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    #[test]
    fn a_code_profile_builds_the_reference_tree(
        epsilon in common::epsilons(),
        log_b in 1u32..=3,
        blocks in proptest::collection::vec((0u64..4096, 1usize..24), 1..60),
        runs in common::runs(6000),
        chunk in 1usize..500,
    ) {
        // PCs with their places in a table of blocks (as a code profile
        // fed runs of basic blocks takes them): the engine starts at the
        // node it remembers for each place and counts against the part of
        // its leaf's room the place holds.
        let (table, runs) = common::blocks_and_runs(&blocks, &runs);
        let cfg = common::config(epsilon, log_b, false, 64);
        let mut reference = Reference::new(&cfg);
        let mut positioned: Rap<1> = Rap::new(cfg).unwrap();
        for part in runs.chunks(chunk) {
            for &(first, len, count) in part {
                table[first..first + len].iter().for_each(|&pc| reference.add(pc, count));
            }
            positioned.add_positioned_counted(
                part.iter().map(|&(first, len, count)| (first, &table[first..first + len], count)),
            );
        }
        let s = positioned.snapshot();
        prop_assert_eq!(tree_of(&s), reference.nodes(u64::MAX));
        prop_assert_eq!(
            (s.n, s.splits, s.merges, s.merge_batches, s.nodes_max),
            (reference.n, reference.splits, reference.merges, reference.merge_batches, reference.nodes_max)
        );
    }
}
