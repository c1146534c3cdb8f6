//! Events passed on only of the classes a sink asked for.
//!
//! A source gives a sink alone only the classes it [wants](Sink::wants),
//! but a sink fed beside others (in a [`Fanout`](crate::Fanout) or a
//! group of [`feed_on_threads`](crate::threads::feed_on_threads)) gets
//! every class any of them wants. Most sinks skip what they do not use;
//! a model that counts the events it receives, such as the profiling
//! co-processor timing its sample buffer in retired instructions, gives
//! another answer. These put it back in the stream it would see alone.

use crate::event::{ClassSet, Event};
use crate::stream::Sink;

/// Calls `f` with the events of `batch` of the classes in `wants`, in
/// order: `batch` itself when it holds no other class (no copy), else a
/// filtered copy in `spare`, and not at all when none is left.
pub fn with_wanted(
    wants: ClassSet,
    batch: &[Event],
    spare: &mut Vec<Event>,
    f: impl FnOnce(&[Event]),
) {
    if wants == ClassSet::ALL || batch.iter().all(|e| wants.contains(e.class)) {
        return f(batch);
    }
    spare.clear();
    spare.extend(batch.iter().filter(|e| wants.contains(e.class)));
    if !spare.is_empty() {
        f(spare);
    }
}

/// A sink fed only the classes it wants, whatever it is given: what it
/// computes is then what it computes fed alone. It takes events only,
/// never runs of blocks.
///
/// ```
/// use coprof_core::wanted::OnlyWanted;
/// use coprof_core::{Class, ClassSet, Collect, Event, Sink};
///
/// let inner = Collect { events: Vec::new(), wants: ClassSet::of(Class::Load) };
/// let mut only = OnlyWanted::new(inner);
/// only.observe(&[Event::new(0x10, Class::IntAlu), Event::load(0x14, 0x800, 8, 7)]);
/// assert_eq!(only.inner().events.len(), 1);
/// ```
pub struct OnlyWanted<S> {
    sink: S,
    spare: Vec<Event>,
}

impl<S: Sink> OnlyWanted<S> {
    /// `sink`, fed only what it wants.
    pub fn new(sink: S) -> OnlyWanted<S> {
        OnlyWanted {
            sink,
            spare: Vec::new(),
        }
    }

    /// The sink.
    pub fn inner(&self) -> &S {
        &self.sink
    }

    /// The sink, to change or take apart.
    pub fn inner_mut(&mut self) -> &mut S {
        &mut self.sink
    }
}

impl<S: Sink> Sink for OnlyWanted<S> {
    fn wants(&self) -> ClassSet {
        self.sink.wants()
    }
    fn observe(&mut self, batch: &[Event]) {
        let sink = &mut self.sink;
        with_wanted(sink.wants(), batch, &mut self.spare, |b| sink.observe(b));
    }
    fn finish(&mut self) {
        self.sink.finish();
    }
    fn wants_thread_switches(&self) -> bool {
        self.sink.wants_thread_switches()
    }
    fn thread_switch(&mut self, tid: u64) {
        self.sink.thread_switch(tid);
    }
    fn wants_stacks(&self) -> bool {
        self.sink.wants_stacks()
    }
    fn stack(&mut self, calls: &[crate::OpenCall]) {
        self.sink.stack(calls);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::event::Class;
    use crate::stream::Collect;

    #[test]
    fn only_the_wanted_classes_pass_in_order() {
        let batch = [
            Event::load(0x10, 0x100, 8, 1),
            Event::new(0x14, Class::IntAlu),
            Event::load(0x18, 0x108, 8, 2),
            Event::new(0x1c, Class::Store),
        ];
        let mut only = OnlyWanted::new(Collect {
            events: Vec::new(),
            wants: ClassSet::of(Class::Load),
        });
        only.observe(&batch);
        only.observe(&batch[1..2]);
        let pcs: Vec<u64> = only.inner().events.iter().map(|e| e.pc).collect();
        assert_eq!(pcs, [0x10, 0x18]);
    }

    #[test]
    fn a_batch_of_wanted_classes_passes_whole_and_an_empty_one_not_at_all() {
        let loads = [
            Event::load(0x10, 0x100, 8, 1),
            Event::load(0x14, 0x104, 8, 2),
        ];
        let mut spare = Vec::new();
        let mut seen = Vec::new();
        with_wanted(ClassSet::of(Class::Load), &loads, &mut spare, |b| {
            assert!(std::ptr::eq(b, &loads[..]));
            seen.push(b.len());
        });
        let alu = [Event::new(0x20, Class::IntAlu)];
        with_wanted(ClassSet::of(Class::Load), &alu, &mut spare, |b| {
            seen.push(b.len())
        });
        assert_eq!(seen, [2]);
    }
}
