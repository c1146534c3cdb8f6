//! Exact events per PC, as a sink: the flat profile of a stream.

use crate::{BlockCounts, Blocks, ClassSet, Event, KeyCounts, Run, Sink};
use rustc_hash::FxHashMap;

/// Counts the events of some classes per PC, exactly: the ground truth
/// of a flat profile (instructions retired per PC for every class; loads
/// per PC for loads; samples per PC for a stream of samples).
///
/// From a source that delivers runs of basic blocks it takes runs alone
/// and counts each block once per execution, expanding the counts per PC
/// and class when the stream ends.
#[derive(Clone, Debug)]
pub struct PcCounts {
    classes: ClassSet,
    counts: KeyCounts,
    runs: Option<BlockCounts>,
    /// Every PC's count, once the stream has finished.
    done: FxHashMap<u64, u64>,
}

impl PcCounts {
    /// Counts the events of `classes`.
    pub fn new(classes: ClassSet) -> PcCounts {
        PcCounts {
            classes,
            counts: KeyCounts::new(),
            runs: None,
            done: FxHashMap::default(),
        }
    }

    /// The classes counted.
    pub fn classes(&self) -> ClassSet {
        self.classes
    }

    /// Every PC's count, once [`Sink::finish`] has been called; PCs that
    /// never counted are absent.
    pub fn counts(&self) -> &FxHashMap<u64, u64> {
        &self.done
    }
}

impl Sink for PcCounts {
    fn wants(&self) -> ClassSet {
        self.classes
    }

    fn observe(&mut self, batch: &[Event]) {
        if self.runs.is_some() {
            return;
        }
        for e in batch.iter().filter(|e| self.classes.contains(e.class)) {
            self.counts.add(e.pc);
        }
    }

    fn finish(&mut self) {
        if let Some(r) = &self.runs {
            let (counts, classes) = (&mut self.counts, self.classes);
            r.for_each(|pc, class, n| {
                if classes.contains(class) {
                    counts.add_n(pc, n)
                }
            });
        }
        self.done = self.counts.map();
    }

    /// Every PC's class is in its block, so runs alone are enough.
    fn wants_with_runs(&self) -> Option<ClassSet> {
        Some(ClassSet::NONE)
    }

    fn runs_follow(&mut self) {
        self.runs = Some(BlockCounts::new());
    }

    fn observe_runs(&mut self, runs: &[Run], blocks: &Blocks) {
        if let Some(r) = &mut self.runs {
            r.add(runs, blocks);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::synth::{generate, GenConfig, Workload};
    use crate::{Class, ExactCounts, SliceSource, Source};

    #[test]
    fn the_counts_are_the_exact_counts_of_the_chosen_classes() {
        let ev = generate(&GenConfig::new(Workload::Mixed, 200_000).seed(5)).unwrap();
        let mut all = PcCounts::new(ClassSet::ALL);
        SliceSource::new(&ev).run(&mut all).unwrap();
        let mut exact = ExactCounts::new();
        exact.observe(&ev);
        assert_eq!(*all.counts(), exact.per_pc.clone().into_iter().collect());

        let mut loads = PcCounts::new(ClassSet::of(Class::Load));
        SliceSource::new(&ev).run(&mut loads).unwrap();
        let mut want: FxHashMap<u64, u64> = FxHashMap::default();
        for e in ev.iter().filter(|e| e.class == Class::Load) {
            *want.entry(e.pc).or_insert(0) += 1;
        }
        assert!(!want.is_empty());
        assert_eq!(*loads.counts(), want);
    }
}
