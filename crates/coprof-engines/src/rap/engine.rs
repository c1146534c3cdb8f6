//! The RAP engine: a tree behind a merging event buffer (Mysore et al.,
//! TACO 2008, §2 and §3.2.1), with the paper's operations: add points,
//! finalize into a snapshot of the tree.

use super::buffer::{Counts, MergingBuffer, Slots, Tally};
use super::config::{ConfigError, RapConfig};
use super::snapshot::RapSnapshot;
use super::streams::one_point;
use super::tree::Tree;

/// Range-adaptive profiling of `D`-dimensional points.
///
/// ```
/// use coprof_engines::rap::{Rap, RapConfig};
/// let mut rap: Rap<1> = Rap::new(RapConfig::default()).unwrap();
/// for i in 0..100_000u64 {
///     rap.add([0x1000 + (i % 64) * 4]);
/// }
/// let snap = rap.snapshot();
/// assert_eq!(snap.n, 100_000);
/// // 64 instructions, each 1/64 of the events: the hot ranges (≥ 10%) are
/// // the four aligned 64-byte blocks of 16 instructions, 25% each.
/// let hot = snap.hot_ranges(0.1);
/// assert_eq!(hot.len(), 4);
/// assert!(hot.iter().all(|h| h.hi[0] - h.lo[0] == 63 && h.share > 0.24));
/// ```
#[derive(Clone, Debug)]
pub struct Rap<const D: usize> {
    config: RapConfig,
    tree: Tree<D>,
    /// The merging buffer, whose slots carry the position of each point
    /// given with one (see [`add_positioned`](Self::add_positioned)), as
    /// a tag: the position plus one, 0 for none.
    buffer: Option<MergingBuffer<[u64; D], u32>>,
    /// Whether every point in the buffer took its slot with a tag: false
    /// after points came without positions, whose slots kept the tags of
    /// the points before them.
    tagged: bool,
    /// Largest coordinate inside the universe.
    max: u64,
    /// Events whose point lies outside the universe (only with bits < 64).
    outside: u64,
}

impl<const D: usize> Rap<D> {
    /// A profile with `config`, which is checked first.
    pub fn new(config: RapConfig) -> Result<Rap<D>, ConfigError> {
        config.validate(D)?;
        let entries = config.buffer_entries(D);
        Ok(Rap {
            tree: Tree::new(&config),
            buffer: (entries > 0).then(|| MergingBuffer::new(entries)),
            tagged: true,
            max: if config.bits == 64 {
                u64::MAX
            } else {
                (1u64 << config.bits) - 1
            },
            outside: 0,
            config,
        })
    }

    /// The configuration.
    pub fn config(&self) -> &RapConfig {
        &self.config
    }

    /// Whether `p` lies outside the universe: a coordinate ≥ 2^bits.
    #[inline(always)]
    fn is_outside(&self, p: &[u64; D]) -> bool {
        outside_of(self.max, p)
    }

    /// Counts one event at point `p`.
    #[inline]
    pub fn add(&mut self, p: [u64; D]) {
        self.add_points(1, p);
    }

    /// Counts `count` events at point `p`: the paper's `add_points`. A
    /// point outside the universe (a coordinate ≥ 2^bits) is counted apart,
    /// in [`RapSnapshot::outside`], and not in the tree.
    #[inline]
    pub fn add_points(&mut self, count: u64, p: [u64; D]) {
        if count == 0 {
            return;
        }
        if self.is_outside(&p) {
            self.outside += count;
            return;
        }
        match &mut self.buffer {
            Some(buffer) => {
                self.tagged = false;
                if let Some((old, c)) = buffer.insert(p, count) {
                    self.tree.add(&old, c);
                }
            }
            None => self.tree.add(&p, count),
        }
    }

