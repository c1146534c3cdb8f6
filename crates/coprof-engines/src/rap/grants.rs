//! Events a code profile's positions may count without looking at the RAP
//! tree: a software shortcut, not part of the paper's mechanism (Mysore
//! et al., TACO 2008), and invisible in its results.
//!
//! An event counted in a leaf changes the tree only if it carries the
//! leaf's counter past SplitThreshold (§2.2.1), and SplitThreshold only
//! grows with n. So a leaf whose counter is `c` under a threshold `T`
//! can take `T - c` more events, whenever they come, before any of them
//! could split it. A leaf hands that room out, a part at a time, to the
//! positions of the table of blocks whose PCs it holds (see
//! [`LeafHints`](super::hints::LeafHints)): the part is added to the
//! leaf's counter at once, as if already counted, and the position then
//! counts its events against what is left of its part, one array entry,
//! with no walk, no hint and no counter of the tree on the way.
//!
//! The counter of a leaf is thus its events plus the parts its positions
//! have not used. It never says less than the truth, so whatever it lets
//! through fits: a leaf that seems to have room has it. Where the truth
//! matters, the unused parts go back first ([`Grants::settle`]): before a
//! leaf splits (its counter seems to pass the threshold), and before
//! anything reads the counters: a merge batch (§2.2.2) and a snapshot.
//! A part stays with the leaf it came from, since the position's PC stays
//! in that leaf until it splits or a merge batch runs, and both settle
//! first. The tree's splits, merges and counters are the same, event for
//! event, as without grants: property tests compare it with single adds.

/// A position with no part left, or no list.
const NONE: u32 = 0;

/// [`Grants::next`] of a tag in no leaf's list.
const UNLISTED: u32 = u32::MAX;

/// The share of a leaf's room a position gets at a time: an eighth.
/// Smaller parts send positions back to the tree more often; larger ones
/// leave the leaf's other positions without room, and each of their
/// events then takes back the unused parts ([`Grants::settle`]) before it
/// fits. `coprof ranges --stream pc` on sql-text took 2.61 s with halves,
/// 3.02 s with the whole room, 2.46 s with eighths and 2.52 s with 32nds
/// (CPU seconds, medians of three rounds).
const PART_SHARE: u64 = 8;

/// The largest part a position holds at a time.
const PART_MAX: u32 = 1 << 24;

/// Per position (as a tag, its position plus one), the events it may
/// still count in its leaf; per leaf, the positions holding parts of its
/// room.
#[derive(Clone, Debug, Default)]
pub(crate) struct Grants {
    /// Per tag, the unused part it holds (0 for tag 0, which is no
    /// position).
    left: Vec<u32>,
    /// Per tag, the next tag in its leaf's list: [`NONE`] at the end,
    /// [`UNLISTED`] when in no list.
    next: Vec<u32>,
    /// Per node of the tree, the first tag of the list of positions
    /// holding parts of its room ([`NONE`] if none).
    head: Vec<u32>,
}

impl Grants {
    /// No parts given, with lists for nodes `0..nodes`.
    pub(crate) fn with_nodes(nodes: usize) -> Grants {
        let mut grants = Grants::default();
        grants.cover_nodes(nodes);
        grants
    }

    /// Makes room for tags `0..tags`, with no parts.
    #[inline(always)]
    pub(crate) fn cover(&mut self, tags: usize) {
        if self.left.len() < tags {
            self.grow(tags);
        }
    }

    #[cold]
    fn grow(&mut self, tags: usize) {
        self.left.resize(tags, 0);
        self.next.resize(tags, UNLISTED);
    }

    /// Makes room for nodes `0..nodes`, holding no lists.
    pub(crate) fn cover_nodes(&mut self, nodes: usize) {
        if self.head.len() < nodes {
            self.head.resize(nodes, NONE);
        }
    }

    /// Takes `weight` events from `tag`'s part, if it holds that many;
    /// returns whether it did.
    #[inline(always)]
    pub(crate) fn take(&mut self, tag: u32, weight: u64) -> bool {
        let left = &mut self.left[tag as usize];
        if weight <= *left as u64 {
            *left -= weight as u32;
            true
        } else {
            false
        }
    }

    /// Gives `tag` (not 0) a part of `room` events of node `v`'s (a
    /// [`PART_SHARE`]th, up to [`PART_MAX`] held), which the caller adds to
    /// the node's counter; returns the part (0 if none).
    #[inline]
    pub(crate) fn give(&mut self, tag: u32, v: usize, room: u64) -> u64 {
        let t = tag as usize;
        let part = (room / PART_SHARE).min((PART_MAX - self.left[t]) as u64) as u32;
        if part == 0 {
            return 0;
        }
        self.left[t] += part;
        if self.next[t] == UNLISTED {
            self.next[t] = self.head[v];
            self.head[v] = tag;
        }
        part as u64
    }

    /// Whether node `v` has given parts of its room.
    #[inline(always)]
    pub(crate) fn has_given(&self, v: usize) -> bool {
        self.head.get(v).is_some_and(|&h| h != NONE)
    }

    /// Takes back every unused part node `v` gave; returns their sum, which
    /// the caller takes off the node's counter.
    pub(crate) fn settle(&mut self, v: usize) -> u64 {
        let mut unused = 0;
        let mut t = std::mem::replace(&mut self.head[v], NONE);
        while t != NONE {
            let i = t as usize;
            unused += std::mem::take(&mut self.left[i]) as u64;
            t = std::mem::replace(&mut self.next[i], UNLISTED);
        }
        unused
    }

    /// [`settle`](Self::settle) of every node: calls `sink` with each node
    /// that gave parts and their unused sum.
    pub(crate) fn settle_all(&mut self, mut sink: impl FnMut(usize, u64)) {
        for v in 0..self.head.len() {
            if self.head[v] != NONE {
                let unused = self.settle(v);
                sink(v, unused);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parts_are_taken_and_given_back() {
        let mut g = Grants::default();
        g.cover(4);
        g.cover_nodes(3);
        assert!(!g.take(1, 1));
        assert_eq!(g.give(1, 2, 800), 100);
        assert_eq!(g.give(3, 2, 400), 50);
        assert!(g.has_given(2) && !g.has_given(1));
        assert!(g.take(1, 30));
        assert!(!g.take(1, 71));
        assert!(g.take(3, 50));
        // 70 of tag 1's part and none of tag 3's are unused.
        assert_eq!(g.settle(2), 70);
        assert!(!g.has_given(2));
        assert!(!g.take(1, 1));
        // Too little room for a part.
        assert_eq!(g.give(3, 1, 7), 0);
        assert!(!g.has_given(1));
        // A tag settled may be given a part again, by another node.
        assert_eq!(g.give(1, 1, 80), 10);
        let mut back = Vec::new();
        g.settle_all(|v, unused| back.push((v, unused)));
        assert_eq!(back, vec![(1, 10)]);
    }

    #[test]
    fn a_part_never_exceeds_its_cap() {
        let mut g = Grants::default();
        g.cover(2);
        g.cover_nodes(1);
        assert_eq!(g.give(1, 0, u64::MAX), PART_MAX as u64);
        assert_eq!(g.give(1, 0, u64::MAX), 0);
        assert_eq!(g.settle(0), PART_MAX as u64);
    }
}
