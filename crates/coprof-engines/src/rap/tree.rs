//! The RAP tree itself: splits (§2.2.1), batched merges (§2.2.2, §3.1) and
//! the multibit-trie layout (§3.2.2) of Mysore et al., TACO 2008, for points
//! of `D` dimensions (§5.5).
//!
//! Every node is a range of the universe with one counter; the root covers
//! the whole universe. An event increments only the smallest range that
//! contains it: the leaf on its path (§2.1). A node's children divide its
//! range into `b` equal, aligned parts, so a node's range is implied by its
//! path and the tree is stored as a trie: a node holds its counter and the
//! index of its first child, and the `b` children of a node sit next to each
//! other, as in the paper's hardware layout (§3.2.2). Child indices and
//! counters live in two arrays, so that a walk down the tree reads only the
//! 4-byte indices and touches one counter, at the leaf.
//!
//! **Split rule.** SplitThreshold = ε·n / log_b(R) with n the events so far
//! (§2.2.1). When adding an event (or a buffered weight) would carry a
//! leaf's counter past SplitThreshold, the leaf gets `b` children starting at
//! zero, keeps its own count, and the event is counted in the child that
//! contains it, which may split in turn. So no counter ever exceeds the
//! threshold in force when it stopped counting, which is what the paper's
//! error bound (§2.3) rests on: a range's count misses only events counted
//! at its ancestors, at most log_b(R) of them each holding at most
//! ε·n / log_b(R). (Incrementing first and splitting after would let every
//! level hold one event more than the threshold, an error of ε·n + log_b R.)
//!
//! **Merge rule.** A node whose children are all leaves folds them back in
//! when its own count plus theirs is at most SplitThreshold: the counts are
//! added to the node, never dropped (§2.2.2). Merges run in batches, walking
//! the tree bottom-up, when n reaches 1, q, q², ...: a merge period that
//! grows geometrically by q (§3.1), so the total merge work is O(log n)
//! walks of a tree of bounded size.
//!
//! **Leaf cache.** A point seen recently goes straight to the leaf it was
//! last counted in, when that node is still a leaf: a stream that repeats
//! its points, such as a program's PCs, skips the walk entirely.
//!
//! **Block cache.** Points missing from the leaf cache start lower down.
//! All points of one aligned block of 2^8 points (the range of a node
//! [`BLOCK_BITS`] bits above the bottom of the tree) share their ancestors
//! down to that node. The tree remembers, per block, the deepest node at
//! most that deep on the block's path, and a walk starts there instead of
//! at the root: four levels instead of up to 32 (the software form of the
//! paper's pipelined walk, §3.2.2). A split only adds nodes below a
//! remembered node, so it stays on its points' path; a merge batch frees
//! nodes, and both tables forget the entries that name them. The node reached is the same as from the
//! root; debug builds check it on every event. Both caches are
//! `node_cache` tables, software shortcuts that leave the tree built the
//! same node for node.
//!
//! **Region cache.** A value stream spread thinly over many blocks, such
//! as the words of its tables that bzip2 loads while it decompresses,
//! misses the block cache on many walks, each of which would start at the
//! root. The tree also remembers, per aligned region of 2^24 points
//! ([`REGION_BITS`]), the deepest node at most that deep on the region's
//! path, kept and forgotten like a block's; a walk that misses its block
//! starts there, some twenty levels down, and remembers its block's node
//! on the way.
//!
//! **Walk without guesses.** From a remembered node [`BLOCK_BITS`] bits
//! above the bottom, the walk takes a fixed number of steps and stays at
//! the leaf once there, choosing the next node with arithmetic instead of
//! a branch: where a walk ends varies from point to point and cannot be
//! predicted, and a wrong guess would throw away the processor's work on
//! the following events.

use super::config::RapConfig;
use super::grants::Grants;
use super::hints::LeafHints;
use super::node_cache::NodeCache;

/// Bits of the blocks whose nodes the block cache remembers: the node that
/// covers 2^8 points (256 one-dimensional points, 16 × 16 in two
/// dimensions), a few levels above the single points. Larger blocks mean
/// longer walks, smaller ones more blocks than the cache holds; 8 was the
/// fastest of 4, 6, 8, 10 and 12 on the Zipf value stream of
/// `benches/rap.rs`.
const BLOCK_BITS: u32 = 8;

/// Entries of the block cache at first: 4,096, 64 KiB for one-dimensional
/// points. It doubles, up to [`BLOCK_CACHE_MAX`], while more than one tree
/// walk in [`BLOCK_MISS_RATE`] events finds no entry for its block: a
/// program's PCs need a few thousand blocks, a value stream spread over
/// many ranges tens of thousands.
const BLOCK_CACHE_ENTRIES: usize = 4096;

/// The most entries the block cache grows to: 32,768, 512 KiB for
/// one-dimensional points.
const BLOCK_CACHE_MAX: usize = 32768;

/// The block cache doubles when more than one event in this many missed
/// it since the last review; a miss walks from the root, 32 levels for
/// 64-bit points, which costs as much as some 30 events that hit.
const BLOCK_MISS_RATE: u64 = 64;