    /// Counts one event at each of `points`, in order: the same profile as
    /// [`add`](Self::add) on each, with less work per event. The merging
    /// buffer takes the points first, and the entries it evicts are
    /// counted in the tree a few at a time, so that neither loop carries
    /// the other's state.
    ///
    /// ```
    /// use coprof_engines::rap::{Rap, RapConfig};
    /// let mut one: Rap<1> = Rap::new(RapConfig::default()).unwrap();
    /// let mut all: Rap<1> = Rap::new(RapConfig::default()).unwrap();
    /// let points = (0..10_000u64).map(|i| [(i * i) % 977]);
    /// points.clone().for_each(|p| one.add(p));
    /// all.add_all(points);
    /// assert_eq!(format!("{:?}", one.snapshot()), format!("{:?}", all.snapshot()));
    /// ```
    pub fn add_all(&mut self, points: impl IntoIterator<Item = [u64; D]>) {
        self.add_counted(points.into_iter().map(|p| (p, 1)));
    }

    /// Counts `count` events at each point of `items`, in order: the same
    /// profile as [`add_points`](Self::add_points) on each, with the
    /// batching of [`add_all`](Self::add_all).
    ///
    /// ```
    /// use coprof_engines::rap::{Rap, RapConfig};
    /// let mut one: Rap<1> = Rap::new(RapConfig::default()).unwrap();
    /// let mut all: Rap<1> = Rap::new(RapConfig::default()).unwrap();
    /// let items = (0..10_000u64).map(|i| ([(i * i) % 977], 1 + i % 5));
    /// items.clone().for_each(|(p, c)| one.add_points(c, p));
    /// all.add_counted(items);
    /// assert_eq!(format!("{:?}", one.snapshot()), format!("{:?}", all.snapshot()));
    /// ```
    #[inline]
    pub fn add_counted(&mut self, items: impl IntoIterator<Item = ([u64; D], u64)>) {
        self.add_items::<false>(items);
    }

    /// [`add_all`](Self::add_all) for points whose repeats follow no
    /// pattern: load values, data addresses. The same profile, but the
    /// merging buffer takes each point without a branch on whether it
    /// was there already, which on such streams is a coin toss the
    /// processor keeps guessing wrong (`coprof ranges --stream
    /// load-value` on SQLite: 7% less time). On a program's PCs, whose
    /// loops revisit the same slots, [`add_all`](Self::add_all) is faster.
    ///
    /// ```
    /// use coprof_engines::rap::{Rap, RapConfig};
    /// let mut one: Rap<1> = Rap::new(RapConfig::default()).unwrap();
    /// let mut all: Rap<1> = Rap::new(RapConfig::default()).unwrap();
    /// let values = (0..10_000u64).map(|i| [(i * 2_654_435_761) % 1009]);
    /// values.clone().for_each(|v| one.add(v));
    /// all.add_all_irregular(values);
    /// assert_eq!(format!("{:?}", one.snapshot()), format!("{:?}", all.snapshot()));
    /// ```
    #[inline]
    pub fn add_all_irregular(&mut self, points: impl IntoIterator<Item = [u64; D]>) {
        self.add_items::<true>(points.into_iter().map(|p| (p, 1)));
    }

    /// [`add_counted`](Self::add_counted), through the buffer without a
    /// branch when `UNBRANCHED` (see [`add_all_irregular`](Self::add_all_irregular)).
    #[inline(always)]
    fn add_items<const UNBRANCHED: bool>(
        &mut self,
        items: impl IntoIterator<Item = ([u64; D], u64)>,
    ) {
        let mut run = [([0u64; D], 0u64, 0u32); EVICTED];
        let mut feeder = self.feeder::<false, UNBRANCHED>();
        for (p, count) in items {
            feeder.offer(&mut run, p, count, 0);
        }
        feeder.finish(&run);
    }

