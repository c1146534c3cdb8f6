//! Exact counters: the ground truth every estimator is compared with.
//!
//! [`ExactCounts`] is a sink that counts, with unbounded memory, what the
//! engines estimate with bounded memory: executions per PC, executions per
//! (PC, value) for loads, taken short backward branches per branch PC (the
//! loop detector's input), and calls per target (the method profile).

use crate::event::{is_short_backward, Class, ClassSet, Event};
use crate::runs::{BlockCounts, Blocks, Run, Transfers};
use crate::stream::Sink;
use rustc_hash::FxHashMap;
use serde::Serialize;

/// The default largest distance, in bytes, from a short backward branch
/// back to its target (see the loop detector, Gordon-Ross & Vahid §3.1).
pub const DEFAULT_SBB_DISTANCE: u64 = 4096;

/// Exact counts over a stream.
#[derive(Clone, Debug, Default)]
pub struct ExactCounts {
    /// Events seen, all classes.
    pub events: u64,
    /// Events seen per class (indexed by `Class as usize`).
    pub per_class: [u64; Class::ALL.len()],
    /// Executions per PC (every class).
    pub per_pc: FxHashMap<u64, u64>,
    /// Executions per (PC, value) of loads.
    pub load_values: FxHashMap<(u64, u64), u64>,
    /// Taken short backward branches per branch PC, with the target seen
    /// last (the loop body's start).
    pub sbb: FxHashMap<u64, SbbCount>,
    /// Calls per call target (method entry).
    pub calls: FxHashMap<u64, u64>,
    sbb_distance: u64,
    /// With runs of blocks: executions per block, expanded into `per_pc`
    /// and `per_class` when the stream ends, and where the branches and
    /// jumps that end runs went (the short backward branches).
    runs: Option<Box<(BlockCounts, Transfers)>>,
}

/// How often one short backward branch was taken, and to where.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct SbbCount {
    /// Times taken.
    pub taken: u64,
    /// Its target (the loop body's first instruction).
    pub target: u64,
}

impl ExactCounts {
    /// Counters with the default short-backward-branch distance (4 KiB).
    pub fn new() -> ExactCounts {
        ExactCounts::with_sbb_distance(DEFAULT_SBB_DISTANCE)
    }

    /// Counters that treat a taken branch as a loop's back edge when its
    /// target is at most `max_distance` bytes below it.
    pub fn with_sbb_distance(max_distance: u64) -> ExactCounts {
        ExactCounts {
            sbb_distance: max_distance,
            ..ExactCounts::default()
        }
    }

    /// Adds one event.
    #[inline]
    pub fn add(&mut self, e: &Event) {
        self.events += 1;
        self.per_class[e.class as usize] += 1;
        *self.per_pc.entry(e.pc).or_insert(0) += 1;
        match e.class {
            Class::Load => *self.load_values.entry((e.pc, e.value)).or_insert(0) += 1,
            Class::Call => *self.calls.entry(e.addr).or_insert(0) += 1,
            _ => {}
        }
        if e.is_short_backward_branch(self.sbb_distance) {
            let c = self.sbb.entry(e.pc).or_default();
            c.taken += 1;
            c.target = e.addr;
        }
    }

    /// Events of class `c`.
    pub fn class_count(&self, c: Class) -> u64 {
        self.per_class[c as usize]
    }

    /// Executions of the instruction at `pc`.
    pub fn pc_count(&self, pc: u64) -> u64 {
        self.per_pc.get(&pc).copied().unwrap_or(0)
    }

    /// Executions of loads at `pc` (all values).
    pub fn load_count(&self, pc: u64) -> u64 {
        self.pc_count(pc)
    }

    /// Retired instructions whose PC lies in `[lo, hi]`.
    pub fn pcs_in(&self, lo: u64, hi: u64) -> u64 {
        self.per_pc
            .iter()
            .filter(|(pc, _)| (lo..=hi).contains(*pc))
            .map(|(_, n)| n)
            .sum()
    }

    /// The `k` most executed PCs, most first (ties by lower PC).
    pub fn top_pcs(&self, k: usize) -> Vec<(u64, u64)> {
        top_k(self.per_pc.iter().map(|(&pc, &n)| (pc, n)), k)
    }

    /// The `k` most taken short backward branches: (branch PC, count).
    pub fn top_loops(&self, k: usize) -> Vec<(u64, SbbCount)> {
        let mut v: Vec<(u64, SbbCount)> = self.sbb.iter().map(|(&pc, &c)| (pc, c)).collect();
        v.sort_unstable_by(|a, b| b.1.taken.cmp(&a.1.taken).then(a.0.cmp(&b.0)));
        v.truncate(k);
        v
    }

    /// The `k` most frequent values loaded at `pc`: (value, count).
    pub fn top_values(&self, pc: u64, k: usize) -> Vec<(u64, u64)> {
        top_k(
            self.load_values
                .iter()
                .filter(|((p, _), _)| *p == pc)
                .map(|(&(_, v), &n)| (v, n)),
            k,
        )
    }

    /// Classes with at least one event.
    pub fn classes_seen(&self) -> ClassSet {
        Class::ALL
            .into_iter()
            .filter(|c| self.per_class[*c as usize] > 0)
            .collect()
    }