/// Bits of the regions whose nodes the region cache remembers: the node
/// that covers 2^24 points (16 M one-dimensional points, 4,096 × 4,096 in
/// two dimensions), twelve levels above the single points for b = 4. A
/// walk whose block the block cache misses starts there rather than at
/// the root. 24 was faster than 16 and 32 on the load values of bzip2
/// decompressing (docs/PERFORMANCE.md).
const REGION_BITS: u32 = 24;

/// Entries of the region cache: 256, 4 KiB for one-dimensional points. A
/// program's values lie in a few regions (small numbers, the heap, the
/// stack); 4,096 entries were no faster.
const REGION_CACHE_ENTRIES: usize = 256;

/// Events between two reviews of the block cache's size.
const CACHE_REVIEW_EVENTS: u64 = 1 << 16;

/// Entries of the leaf cache: 4,096, 64 KiB for one-dimensional points.
const LEAF_CACHE_ENTRIES: usize = 4096;

/// The deepest tree: 64 levels (b = 2 over one 64-bit dimension; more
/// dimensions need a larger b, see [`RapConfig::levels`]).
const MAX_LEVELS: usize = 64;

/// The tree of counters over a `D`-dimensional universe.
#[derive(Clone, Debug)]
pub(crate) struct Tree<const D: usize> {
    /// Per node, the index of its first child; 0 for a leaf (the root, at
    /// index 0, is nobody's child).
    pub(crate) first: Vec<u32>,
    /// Per node, its counter.
    pub(crate) count: Vec<u64>,
    /// First indices of child blocks freed by merges, for reuse.
    free: Vec<u32>,
    /// Children per split.
    pub(crate) b: u32,
    /// Bits of each dimension consumed per level.
    pub(crate) k: u32,
    /// The low `k` bits set: one dimension's digit at a level.
    digit_mask: u64,
    /// Height of the tree: log_b(R^D), rounded up.
    pub(crate) levels: u32,
    /// Per depth, how far a coordinate is shifted right to bring the
    /// digit that chooses a child at that depth to the bottom.
    shift: [u32; MAX_LEVELS],
    /// Depth of the nodes of [`BLOCK_BITS`] bits whose ancestors the
    /// block cache remembers.
    block_depth: u32,
    /// The bits of a coordinate that name its block at `block_depth`.
    block_mask: u64,
    /// `shift` at each depth from `block_depth` down to the last level:
    /// the first `block_steps` entries (at most [`BLOCK_BITS`], for one
    /// bit per level).
    block_shifts: [u32; BLOCK_BITS as usize],
    block_steps: usize,
    /// Depth of the nodes of [`REGION_BITS`] bits whose ancestors the
    /// region cache remembers.
    region_depth: u32,
    /// The bits of a coordinate that name its region at `region_depth`.
    region_mask: u64,
    eps_over_levels: f64,
    merge_factor: f64,
    next_merge: u64,
    /// `threshold_at(n)`, kept while `n` is below `threshold_until`: the
    /// threshold grows by one every L/ε events, so it is recomputed then
    /// and not on every event.
    threshold: u64,
    /// The first event count at which the threshold exceeds `threshold`.
    threshold_until: u64,
    /// The smaller of `threshold_until` and `next_merge`: below it, an
    /// event that splits nothing needs neither (see [`Tree::add`]).
    next_check: u64,
    /// Events counted in the tree.
    pub(crate) n: u64,
    /// Live nodes (the root plus every allocated child block).
    pub(crate) live: usize,
    pub(crate) nodes_max: usize,
    /// Sum over the events up to `node_events_until` of the live nodes
    /// when each was counted, for the average; the events after it were
    /// all counted with `live` nodes (see [`Tree::node_events`]).
    node_events: u128,
    node_events_until: u64,
    pub(crate) splits: u64,
    pub(crate) merges: u64,
    pub(crate) merge_batches: u64,
    /// Per block of points, the deepest node on its path at most
    /// `block_depth` deep.
    blocks: NodeCache<D>,
    /// Per region of points, the deepest node on its path at most
    /// `region_depth` deep: where a walk whose block the block cache
    /// misses starts.
    regions: NodeCache<D>,
    /// Walks that found no entry for their block since the last review.
    block_misses: u64,
    /// The event count at which the block cache's size is reviewed.
    cache_review_at: u64,
    /// Per recent point, the leaf it was counted in.
    leaves: NodeCache<D>,
    /// Room of leaves handed out to the positions of a code profile:
    /// counted in the leaves' counters before it is used.
    grants: Grants,
    /// Per position of a code profile, the node its PC was last counted
    /// in: forgotten at every merge batch.
    hints: LeafHints,
}

