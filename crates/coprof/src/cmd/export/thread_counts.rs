//! Events counted per thread and PC: a flat profile with each thread's
//! costs apart (`export --separate-threads`), as `perf report --sort
//! tid,sym` gives them: a sampled native program's (a sample carries a
//! PC, not a stack, so each thread's part is flat), or any run's with
//! `--flat`.

use coprof_core::{ClassSet, Event, Sink};
use rustc_hash::FxHashMap;

/// The events of some classes counted per (thread, PC). Events before the
/// source first says which thread runs (a trace that does not say)
/// count under no thread.
pub(super) struct ThreadCounts {
    classes: ClassSet,
    thread: Option<u64>,
    counts: FxHashMap<(Option<u64>, u64), u64>,
}

impl ThreadCounts {
    pub(super) fn new(classes: ClassSet) -> ThreadCounts {
        ThreadCounts {
            classes,
            thread: None,
            counts: FxHashMap::default(),
        }
    }

    /// Each (thread, PC) with its count.
    pub(super) fn counts(&self) -> &FxHashMap<(Option<u64>, u64), u64> {
        &self.counts
    }

    /// The threads counted, by id.
    pub(super) fn threads(&self) -> usize {
        let mut threads: Vec<u64> = self.counts.keys().filter_map(|&(t, _)| t).collect();
        threads.sort_unstable();
        threads.dedup();
        threads.len()
    }
}

impl Sink for ThreadCounts {
    fn wants(&self) -> ClassSet {
        self.classes
    }

    fn observe(&mut self, batch: &[Event]) {
        for e in batch.iter().filter(|e| self.classes.contains(e.class)) {
            *self.counts.entry((self.thread, e.pc)).or_insert(0) += 1;
        }
    }

    fn wants_thread_switches(&self) -> bool {
        true
    }

    fn thread_switch(&mut self, tid: u64) {
        self.thread = Some(tid);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use coprof_core::Class;

    #[test]
    fn each_threads_events_count_apart_and_those_before_a_switch_under_none() {
        let mut t = ThreadCounts::new(ClassSet::of(Class::Other));
        let at = |pc| Event::new(pc, Class::Other);
        t.observe(&[at(0x10)]);
        t.thread_switch(7);
        t.observe(&[
            at(0x10),
            at(0x10),
            at(0x20),
            Event::load(0x30, 0x1000, 8, 0),
        ]);
        t.thread_switch(9);
        t.observe(&[at(0x10)]);
        t.thread_switch(7);
        t.observe(&[at(0x20)]);
        let mut got: Vec<_> = t.counts().iter().map(|(&k, &n)| (k, n)).collect();
        got.sort_unstable();
        assert_eq!(
            got,
            [
                ((None, 0x10), 1),
                ((Some(7), 0x10), 2),
                ((Some(7), 0x20), 2),
                ((Some(9), 0x10), 1)
            ]
        );
        assert_eq!(t.threads(), 2);
    }
}