    /// Counts one event at each first coordinate of each slice, in order
    /// (the other coordinates 0): [`add_all`](Self::add_all) over the
    /// slices one after another, with a plain loop over each. A code
    /// profile fed runs of basic blocks adds each run's PCs this way.
    ///
    /// ```
    /// use coprof_engines::rap::{Rap, RapConfig};
    /// let mut one: Rap<1> = Rap::new(RapConfig::default()).unwrap();
    /// let mut runs: Rap<1> = Rap::new(RapConfig::default()).unwrap();
    /// let pcs: Vec<u64> = (0..10_000u64).map(|i| 0x1000 + (i * i % 977) * 4).collect();
    /// pcs.iter().for_each(|&pc| one.add([pc]));
    /// runs.add_slices(pcs.chunks(7));
    /// assert_eq!(format!("{:?}", one.snapshot()), format!("{:?}", runs.snapshot()));
    /// ```
    #[inline]
    pub fn add_slices<'a>(&mut self, slices: impl IntoIterator<Item = &'a [u64]>) {
        let mut run = [([0u64; D], 0u64, 0u32); EVICTED];
        let mut feeder = self.feeder::<false, false>();
        for slice in slices {
            for &x in slice {
                feeder.offer(&mut run, one_point(x), 1, 0);
            }
        }
        feeder.finish(&run);
    }

    /// [`add_slices`](Self::add_slices) of slices whose points each have
    /// a position that stays theirs for the whole stream, given as the
    /// position of each slice's first point (the next points follow it):
    /// a code profile fed runs of basic blocks gives each PC's place in
    /// the table of blocks (`coprof_core::Blocks::run_pcs_at`). The same
    /// profile as [`add_slices`](Self::add_slices), with less work per
    /// event: the engine remembers the leaf each position's point was
    /// last counted in, and starts there the next time. A position must
    /// always come with the same point, and be below 2^32 − 1. Points
    /// with and without positions may be mixed: the profile is the same.
    ///
    /// ```
    /// use coprof_engines::rap::{Rap, RapConfig};
    /// let mut one: Rap<1> = Rap::new(RapConfig::default()).unwrap();
    /// let mut hinted: Rap<1> = Rap::new(RapConfig::default()).unwrap();
    /// // Three blocks of PCs, one after another in a table.
    /// let table: Vec<u64> = (0..30u64).map(|i| 0x1000 + i * 4).collect();
    /// let runs = (0..10_000usize).map(|i| [0, 10, 20][i * i % 3]);
    /// for start in runs.clone() {
    ///     table[start..start + 10].iter().for_each(|&pc| one.add([pc]));
    /// }
    /// hinted.add_positioned(runs.map(|start| (start, &table[start..start + 10])));
    /// assert_eq!(format!("{:?}", one.snapshot()), format!("{:?}", hinted.snapshot()));
    /// ```
    #[inline]
    pub fn add_positioned<'a>(&mut self, slices: impl IntoIterator<Item = (usize, &'a [u64])>) {
        self.add_positioned_counted(slices.into_iter().map(|(first, slice)| (first, slice, 1)));
    }

    /// [`add_positioned`](Self::add_positioned) with a count of events
    /// for each slice, at each of its points: a buffer of block executions
    /// in front of a code profile sends a block's PCs with the times it
    /// ran.
    #[inline]
    pub fn add_positioned_counted<'a>(
        &mut self,
        slices: impl IntoIterator<Item = (usize, &'a [u64], u64)>,
    ) {
        if !self.tagged {
            if let Some(buffer) = &mut self.buffer {
                buffer.clear_tags();
            }
        }
        let mut run = [([0u64; D], 0u64, 0u32); EVICTED];
        let mut feeder = self.feeder::<true, false>();
        let mut streak = Streak::new(usize::MAX, &[]);
        for (first, slice, count) in slices {
            // Tags are positions plus one (0 is none).
            let end = first + slice.len();
            assert!(end < u32::MAX as usize, "position {end} beyond 2^32 - 1");
            feeder.tree.cover_tags(end + 1);
            if count == 0 {
                continue;
            }
            if first == streak.first && slice.len() == streak.pcs.len() {
                if feeder.repeats(&mut streak) {
                    streak.weight += count;
                    streak.inserts += 1;
                    continue;
                }
            } else {
                feeder.end_streak(&streak);
                streak = Streak::new(first, slice);
            }
            for (&x, tag) in slice.iter().zip(first as u32 + 1..) {
                feeder.offer(&mut run, one_point(x), count, tag);
            }
        }
        feeder.end_streak(&streak);
        feeder.finish(&run);
    }

    /// The state of a loop that adds many points, with positions when
    /// `POSITIONED`, through the buffer without a branch when
    /// `UNBRANCHED`: see [`Feeder`].
    #[inline(always)]
    fn feeder<const POSITIONED: bool, const UNBRANCHED: bool>(
        &mut self,
    ) -> Feeder<'_, D, POSITIONED, UNBRANCHED> {
        // The buffer keeps no tags without a branch.
        const { assert!(!(POSITIONED && UNBRANCHED)) };
        self.tagged = POSITIONED;
        let (buffer, counts) = self.buffer.as_mut().map(|b| b.split()).unzip();
        let n = self.tree.n;
        Feeder {
            tree: &mut self.tree,
            buffer,
            counts,
            max: self.max,
            outside: &mut self.outside,
            tally: Tally::default(),
            len: 0,
            n,
        }
    }

    /// Sends every event waiting in the merging buffer to the tree.
    pub fn flush(&mut self) {
        if let Some(buffer) = &mut self.buffer {
            let tree = &mut self.tree;
            buffer.drain(|p, c| tree.add(p, c));
        }
        self.tree.settle_grants();
    }

    /// Events added in the universe so far, including those still in the
    /// merging buffer.
    pub fn events(&self) -> u64 {
        self.tree.n + self.buffer.as_ref().map_or(0, |b| b.pending())
    }

    /// Live nodes in the tree now (events still in the merging buffer have
    /// not split anything yet).
    pub fn nodes(&self) -> usize {
        self.tree.live
    }

    /// Bytes held: the tree's node arrays and the merging buffer.
    pub fn bytes(&self) -> usize {
        self.tree.bytes() + self.buffer.as_ref().map_or(0, |b| b.bytes())
    }

    /// The paper's `finalize`: flushes the merging buffer and returns the
    /// tree. Merges keep their own schedule; adding more points afterwards
    /// is allowed and the profile continues.
    pub fn snapshot(&mut self) -> RapSnapshot {
        self.flush();
        RapSnapshot::of(self)
    }

    pub(crate) fn parts(&self) -> (&Tree<D>, Option<&MergingBuffer<[u64; D], u32>>, u64) {
        (&self.tree, self.buffer.as_ref(), self.outside)
    }
}