impl<const D: usize> Tree<D> {
    /// An empty tree: the root alone. `config` must have been validated.
    pub(crate) fn new(config: &RapConfig) -> Tree<D> {
        let levels = config.levels(D);
        let k = config.bits_per_level(D);
        let mut shift = [0; MAX_LEVELS];
        for (level, s) in shift.iter_mut().enumerate().take(levels as usize) {
            *s = (levels - 1 - level as u32) * k;
        }
        // The depth of the nodes that cover 2^bits points, and the bits of
        // a coordinate that name such a node.
        let depth_of = |bits: u32| levels.saturating_sub(bits.div_ceil(k * D as u32));
        let mask_at = |depth: u32| u64::MAX.checked_shl((levels - depth) * k).unwrap_or(0);
        let block_depth = depth_of(BLOCK_BITS);
        let block_steps = (levels - block_depth) as usize;
        let mut block_shifts = [0; BLOCK_BITS as usize];
        block_shifts[..block_steps].copy_from_slice(&shift[block_depth as usize..levels as usize]);
        let block_mask = mask_at(block_depth);
        let region_depth = depth_of(REGION_BITS);
        let region_mask = mask_at(region_depth);
        Tree {
            shift,
            block_depth,
            block_mask,
            block_shifts,
            block_steps,
            region_depth,
            region_mask,
            first: vec![0],
            count: vec![0],
            free: Vec::new(),
            b: config.branching,
            k,
            digit_mask: (1u64 << k) - 1,
            levels,
            eps_over_levels: config.epsilon / levels as f64,
            merge_factor: config.merge_factor,
            next_merge: 1,
            threshold: 0,
            threshold_until: 0,
            next_check: 0,
            n: 0,
            live: 1,
            nodes_max: 1,
            node_events: 0,
            node_events_until: 0,
            splits: 0,
            merges: 0,
            merge_batches: 0,
            blocks: NodeCache::new(BLOCK_CACHE_ENTRIES),
            regions: NodeCache::new(REGION_CACHE_ENTRIES),
            block_misses: 0,
            cache_review_at: CACHE_REVIEW_EVENTS,
            leaves: NodeCache::new(LEAF_CACHE_ENTRIES),
            grants: Grants::with_nodes(1),
            hints: LeafHints::new(),
        }
    }

    /// Makes room for the tags `0..tags` of [`add_run_hinted`](Self::add_run_hinted).
    #[inline(always)]
    pub(crate) fn cover_tags(&mut self, tags: usize) {
        self.hints.cover(tags);
        self.grants.cover(tags);
    }

    /// Takes back the room the leaves gave to positions and did not see
    /// used, so that every counter holds its events alone: before
    /// anything reads the counters (see [`Grants`]).
    pub(crate) fn settle_grants(&mut self) {
        let count = &mut self.count;
        self.grants.settle_all(|v, unused| count[v] -= unused);
    }

    /// SplitThreshold for the events counted so far (§2.2.1).
    #[inline]
    pub(crate) fn split_threshold(&self) -> f64 {
        self.eps_over_levels * self.n as f64
    }

    /// The most events a node may hold when `n` events have been counted:
    /// SplitThreshold rounded down, so that counters compare as integers
    /// (a count `c` is at most ε·n/L exactly when it is at most its floor).
    #[inline(always)]
    fn threshold_at(&self, n: u64) -> u64 {
        (self.eps_over_levels * n as f64) as u64
    }

    /// `threshold_at(self.n)`, from the kept value while it holds.
    #[inline(always)]
    fn threshold_now(&mut self) -> u64 {
        if self.n >= self.threshold_until {
            self.refresh_threshold();
        }
        debug_assert_eq!(self.threshold, self.threshold_at(self.n));
        self.threshold
    }

    /// Recomputes the kept threshold and the event count up to which it
    /// holds: the first m > n with `threshold_at(m)` larger, found from
    /// the real quotient and then corrected by single steps for rounding
    /// (`threshold_at` never decreases as m grows).
    #[cold]
    fn refresh_threshold(&mut self) {
        let t = self.threshold_at(self.n);
        let mut m = (((t + 1) as f64 / self.eps_over_levels).ceil() as u64).max(self.n + 1);
        while self.threshold_at(m) <= t && m < u64::MAX {
            m += 1;
        }
        while m - 1 > self.n && self.threshold_at(m - 1) > t {
            m -= 1;
        }
        self.threshold = t;
        self.threshold_until = m;
        self.set_next_check();
    }

    /// The first event count at which the threshold, the merge schedule or
    /// the caches' review is due.
    fn set_next_check(&mut self) {
        self.next_check = self
            .threshold_until
            .min(self.next_merge)
            .min(self.cache_review_at);
    }

    /// Doubles the block cache if too many walks missed it since the last
    /// review (and it may still grow), and sets the next review.
    #[cold]
    fn review_caches(&mut self) {
        let events = self.n + CACHE_REVIEW_EVENTS - self.cache_review_at;
        if self.block_misses * BLOCK_MISS_RATE > events && self.blocks.slots() < BLOCK_CACHE_MAX {
            self.blocks.grow();
        }
        self.block_misses = 0;
        self.cache_review_at = self.n + CACHE_REVIEW_EVENTS;
        self.set_next_check();
    }

    /// The sum over events of the live nodes when each was counted. Only
    /// splits and merges change the number of live nodes, so it is brought
    /// up to date there rather than at every event.
    pub(crate) fn node_events(&self) -> u128 {
        self.node_events + self.live as u128 * (self.n - self.node_events_until) as u128
    }