    /// Approximate bytes held by the hash maps, to set beside the bounded
    /// engines' memory.
    pub fn bytes(&self) -> usize {
        // A hash map entry is its key and value plus about one control byte,
        // at the table's capacity.
        self.per_pc.capacity() * 17
            + self.load_values.capacity() * 25
            + self.sbb.capacity() * 25
            + self.calls.capacity() * 17
    }
}

/// The `k` largest (key, count) pairs, largest first, ties by lower key.
pub fn top_k(items: impl Iterator<Item = (u64, u64)>, k: usize) -> Vec<(u64, u64)> {
    let mut v: Vec<(u64, u64)> = items.collect();
    v.sort_unstable_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
    v.truncate(k);
    v
}

impl Sink for ExactCounts {
    fn observe(&mut self, batch: &[Event]) {
        if self.runs.is_some() {
            // The runs count every instruction; events bring the values
            // loaded and the calls' targets.
            for e in batch {
                match e.class {
                    Class::Load => *self.load_values.entry((e.pc, e.value)).or_insert(0) += 1,
                    Class::Call => *self.calls.entry(e.addr).or_insert(0) += 1,
                    _ => {}
                }
            }
            return;
        }
        for e in batch {
            self.add(e);
        }
    }

    /// Expands the per-block counts of runs into per PC and per class.
    fn finish(&mut self) {
        if let Some(r) = self.runs.take() {
            let (per_pc, per_class) = (&mut self.per_pc, &mut self.per_class);
            r.0.for_each(|pc, class, n| {
                *per_pc.entry(pc).or_insert(0) += n;
                per_class[class as usize] += n;
            });
        }
    }

    /// With runs, only loads (for their values) and calls (for their
    /// targets) are needed as events.
    fn wants_with_runs(&self) -> Option<ClassSet> {
        Some(ClassSet::of(Class::Load).with(Class::Call))
    }

    fn runs_follow(&mut self) {
        let transfers = Transfers::new(ClassSet::LOOP_BRANCHES);
        self.runs = Some(Box::new((BlockCounts::new(), transfers)));
    }

    fn observe_runs(&mut self, runs: &[Run], blocks: &Blocks) {
        let Some(r) = &mut self.runs else { return };
        r.0.add(runs, blocks);
        self.events += crate::runs::instructions(runs);
        let (d, sbb) = (self.sbb_distance, &mut self.sbb);
        r.1.scan(runs, blocks, |pc, to| {
            if is_short_backward(pc, to, d) {
                let c = sbb.entry(pc).or_default();
                c.taken += 1;
                c.target = to;
            }
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_per_pc_value_loop_and_call() {
        let mut x = ExactCounts::new();
        let evs = [
            Event::load(0x10, 0x100, 4, 7),
            Event::load(0x10, 0x104, 4, 7),
            Event::load(0x10, 0x108, 4, 9),
            Event::control(0x20, Class::CondBranch, 0x10, true),
            Event::control(0x20, Class::CondBranch, 0x10, false),
            Event::control(0x30, Class::Call, 0x4000, true),
            Event::control(0x9000, Class::CondBranch, 0x10, true), // too far back
        ];
        x.observe(&evs);
        assert_eq!(x.events, 7);
        assert_eq!(x.pc_count(0x10), 3);
        assert_eq!(x.top_values(0x10, 5), vec![(7, 2), (9, 1)]);
        assert_eq!(
            x.sbb[&0x20],
            SbbCount {
                taken: 1,
                target: 0x10
            }
        );
        assert!(!x.sbb.contains_key(&0x9000));
        assert_eq!(x.calls[&0x4000], 1);
        assert_eq!(x.class_count(Class::CondBranch), 3);
        assert_eq!(x.pcs_in(0x10, 0x20), 5);
        assert_eq!(x.top_pcs(1), vec![(0x10, 3)]);
    }

    /// The counts as sorted lists, to compare two of them.
    fn sorted(x: &ExactCounts) -> String {
        let mut pcs: Vec<_> = x.per_pc.iter().collect();
        pcs.sort();
        let mut values: Vec<_> = x.load_values.iter().collect();
        values.sort();
        let mut sbb: Vec<_> = x.sbb.iter().collect();
        sbb.sort_by_key(|(pc, _)| **pc);
        let mut calls: Vec<_> = x.calls.iter().collect();
        calls.sort();
        format!(
            "{} {:?} {pcs:?} {values:?} {sbb:?} {calls:?}",
            x.events, x.per_class
        )
    }

    #[test]
    fn runs_give_the_same_counts_as_events() {
        use crate::synth::{generate, GenConfig, Workload};
        use crate::{SliceSource, Source};
        // Streams whose control flow is consistent: a taken branch is
        // followed by its target (the methods stream is not).
        for (workload, seed) in [(Workload::Loops, 1), (Workload::Mixed, 2)] {
            let events = generate(&GenConfig::new(workload, 100_000).seed(seed)).unwrap();
            let mut plain = ExactCounts::new();
            SliceSource::new(&events).run(&mut plain).unwrap();
            let mut runs = ExactCounts::new();
            let delivered = SliceSource::new(&events)
                .with_runs()
                .run(&mut runs)
                .unwrap();
            let loads_and_calls = plain.class_count(Class::Load) + plain.class_count(Class::Call);
            assert_eq!(
                delivered, loads_and_calls,
                "{workload:?}: only loads and calls"
            );
            assert_eq!(sorted(&plain), sorted(&runs), "{workload:?}");
        }
    }
}