/// Whether `p` lies outside a universe whose largest coordinate is `max`.
#[inline(always)]
fn outside_of<const D: usize>(max: u64, p: &[u64; D]) -> bool {
    max != u64::MAX && p.iter().any(|&x| x > max)
}

/// Evictions gathered for the tree: sent [`EVICTED`] at a time.
const EVICTED: usize = 32;

/// The slices of positioned points that came one right after another with
/// the same positions: a block of code that ran again and again, a loop
/// of one basic block. Once the merging buffer holds every point of the
/// slice, as it does after one pass over it unless two of its points
/// share a slot, each time the slice comes again its points only add to
/// their entries, with nothing evicted in between; so the repeats are
/// added up here and given to the entries at once when the streak ends,
/// with the same counts, hits and evictions, in the same order, as one
/// insert per point each time (§3.2.1's buffer, unchanged). On bzip2
/// compressing random bytes 62% of the PCs come in such repeats.
struct Streak<'s> {
    /// The position of the slice's first point.
    first: usize,
    pcs: &'s [u64],
    /// Whether the buffer held every point of the slice when it came
    /// again; `None` until then. It stays so for the whole streak: only
    /// a point of the slice itself could evict another.
    held: Option<bool>,
    /// Events per point, and inserts, added up and not yet given.
    weight: u64,
    inserts: u64,
}

impl<'s> Streak<'s> {
    fn new(first: usize, pcs: &'s [u64]) -> Streak<'s> {
        Streak {
            first,
            pcs,
            held: None,
            weight: 0,
            inserts: 0,
        }
    }
}

/// A loop that adds many points, in order, with the profile of
/// [`Rap::add_points`] on each: the points go into the merging buffer,
/// and the entries it evicts are gathered in a run of [`EVICTED`] that
/// goes to the tree when full, so that neither loop carries the other's
/// state.
///
/// The run of evictions is the caller's local, passed to each call: the
/// tree reads it by reference, and a struct whose address is passed on
/// stays in memory, where the loop's counters would then live too and
/// carry a dependency from each event to the next through a store and a
/// load.
///
/// With `POSITIONED`, each point comes with a tag, its position plus one
/// (0 for none), which the buffer keeps beside it and the tree uses to
/// start at the node it remembers for it (`LeafHints`). An entry the buffer evicts
/// is then counted at once, not gathered: against its position's part of
/// its leaf's room (see `Grants`), with the event count kept here in `n`,
/// or by the tree when the part is used up, before any later eviction.
///
/// With `UNBRANCHED`, the buffer takes each point with
/// [`insert_unbranched`](Slots::insert_unbranched), which keeps no tags:
/// never with `POSITIONED` (a build that asks for both fails).
struct Feeder<'a, const D: usize, const POSITIONED: bool, const UNBRANCHED: bool> {
    tree: &'a mut Tree<D>,
    buffer: Option<Slots<'a, [u64; D], u32>>,
    /// The buffer's counts of hits and evictions, for the tally at the end.
    counts: Option<Counts<'a>>,
    max: u64,
    outside: &'a mut u64,
    tally: Tally,
    /// Evictions in the run so far.
    len: usize,
    /// The tree's count of events, kept here while a positioned loop
    /// counts evictions against their positions' parts.
    n: u64,
}