    /// Charges the events up to the `n`-th with the nodes live now, before
    /// a split or merge changes them.
    fn account_nodes(&mut self, n: u64) {
        self.node_events += self.live as u128 * (n - self.node_events_until) as u128;
        self.node_events_until = n;
    }

    /// Which of a node's children at depth `level` contains `p`: the
    /// level's `k` bits of every dimension, dimension 0 lowest.
    #[inline(always)]
    pub(crate) fn child_index(&self, p: &[u64; D], level: u32) -> usize {
        self.digit(p, self.shift[level as usize])
    }

    /// The `k` bits of every dimension of `p` at `shift`, dimension 0
    /// lowest (shifts wrap modulo 64).
    #[inline(always)]
    fn digit(&self, p: &[u64; D], shift: u32) -> usize {
        let mut idx = 0usize;
        for (d, x) in p.iter().enumerate() {
            idx |= ((x.wrapping_shr(shift) & self.digit_mask) as usize) << (d as u32 * self.k);
        }
        idx
    }

    /// The block of `p`: its coordinates with the bits below the block
    /// depth cleared.
    #[inline(always)]
    fn block_of(&self, p: &[u64; D]) -> [u64; D] {
        p.map(|x| x & self.block_mask)
    }

    /// The leaf containing `p` and its depth, walking from the root.
    #[cfg(debug_assertions)]
    fn leaf_from_root(&self, p: &[u64; D]) -> (usize, u32) {
        let (mut v, mut level) = (0usize, 0u32);
        while self.first[v] != 0 {
            v = self.first[v] as usize + self.child_index(p, level);
            level += 1;
        }
        (v, level)
    }

    /// Counts `weight` events at point `p` (which must lie in the
    /// universe).
    ///
    /// Most events change nothing but one counter: their leaf is in the
    /// leaf cache, or four steps below their block's node, and has room
    /// for them, and nothing is due: neither a new threshold, nor a merge
    /// batch, nor a review of the caches' sizes.
    /// Those are counted here with nothing else on the way; every other
    /// event takes [`add_walk`](Self::add_walk), which does everything.
    /// Both count the same leaf.
    ///
    /// Not inlined: the callers' loops that mostly do something else (the
    /// merging buffer's, when it combines most events) stay small.
    #[inline(never)]
    pub(crate) fn add(&mut self, p: &[u64; D], weight: u64) {
        self.add_inline(p, weight)
    }

    /// [`add`](Self::add), inlined in loops over many points.
    #[inline(always)]
    fn add_inline(&mut self, p: &[u64; D], weight: u64) {
        let n = self.n + weight;
        if n < self.next_check && self.count_cached(p, weight, self.threshold) {
            self.n = n;
        } else {
            self.add_walk(p, weight);
        }
    }

    /// Counts `weight` events at `p` in its leaf if a cache knows the leaf
    /// and the leaf has room for them under `threshold`; returns whether
    /// it did (the caller then adds them to `n`). The caller must have
    /// checked that nothing is due before `n` grows by `weight`.
    #[inline(always)]
    fn count_cached(&mut self, p: &[u64; D], weight: u64, threshold: u64) -> bool {
        let slot = self.leaves.slot(p);
        match self.leaves.get_at(slot, p) {
            Some((v, level)) => {
                self.first[v] == 0 && self.count_here(p, weight, v, level, threshold)
            }
            None => {
                let Some((v, level)) = self.blocks.get(&self.block_of(p)) else {
                    return false;
                };
                // The block's node, or the leaf above the block depth that
                // holds the whole block, if still one.
                let leaf = if level == self.block_depth {
                    Some(self.descend(p, v))
                } else {
                    (self.first[v] == 0).then_some((v, level))
                };
                match leaf {
                    Some((v, level)) if self.count_here(p, weight, v, level, threshold) => {
                        self.leaves.put_at(slot, p, v, level);
                        true
                    }
                    _ => false,
                }
            }
        }
    }

    /// [`add`](Self::add) of each point with its weight, in order (the
    /// third member of each item, a position for
    /// [`add_run_hinted`](Self::add_run_hinted), is not used). The
    /// event count and the limits the fast path tests it against stay in
    /// registers while events only count in cached leaves: kept in the
    /// tree, they would be stored and loaded again for every event, a
    /// dependency from each event to the next.
    pub(crate) fn add_run(&mut self, items: &[([u64; D], u64, u32)]) {
        let mut items = items.iter();
        loop {
            let (mut n, next_check, threshold) = (self.n, self.next_check, self.threshold);
            let slow = loop {
                let Some((p, weight, _)) = items.next() else {
                    break None;
                };
                let m = n + weight;
                if m < next_check && self.count_cached(p, *weight, threshold) {
                    n = m;
                } else {
                    break Some((p, *weight));
                }
            };
            self.n = n;
            match slow {
                Some((p, weight)) => self.add_walk(p, weight),
                None => return,
            }
        }
    }

