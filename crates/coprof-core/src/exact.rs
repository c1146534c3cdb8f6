//! Exact counters: the ground truth every estimator is compared with.
//!
//! [`ExactCounts`] is a sink that counts, with unbounded memory, what the
//! engines estimate with bounded memory: executions per PC, executions per
//! (PC, value) for loads, taken short backward branches per branch PC (the
//! loop detector's input), and calls per target (the method profile).

use crate::event::{Class, ClassSet, Event};
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
        for e in batch {
            self.add(e);
        }
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
}