impl<const D: usize, const POSITIONED: bool, const UNBRANCHED: bool>
    Feeder<'_, D, POSITIONED, UNBRANCHED>
{
    /// Offers `count` events at `p`, with `tag` (its position plus one;
    /// unused unless `POSITIONED`).
    #[inline(always)]
    fn offer(
        &mut self,
        run: &mut [([u64; D], u64, u32); EVICTED],
        p: [u64; D],
        count: u64,
        tag: u32,
    ) {
        if count == 0 {
            return;
        }
        if outside_of(self.max, &p) {
            *self.outside += count;
            return;
        }
        match self.buffer.as_mut() {
            Some(buffer) if UNBRANCHED => {
                // The slot's old entry is written to the run whether or
                // not it was evicted, and counts only if it was.
                let ((point, c), evicted) = buffer.insert_unbranched(p, count, &mut self.tally);
                run[self.len] = (point, c, 0);
                self.len += evicted as usize;
            }
            Some(buffer) if POSITIONED => {
                let old = match buffer.insert_tagged(p, count, tag, &mut self.tally) {
                    Some(old) => old,
                    None => return,
                };
                // Counted at once against its position's part, most of
                // the time; else at once by the tree, so that no later
                // eviction is counted before it.
                if !self.tree.take_granted(&mut self.n, old.2, old.1) {
                    self.tree.n = self.n;
                    self.tree.add_run_hinted(&[old]);
                    self.n = self.tree.n;
                }
                return;
            }
            Some(buffer) => {
                match buffer.insert_tallied(p, count, &mut self.tally) {
                    Some((old, c)) => run[self.len] = (old, c, 0),
                    None => return,
                }
                self.len += 1;
            }
            None => {
                run[self.len] = (p, count, tag);
                self.len += 1;
            }
        }
        if self.len == EVICTED {
            self.count(run);
            self.len = 0;
        }
    }

    /// Whether the slice of `streak`, come again right after itself, may
    /// be added to the streak: the buffer holds every one of its points.
    #[inline(always)]
    fn repeats(&self, streak: &mut Streak<'_>) -> bool {
        let Some(buffer) = self.buffer.as_ref() else {
            return false;
        };
        *streak
            .held
            .get_or_insert_with(|| buffer.holds_all(streak.pcs.iter().map(|&x| one_point(x))))
    }

    /// Gives the repeats added up in `streak` to the buffer's entries.
    #[inline(always)]
    fn end_streak(&mut self, streak: &Streak<'_>) {
        if streak.inserts == 0 {
            return;
        }
        if let Some(buffer) = self.buffer.as_mut() {
            buffer.add_held(
                streak.pcs.iter().map(|&x| one_point(x)),
                streak.weight,
                streak.inserts,
                &mut self.tally,
            );
        }
    }

    /// Counts the evictions of `run` in the tree.
    #[inline(always)]
    fn count(&mut self, run: &[([u64; D], u64, u32)]) {
        if POSITIONED {
            self.tree.add_run_hinted(run);
        } else {
            self.tree.add_run(run);
        }
    }

    /// Counts the evictions still in `run`, and the loop's hits and
    /// evictions.
    #[inline(always)]
    fn finish(mut self, run: &[([u64; D], u64, u32); EVICTED]) {
        if POSITIONED && self.buffer.is_some() {
            self.tree.n = self.n;
        }
        self.count(&run[..self.len]);
        if let Some(counts) = self.counts {
            counts.add(self.tally);
        }
    }
}