    /// [`add_run`](Self::add_run) of points that each have a tag, their
    /// position plus one (the third member of each item, covered by
    /// [`cover_tags`](Self::cover_tags)): each is counted against
    /// its position's part of its leaf's room while that lasts (see
    /// [`Grants`]); else it starts at the node its tag names instead of
    /// the leaf cache's, leaves the leaf it was counted in there (see
    /// [`LeafHints`]), and gets a new part.
    pub(crate) fn add_run_hinted(&mut self, items: &[([u64; D], u64, u32)]) {
        let mut items = items.iter();
        loop {
            let (mut n, next_check) = (self.n, self.next_check);
            let slow = loop {
                let Some(&(ref p, weight, tag)) = items.next() else {
                    break None;
                };
                let m = n + weight;
                if m < next_check && self.grants.take(tag, weight) {
                    n = m;
                } else {
                    break Some((p, weight, tag));
                }
            };
            self.n = n;
            let Some((p, weight, tag)) = slow else {
                return;
            };
            let (v, level) = self.hints.get(tag);
            if self.n + weight < self.next_check
                && self.first[v] == 0
                && self.count_here(p, weight, v, level, self.threshold)
            {
                self.n += weight;
                self.give(tag, v, level);
                continue;
            }
            // None: a merge batch ran, which forgot the hints.
            if let Some((v, level)) = self.add_walk_from(p, weight, v, level) {
                self.hints.set(tag, v, level);
                self.give(tag, v, level);
            }
        }
    }

    /// Counts `weight` events of `tag` against its position's part, when
    /// it holds that many and nothing is due before the count of events,
    /// `n` (the tree's, kept by the caller), grows by `weight`; returns
    /// whether it did.
    #[inline(always)]
    pub(crate) fn take_granted(&mut self, n: &mut u64, tag: u32, weight: u64) -> bool {
        let m = *n + weight;
        if m < self.next_check && self.grants.take(tag, weight) {
            *n = m;
            true
        } else {
            false
        }
    }

    /// Gives `tag` (unless 0, no position) a part of the room of its leaf
    /// `v`, at depth `level`, under the threshold now (see [`Grants`]).
    #[inline]
    fn give(&mut self, tag: u32, v: usize, level: u32) {
        if tag == 0 {
            return;
        }
        let room = if level == self.levels {
            u64::MAX
        } else {
            self.threshold.saturating_sub(self.count[v])
        };
        self.count[v] += self.grants.give(tag, v, room);
    }

    /// Counts `weight` events in `v`, `p`'s leaf at depth `level`, if that
    /// splits nothing (the caller then adds them to `n`); returns whether
    /// it did.
    #[inline(always)]
    fn count_here(
        &mut self,
        p: &[u64; D],
        weight: u64,
        v: usize,
        level: u32,
        threshold: u64,
    ) -> bool {
        #[cfg(debug_assertions)]
        debug_assert_eq!((v, level), self.leaf_from_root(p));
        let _ = p;
        let c = self.count[v] + weight;
        let fits = c <= threshold || level == self.levels;
        if fits {
            self.count[v] = c;
        }
        fits
    }

    /// [`add`](Self::add) for any event: walks from the best node the
    /// caches know, splits, and runs the merge schedule.
    #[inline(never)]
    fn add_walk(&mut self, p: &[u64; D], weight: u64) {
        self.add_walk_leaf(p, weight);
    }

    /// [`add_walk`](Self::add_walk), returning the leaf the events were
    /// counted in and its depth, or `None` when a merge batch ran after
    /// them.
    #[inline(always)]
    fn add_walk_leaf(&mut self, p: &[u64; D], weight: u64) -> Option<(usize, u32)> {
        self.review_if_due(weight);
        if let Some((v, level)) = self.leaves.get(p) {
            if self.first[v] == 0 {
                let leaf = self.count_at(p, weight, v, level, None, None);
                if let Some((leaf, depth)) = leaf {
                    if leaf != v {
                        self.leaves.put(p, leaf, depth);
                    }
                }
                return leaf;
            }
        }
        let block = self.block_of(p);
        let leaf = match self.blocks.get(&block) {
            Some((v, level)) if level == self.block_depth => {
                let (v, level) = self.descend(p, v);
                self.count_at(p, weight, v, level, None, None)
            }
            Some((v, level)) => self.count_at(p, weight, v, level, Some(&block), None),
            None => {
                self.block_misses += 1;
                // From the region's node, or the root; a region
                // remembered while the tree was shallower is remembered
                // again, deeper.
                let region = p.map(|x| x & self.region_mask);
                let (v, level) = self.regions.get(&region).unwrap_or((0, 0));
                let refresh = (level < self.region_depth).then_some(&region);
                self.count_at(p, weight, v, level, Some(&block), refresh)
            }
        };
        if let Some((v, level)) = leaf {
            self.leaves.put(p, v, level);
        }
        leaf
    }

    /// [`add_walk_leaf`](Self::add_walk_leaf) from `v`, a node on `p`'s
    /// path at depth `level` that a hint named: the walk starts there,
    /// unless it is the root (no hint), when the caches may know better.
    #[inline(never)]
    fn add_walk_from(
        &mut self,
        p: &[u64; D],
        weight: u64,
        v: usize,
        level: u32,
    ) -> Option<(usize, u32)> {
        if v == 0 {
            return self.add_walk_leaf(p, weight);
        }
        self.review_if_due(weight);
        self.count_at(p, weight, v, level, None, None)
    }

    /// Reviews the caches' sizes if counting `weight` more events reaches
    /// the count at which the review is due.
    #[inline(always)]
    fn review_if_due(&mut self, weight: u64) {
        if self.n + weight >= self.cache_review_at {
            self.review_caches();
        }
    }

    /// The leaf that contains `p` and its depth, from `v`, its ancestor
    /// at the block depth: a walk of exactly `levels - block_depth` steps
    /// that stays put once it reaches a leaf. No branch depends on the
    /// tree's shape, so the processor does not mispredict where the walk
    /// ends and can start on the next event while this one's loads are in
    /// flight. The usual four steps (b = 4, one dimension) are unrolled.
    #[inline(always)]
    fn descend(&self, p: &[u64; D], v: usize) -> (usize, u32) {
        match self.block_steps {
            4 => self.descend_by(p, v, &self.block_shifts[..4]),
            n => self.descend_by(p, v, &self.block_shifts[..n]),
        }
    }

    /// [`descend`](Self::descend) with the shifts of the digits at each
    /// level below the block depth. A walk still going at step `i` is at
    /// depth `block_depth + i`, so the walks share the shifts.
    #[inline(always)]
    fn descend_by(&self, p: &[u64; D], mut v: usize, shifts: &[u32]) -> (usize, u32) {
        let mut level = self.block_depth;
        for &shift in shifts {
            let first = self.first[v] as usize;
            let inner = first != 0;
            let child = first + self.digit(p, shift);
            v = if inner { child } else { v };
            level += inner as u32;
        }
        (v, level)
    }

    /// Counts `weight` events at `p`, starting from `v`, an ancestor of
    /// `p`'s leaf at depth `level`: the rest of the walk, the splits
    /// (§2.2.1) and the merge schedule (§3.1), remembering the nodes of
    /// `p`'s `block` and `region`, when given, for the next walks: the
    /// deepest on the path at most the block depth and the region depth
    /// deep. Returns the leaf the events were counted in and its depth, or
    /// `None` when a merge batch ran after them (that leaf may be gone, so
    /// nothing is remembered).
    #[inline(always)]
    fn count_at(
        &mut self,
        p: &[u64; D],
        weight: u64,
        mut v: usize,
        mut level: u32,
        block: Option<&[u64; D]>,
        region: Option<&[u64; D]>,
    ) -> Option<(usize, u32)> {
        self.n += weight;
        let threshold = self.threshold_now();
        let (mut jump, mut deep) = ((v, level), (v, level));
        loop {
            let first = self.first[v];
            if first == 0 {
                break;
            }
            v = first as usize + self.child_index(p, level);
            level += 1;
            if level <= self.block_depth {
                jump = (v, level);
            }
            if level <= self.region_depth {
                deep = (v, level);
            }
        }
        #[cfg(debug_assertions)]
        debug_assert_eq!((v, level), self.leaf_from_root(p));
        loop {
            let c = self.count[v] + weight;
            if c <= threshold || level == self.levels {
                self.count[v] = c;
                break;
            }
            if self.grants.has_given(v) {
                // The counter holds room given out: the leaf may have
                // room after all.
                self.count[v] -= self.grants.settle(v);
                continue;
            }
            self.account_nodes(self.n - weight);
            let first = self.alloc_block();
            self.first[v] = first;
            self.splits += 1;
            v = first as usize + self.child_index(p, level);
            level += 1;
            if level <= self.block_depth {
                jump = (v, level);
            }
            if level <= self.region_depth {
                deep = (v, level);
            }
        }
        if self.n >= self.next_merge {
            self.merge_batch();
            return None;
        }
        if let Some(block) = block {
            self.blocks.put(block, jump.0, jump.1);
        }
        if let Some(region) = region {
            self.regions.put(region, deep.0, deep.1);
        }
        Some((v, level))
    }

    fn alloc_block(&mut self) -> u32 {
        self.live += self.b as usize;
        self.nodes_max = self.nodes_max.max(self.live);
        if let Some(first) = self.free.pop() {
            let range = first as usize..(first + self.b) as usize;
            self.first[range.clone()].fill(0);
            self.count[range].fill(0);
            return first;
        }
        let first = self.first.len();
        assert!(
            first + self.b as usize <= u32::MAX as usize,
            "RAP tree exceeds 2^32 nodes"
        );
        self.first.resize(first + self.b as usize, 0);
        self.count.resize(first + self.b as usize, 0);
        self.grants.cover_nodes(self.first.len());
        first as u32
    }

    /// One batch of merges over the whole tree, bottom-up (§2.2.2, §3.1),
    /// and the time of the next batch.
    pub(crate) fn merge_batch(&mut self) {
        self.settle_grants();
        self.hints.forget();
        self.account_nodes(self.n);
        let threshold = self.split_threshold();
        let freed_from = self.free.len();
        self.merge_below(0, threshold);
        self.merge_batches += 1;
        self.forget_freed(freed_from);
        let next = (self.next_merge as f64 * self.merge_factor).ceil() as u64;
        self.next_merge = next.max(self.n + 1);
        self.set_next_check();
    }

    /// Empties the caches' entries that name a node freed by the merge
    /// batch, whose child blocks are `free[from..]`: its index may be
    /// reused for another range. Every other entry stays right: a node
    /// that survives keeps its range, so it is still on its points' path,
    /// and a leaf that survives is still a leaf (merges only fold children
    /// into their parent). Keeping them spares the next events a walk
    /// from the root each.
    fn forget_freed(&mut self, from: usize) {
        if self.free.len() == from {
            return;
        }
        let mut freed = vec![false; self.first.len()];
        for &first in &self.free[from..] {
            freed[first as usize..(first + self.b) as usize].fill(true);
        }
        self.blocks.forget(|v| freed[v]);
        self.regions.forget(|v| freed[v]);
        self.leaves.forget(|v| freed[v]);
    }

    /// Merges under `v`; returns whether `v` is a leaf afterwards.
    fn merge_below(&mut self, v: usize, threshold: f64) -> bool {
        let first = self.first[v] as usize;
        if first == 0 {
            return true;
        }
        let mut all_leaves = true;
        let mut sum = self.count[v];
        for c in first..first + self.b as usize {
            if self.merge_below(c, threshold) {
                sum += self.count[c];
            } else {
                all_leaves = false;
            }
        }
        if all_leaves && sum as f64 <= threshold {
            self.count[v] = sum;
            self.first[v] = 0;
            self.free.push(first as u32);
            self.live -= self.b as usize;
            self.merges += 1;
            true
        } else {
            false
        }
    }

    /// Bytes held by the tree: the node array and the free list, at their
    /// capacity.
    pub(crate) fn bytes(&self) -> usize {
        self.first.capacity() * std::mem::size_of::<u32>()
            + self.count.capacity() * std::mem::size_of::<u64>()
            + self.free.capacity() * std::mem::size_of::<u32>()
            + self.blocks.bytes()
            + self.regions.bytes()
            + self.leaves.bytes()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tree(epsilon: f64) -> Tree<1> {
        Tree::new(&RapConfig::with_epsilon(epsilon))
    }

    fn sum(t: &Tree<1>) -> u64 {
        fn walk(t: &Tree<1>, v: usize) -> u64 {
            let mut s = t.count[v];
            if t.first[v] != 0 {
                for c in 0..t.b as usize {
                    s += walk(t, t.first[v] as usize + c);
                }
            }
            s
        }
        walk(t, 0)
    }

    #[test]
    fn first_event_goes_to_a_single_point_leaf() {
        // With n = 1 the threshold is below one event, so the event splits
        // its way down to a leaf of one point.
        let mut t = tree(0.01);
        t.add(&[0xdead_beef], 1);
        assert_eq!(t.count[0], 0);
        assert_eq!(t.splits, 32);
        assert_eq!(t.live, 1 + 32 * 4);
        assert_eq!(sum(&t), 1);
    }

    #[test]
    fn counters_stay_under_the_threshold_and_sum_to_n() {
        let mut t = tree(0.1);
        for i in 0..100_000u64 {
            t.add(&[(i * 7919) % 1000], 1);
        }
        assert_eq!(sum(&t), 100_000);
        let threshold = t.split_threshold();
        for (i, (&first, &count)) in t.first.iter().zip(&t.count).enumerate() {
            if first != 0 {
                assert!(count as f64 <= threshold, "node {i} holds {count}");
            }
        }
    }

    #[test]
    fn merges_fold_a_hot_point_that_moved_away() {
        let mut t = tree(0.1);
        for _ in 0..1000 {
            t.add(&[5], 1);
        }
        let deep = t.live;
        assert!(deep > 100);
        // The old leaf's 1000 events stop justifying its chain once
        // ε·n / 32 ≥ 1000, i.e. n ≥ 320,000.
        for _ in 0..400_000 {
            t.add(&[u64::MAX - 5], 1);
        }
        t.merge_batch();
        assert!(t.merges > 0);
        assert_eq!(sum(&t), 401_000);
        // The old point's chain is folded away: about one chain remains.
        assert!(t.live < deep + 20, "{} nodes", t.live);
    }

    #[test]
    fn the_kept_threshold_is_the_computed_one_at_every_count() {
        for epsilon in [0.3, 0.1, 0.01, 0.0037, 1e-6] {
            let mut t = tree(epsilon);
            let mut n = 0u64;
            while n < 200_000 {
                // Steps of 1 to 13 events, as weighted adds would make.
                n += 1 + n % 13;
                t.n = n;
                assert_eq!(
                    t.threshold_now(),
                    t.threshold_at(n),
                    "ε = {epsilon}, n = {n}"
                );
                assert!(t.threshold_until > n);
                assert!(t.threshold_at(t.threshold_until) > t.threshold);
            }
        }
    }

    #[test]
    fn merge_batches_follow_the_geometric_schedule() {
        // §3.1: batches at n = 1, q, q², ..., so after N unit events there
        // have been floor(log_q N) + 1 of them: O(log n) merge work in all.
        for (q, n, batches) in [
            (2.0, 1_000_000u64, 20),
            (4.0, 1_000_000, 10),
            (1.5, 10_000, 22),
        ] {
            let mut t = Tree::new(&RapConfig {
                merge_factor: q,
                ..RapConfig::with_epsilon(0.01)
            });
            for i in 0..n {
                t.add(&[i % 5000], 1);
            }
            assert_eq!(t.merge_batches, batches, "q = {q}, n = {n}");
            assert_eq!(sum(&t), n);
        }
        // Weighted points can jump past several due times: one batch then,
        // and the next one strictly later.
        let mut t = tree(0.01);
        t.add(&[1], 1);
        t.add(&[2], 1000);
        assert_eq!(t.merge_batches, 2);
        assert!(t.next_merge > t.n);
    }

    #[test]
    fn node_events_charge_each_event_with_the_nodes_after_its_splits() {
        // The sum kept at splits and merges only against the per-event sum,
        // with merges after the first one too rare to happen (a merge would
        // change `live` inside an add, where a caller cannot see it).
        let mut t = Tree::new(&RapConfig {
            merge_factor: 1e12,
            ..RapConfig::with_epsilon(0.05)
        });
        let mut expect = 0u128;
        for i in 0..50_000u64 {
            let weight = 1 + i % 3;
            t.add(&[(i * 2_654_435_761) % 4096 + (i % 7) * 1_000_000], weight);
            if i > 0 {
                expect += t.live as u128 * weight as u128;
            } else {
                // The first event ran the merge batch due at n = 1.
                assert_eq!(t.merge_batches, 1);
                expect += t.node_events();
            }
        }
        assert!(t.splits > 100);
        assert_eq!(t.node_events(), expect);
    }

    #[test]
    fn caches_keep_the_nodes_a_merge_batch_leaves() {
        // Points counted, folded by a merge batch, then counted again: the
        // cached nodes that survive are used and those freed are not
        // (debug builds check every walk against one from the root).
        let mut t = tree(0.1);
        for round in 0..6u64 {
            for i in 0..20_000u64 {
                let hot = if round % 2 == 0 { 5 } else { 1 << 40 };
                t.add(&[hot + (i % 64) * (1 + round)], 1);
                t.add(&[(i * 7919) % 100_000], 1);
            }
            t.merge_batch();
        }
        assert!(t.merges > 0);
        assert_eq!(sum(&t), 240_000);
    }

    #[test]
    fn the_block_cache_grows_for_spread_streams_only() {
        // 20,000 blocks of 256 points visited in turn miss a 4,096-entry
        // block cache; 64 hot blocks do not.
        let mut spread = tree(0.01);
        let mut narrow = tree(0.01);
        for i in 0..400_000u64 {
            let block = (i * 7919) % 20_000;
            spread.add(&[(block << 8) + i % 256], 1);
            narrow.add(&[((block % 64) << 8) + i % 256], 1);
        }
        assert_eq!(spread.blocks.slots(), BLOCK_CACHE_MAX);
        assert_eq!(narrow.blocks.slots(), BLOCK_CACHE_ENTRIES);
        assert_eq!((sum(&spread), sum(&narrow)), (400_000, 400_000));
    }

    #[test]
    fn a_walk_that_misses_its_block_starts_at_its_region() {
        // Points spread over 20,000 blocks of two regions: once the tree
        // has grown there, each region's entry names its node at the
        // region depth, which every later walk from it goes through
        // (debug builds check each leaf against a walk from the root).
        let mut t = tree(0.01);
        let regions = [0x7fff_0000_0000u64, 0x1_0000_0000];
        for i in 0..200_000u64 {
            let base = regions[(i % 2) as usize];
            t.add(&[base + (((i * 7919) % 20_000) << 8) + i % 256], 1);
        }
        assert_eq!(sum(&t), 200_000);
        for base in regions {
            let (v, level) = t.regions.get(&[base]).expect("the region remembered");
            // A region this hot has split far below its region depth.
            assert_eq!(level, t.region_depth);
            let mut u = 0;
            for l in 0..level {
                assert_ne!(t.first[u], 0, "a leaf above the remembered node");
                u = t.first[u] as usize + t.child_index(&[base], l);
            }
            assert_eq!(u, v, "the remembered node is not on the region's path");
        }
    }

    #[test]
    fn child_index_in_two_dimensions_interleaves_bits() {
        let t: Tree<2> = Tree::new(&RapConfig::default());
        assert_eq!(t.k, 1);
        assert_eq!(t.levels, 64);
        assert_eq!(t.child_index(&[1 << 63, 0], 0), 1);
        assert_eq!(t.child_index(&[0, 1 << 63], 0), 2);
        assert_eq!(t.child_index(&[1, 1], 63), 3);
    }
}
