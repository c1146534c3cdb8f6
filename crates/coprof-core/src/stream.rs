//! The push model that joins sources to engines.
//!
//! A [`Source`] (the simulator, a trace reader, a generator) runs and pushes
//! batches of [`Event`]s into one [`Sink`]. Before it starts, it asks the
//! sink which classes it wants ([`Sink::wants`]) and builds events only for
//! those: this is the co-processor paper's decode-time opcode filter (Zilles &
//! Sohi, HPCA 2001, §3.1), so that an unwanted class costs nothing.
//!
//! Engines, exact counters and trace writers are all sinks. Several sinks
//! listen to one source through a [`Fanout`].
//!
//! **Runs.** A source that executes basic blocks (the simulator) can also
//! deliver the instruction stream as [`Run`]s of blocks, one record per
//! block execution instead of one event per instruction (see
//! [`crate::runs`]). A sink that needs only the PC of every instruction
//! says so with [`Sink::wants_with_runs`]; such a source then calls
//! [`Sink::runs_follow`] before the first batch and delivers the
//! instruction stream to it through [`Sink::observe_runs`], and events only
//! of the classes named there. Other sources (trace files, generators)
//! deliver events as usual, so a sink that takes runs still handles the
//! plain event stream.

use crate::event::{ClassSet, Event};
use crate::runs::{Blocks, Run, RunBuilder};

/// Something that consumes batches of events.
///
/// The source calls [`wants`](Sink::wants) once before the first batch,
/// then [`observe`](Sink::observe) for every batch (or
/// [`observe_owned`](Sink::observe_owned), when it gives the batch away),
/// then [`finish`](Sink::finish) once at the end of the stream. A sink receives
/// at least every event of the classes it asked for, in program order; it may
/// also receive events of other classes (for example when it shares a
/// [`Fanout`] with a sink that wants more) and must skip those it does not
/// handle.
pub trait Sink {
    /// The classes this sink needs. The default is every class.
    fn wants(&self) -> ClassSet {
        ClassSet::ALL
    }

    /// Called with each batch of events, in stream order. Batches are never
    /// empty.
    fn observe(&mut self, batch: &[Event]);

    /// Called once after the last batch. The default does nothing.
    fn finish(&mut self) {}

    /// Events, and runs, per batch this sink would rather be given, if it
    /// has a preference. A sink that hands batches on whole to other threads
    /// ([`feed_on_threads`](crate::threads::feed_on_threads)) takes them
    /// at its message size, and a source that fills its batches to that
    /// size and gives them away with
    /// [`observe_owned`](Sink::observe_owned) then saves it a copy of
    /// every event. `None`, the default, leaves the size to the source;
    /// what a sink computes never depends on the size of its batches.
    fn batch_len(&self) -> Option<usize> {
        None
    }

    /// [`observe`](Sink::observe) of a batch the source gives away: the
    /// sink may keep the buffer, leaving another in its place. `batch` is
    /// empty when the call returns, its capacity unknown. The default
    /// observes the batch and clears it.
    fn observe_owned(&mut self, batch: &mut Vec<Event>) {
        self.observe(batch);
        batch.clear();
    }

    /// Whether this sink can take the instruction stream as runs of basic
    /// blocks, and if so the classes it still needs as events then. `None`,
    /// the default, means it takes no runs. A source that cannot make runs
    /// ignores this and asks [`wants`](Sink::wants).
    fn wants_with_runs(&self) -> Option<ClassSet> {
        None
    }

    /// Called once, before the first batch, by a source that will deliver
    /// the instruction stream as runs to a sink whose
    /// [`wants_with_runs`](Sink::wants_with_runs) is `Some`. From then on
    /// every retired instruction reaches the sink in a run, and events
    /// bring only what it named there (it may receive events of other
    /// classes too, and must not count them as instructions again). The
    /// default does nothing.
    fn runs_follow(&mut self) {}

    /// Called with each batch of runs, in stream order, after
    /// [`runs_follow`](Sink::runs_follow). `blocks` names every block a run
    /// refers to. Runs and event batches come in separate calls, each in
    /// stream order; a sink must not rely on how the two interleave. The
    /// default does nothing.
    fn observe_runs(&mut self, runs: &[Run], blocks: &Blocks) {
        let _ = (runs, blocks);
    }

    /// [`observe_runs`](Sink::observe_runs) of a batch the source gives
    /// away, as [`observe_owned`](Sink::observe_owned) is of events:
    /// `runs` is empty when the call returns. The default observes the
    /// runs and clears them.
    fn observe_runs_owned(&mut self, runs: &mut Vec<Run>, blocks: &Blocks) {
        self.observe_runs(runs, blocks);
        runs.clear();
    }

    /// Whether this sink wants to be told which thread runs
    /// ([`thread_switch`](Sink::thread_switch)). A source that tells has
    /// to deliver what it holds first, so it is asked; the default is
    /// `false`.
    fn wants_thread_switches(&self) -> bool {
        false
    }

    /// Called by a source that runs several threads on one stream (the
    /// RV64 simulator's one hart) when `tid` starts running: once before
    /// the first batch, and at every switch after delivering, events and
    /// runs alike, all that the previous thread ran. A trace file tells
    /// the switches it recorded (format version 2), in the same places;
    /// sources that cannot tell (version-1 traces, samples) never call
    /// it. The default does nothing.
    fn thread_switch(&mut self, tid: u64) {
        let _ = tid;
    }

    /// Whether this sink wants each sample's call stack
    /// ([`stack`](Sink::stack)). Unwinding costs a sampling source time
    /// at every sample, so it is asked; the default is `false`.
    fn wants_stacks(&self) -> bool {
        false
    }

    /// Called by a source that samples a program and unwinds its stack
    /// (the native tracer, when a sink asks) before it delivers a
    /// sample's event, in a batch of that event alone: the calls that
    /// were open when the sample was taken, outermost first. A stack the
    /// unwinder could not follow to the thread's first frame starts
    /// where it stopped; an empty one says no call is known. The events
    /// of such a stream are samples, not every instruction, so their
    /// calls and returns are not transfers to follow. The default does
    /// nothing.
    fn stack(&mut self, calls: &[OpenCall]) {
        let _ = calls;
    }
}

/// A call open on a sampled thread's stack, as an unwinder finds it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct OpenCall {
    /// The call instruction's address.
    pub call_site: u64,
    /// The entry of the function it called.
    pub target: u64,
}

/// Forwards every method of [`Sink`] to the sink behind a pointer.
macro_rules! forward_sink {
    ($($ty:ty),*) => {$(
        impl<S: Sink + ?Sized> Sink for $ty {
            fn wants(&self) -> ClassSet {
                (**self).wants()
            }
            fn observe(&mut self, batch: &[Event]) {
                (**self).observe(batch)
            }
            fn finish(&mut self) {
                (**self).finish()
            }
            fn batch_len(&self) -> Option<usize> {
                (**self).batch_len()
            }
            fn observe_owned(&mut self, batch: &mut Vec<Event>) {
                (**self).observe_owned(batch)
            }
            fn wants_with_runs(&self) -> Option<ClassSet> {
                (**self).wants_with_runs()
            }
            fn runs_follow(&mut self) {
                (**self).runs_follow()
            }
            fn observe_runs(&mut self, runs: &[Run], blocks: &Blocks) {
                (**self).observe_runs(runs, blocks)
            }
            fn observe_runs_owned(&mut self, runs: &mut Vec<Run>, blocks: &Blocks) {
                (**self).observe_runs_owned(runs, blocks)
            }
            fn wants_thread_switches(&self) -> bool {
                (**self).wants_thread_switches()
            }
            fn thread_switch(&mut self, tid: u64) {
                (**self).thread_switch(tid)
            }
            fn wants_stacks(&self) -> bool {
                (**self).wants_stacks()
            }
            fn stack(&mut self, calls: &[OpenCall]) {
                (**self).stack(calls)
            }
        }
    )*};
}

forward_sink!(&mut S, Box<S>);

/// Something that produces a stream of events and pushes it into a sink.
pub trait Source {
    /// The error a run can end with.
    type Error;

    /// Runs the source to its end, pushing every batch into `sink`, and
    /// calls `sink.finish()` when the stream ends normally. Returns the
    /// number of events delivered.
    fn run(&mut self, sink: &mut dyn Sink) -> Result<u64, Self::Error>;
}

/// What sinks fed together by one owner (an engine and its exact
/// counterpart, say) take with runs: the union of the classes they still
/// need as events, when every one of them takes runs, else `None`. Unlike
/// a [`Fanout`], such an owner passes runs to all of its sinks or to none.
pub fn all_with_runs<'a>(sinks: impl IntoIterator<Item = &'a dyn Sink>) -> Option<ClassSet> {
    sinks.into_iter().try_fold(ClassSet::NONE, |set, s| {
        s.wants_with_runs().map(|w| set.union(w))
    })
}

/// What members fed side by side take with runs, from each member's
/// [`wants_with_runs`](Sink::wants_with_runs) and [`wants`](Sink::wants):
/// `None` when none takes runs, else the union of the classes the members
/// that take runs still need as events and the classes the others want.
/// Unlike [`all_with_runs`], members that take runs get them while the
/// others get events.
pub fn any_with_runs(
    members: impl IntoIterator<Item = (Option<ClassSet>, ClassSet)>,
) -> Option<ClassSet> {
    let mut any = false;
    let set = members
        .into_iter()
        .fold(ClassSet::NONE, |set, (with_runs, wants)| {
            any |= with_runs.is_some();
            set.union(with_runs.unwrap_or(wants))
        });
    any.then_some(set)
}

/// Several sinks listening to one source. It wants the union of what its
/// members want and passes every batch to each of them. It takes runs when
/// any member does, and then passes runs to those members and events of
/// the union of the classes the others want (and those members still
/// need as events).
#[derive(Default)]
pub struct Fanout<'a> {
    sinks: Vec<&'a mut dyn Sink>,
    /// Members that were told runs follow, by position; empty until then.
    take_runs: Vec<bool>,
}

impl<'a> Fanout<'a> {
    /// An empty fan-out.
    pub fn new() -> Fanout<'a> {
        Fanout {
            sinks: Vec::new(),
            take_runs: Vec::new(),
        }
    }

    /// Adds a sink.
    pub fn push(&mut self, sink: &'a mut dyn Sink) {
        self.sinks.push(sink);
        self.take_runs.push(false);
    }

    /// Number of member sinks.
    pub fn len(&self) -> usize {
        self.sinks.len()
    }

    /// Whether there are no members.
    pub fn is_empty(&self) -> bool {
        self.sinks.is_empty()
    }
}

impl Sink for Fanout<'_> {
    fn wants(&self) -> ClassSet {
        self.sinks
            .iter()
            .fold(ClassSet::NONE, |s, k| s.union(k.wants()))
    }
    fn observe(&mut self, batch: &[Event]) {
        for s in &mut self.sinks {
            s.observe(batch);
        }
    }
    fn finish(&mut self) {
        for s in &mut self.sinks {
            s.finish();
        }
    }
    fn wants_with_runs(&self) -> Option<ClassSet> {
        any_with_runs(self.sinks.iter().map(|s| (s.wants_with_runs(), s.wants())))
    }
    fn runs_follow(&mut self) {
        for (s, takes) in self.sinks.iter_mut().zip(&mut self.take_runs) {
            *takes = s.wants_with_runs().is_some();
            if *takes {
                s.runs_follow();
            }
        }
    }
    fn observe_runs(&mut self, runs: &[Run], blocks: &Blocks) {
        for (s, takes) in self.sinks.iter_mut().zip(&self.take_runs) {
            if *takes {
                s.observe_runs(runs, blocks);
            }
        }
    }
    fn wants_thread_switches(&self) -> bool {
        self.sinks.iter().any(|s| s.wants_thread_switches())
    }
    fn thread_switch(&mut self, tid: u64) {
        for s in &mut self.sinks {
            s.thread_switch(tid);
        }
    }
    fn wants_stacks(&self) -> bool {
        self.sinks.iter().any(|s| s.wants_stacks())
    }
    fn stack(&mut self, calls: &[OpenCall]) {
        for s in &mut self.sinks {
            s.stack(calls);
        }
    }
}

/// A sink that wants nothing: a source that can tell (the simulator)
/// then builds no events, for a run wanted only for what the program
/// itself does.
#[derive(Clone, Copy, Debug, Default)]
pub struct Discard;

impl Sink for Discard {
    fn wants(&self) -> ClassSet {
        ClassSet::NONE
    }
    fn observe(&mut self, _batch: &[Event]) {}
}

/// A sink that keeps every event it receives, for tests and small streams.
/// [`Collect::default`] wants every class, as [`Collect::all`] does; one
/// that wants fewer says which in `wants`.
#[derive(Clone, Debug)]
pub struct Collect {
    /// The events received, in order.
    pub events: Vec<Event>,
    /// The classes it asks for.
    pub wants: ClassSet,
}

impl Collect {
    /// A collector of every class.
    pub fn all() -> Collect {
        Collect {
            events: Vec::new(),
            wants: ClassSet::ALL,
        }
    }
}

impl Default for Collect {
    /// A collector of every class: a sink that kept nothing by default
    /// would be fed nothing, and say nothing of it.
    fn default() -> Collect {
        Collect::all()
    }
}

impl Sink for Collect {
    fn wants(&self) -> ClassSet {
        self.wants
    }
    fn observe(&mut self, batch: &[Event]) {
        self.events
            .extend(batch.iter().filter(|e| self.wants.contains(e.class)));
    }
}

/// A source over events held in memory, delivered in batches of
/// `batch` events and filtered to the classes the sink wants. With
/// [`with_runs`](SliceSource::with_runs), it delivers the instruction
/// stream as runs of blocks to a sink that takes them.
pub struct SliceSource<'a> {
    events: &'a [Event],
    batch: usize,
    runs: bool,
}

impl<'a> SliceSource<'a> {
    /// A source over `events`, delivered 4096 at a time.
    pub fn new(events: &'a [Event]) -> SliceSource<'a> {
        SliceSource {
            events,
            batch: 4096,
            runs: false,
        }
    }

    /// Delivers the events as runs of blocks ([`RunBuilder`]) to a sink
    /// that takes runs, as the simulator does; the events must then be one
    /// per retired instruction. Each batch's runs come before its events.
    pub fn with_runs(mut self) -> SliceSource<'a> {
        self.runs = true;
        self
    }

    /// Sets the batch size (at least 1).
    pub fn batch_size(mut self, batch: usize) -> SliceSource<'a> {
        self.batch = batch.max(1);
        self
    }
}

impl Source for SliceSource<'_> {
    type Error = std::convert::Infallible;

    fn run(&mut self, sink: &mut dyn Sink) -> Result<u64, Self::Error> {
        let with_runs = if self.runs {
            sink.wants_with_runs()
        } else {
            None
        };
        if let Some(wants) = with_runs {
            sink.runs_follow();
            let mut builder = RunBuilder::new();
            let (mut runs, mut buf) = (Vec::new(), Vec::new());
            let mut delivered = 0u64;
            for chunk in self.events.chunks(self.batch) {
                // Both buffers are given away, and come back empty.
                runs.clear();
                builder.runs_of(chunk, &mut runs);
                sink.observe_runs_owned(&mut runs, &builder.blocks);
                buf.clear();
                buf.extend(chunk.iter().filter(|e| wants.contains(e.class)));
                if !buf.is_empty() {
                    delivered += buf.len() as u64;
                    sink.observe_owned(&mut buf);
                }
            }
            sink.finish();
            return Ok(delivered);
        }
        let wants = sink.wants();
        let mut delivered = 0u64;
        if wants == ClassSet::ALL {
            for chunk in self.events.chunks(self.batch) {
                sink.observe(chunk);
                delivered += chunk.len() as u64;
            }
        } else if !wants.is_empty() {
            let mut buf = Vec::with_capacity(self.batch);
            for e in self.events.iter().filter(|e| wants.contains(e.class)) {
                buf.push(*e);
                if buf.len() == self.batch {
                    sink.observe(&buf);
                    delivered += buf.len() as u64;
                    buf.clear();
                }
            }
            if !buf.is_empty() {
                sink.observe(&buf);
                delivered += buf.len() as u64;
            }
        }
        sink.finish();
        Ok(delivered)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::event::Class;

    #[test]
    fn a_default_collector_keeps_every_class() {
        let events = [
            Event::load(0, 0x1000, 8, 1),
            Event::new(4, Class::IntAlu),
            Event::new(8, Class::Other),
        ];
        let mut c = Collect::default();
        SliceSource::new(&events).run(&mut c).unwrap();
        assert_eq!(c.events, events);
    }

    #[test]
    fn slice_source_filters_to_wanted_classes() {
        let events: Vec<Event> = (0..10_000u64)
            .map(|i| {
                if i % 3 == 0 {
                    Event::load(i * 4, 0x1000, 8, i)
                } else {
                    Event::new(i * 4, Class::IntAlu)
                }
            })
            .collect();
        let mut c = Collect {
            events: vec![],
            wants: ClassSet::of(Class::Load),
        };
        let n = SliceSource::new(&events)
            .batch_size(100)
            .run(&mut c)
            .unwrap();
        assert_eq!(n, 3334);
        assert!(c.events.iter().all(|e| e.class == Class::Load));
        assert_eq!(c.events.len(), 3334);
    }

    #[test]
    fn fanout_wants_union_and_feeds_all() {
        let events = vec![
            Event::load(0, 1, 8, 2),
            Event::new(4, Class::IntAlu),
            Event::store(8, 1, 8, 3),
        ];
        let mut a = Collect {
            events: vec![],
            wants: ClassSet::of(Class::Load),
        };
        let mut b = Collect {
            events: vec![],
            wants: ClassSet::of(Class::Store),
        };
        let mut f = Fanout::new();
        f.push(&mut a);
        f.push(&mut b);
        assert_eq!(f.wants(), ClassSet::of(Class::Load).with(Class::Store));
        SliceSource::new(&events).run(&mut f).unwrap();
        assert_eq!(a.events.len(), 1);
        assert_eq!(b.events.len(), 1);
    }

    /// A sink that takes runs, counting the instructions they hold and the
    /// events it is given.
    struct RunCounter {
        with_runs: ClassSet,
        told: bool,
        instructions: u64,
        events: usize,
    }

    impl Sink for RunCounter {
        fn wants(&self) -> ClassSet {
            ClassSet::ALL
        }
        fn observe(&mut self, batch: &[Event]) {
            self.events += batch.len();
        }
        fn wants_with_runs(&self) -> Option<ClassSet> {
            Some(self.with_runs)
        }
        fn runs_follow(&mut self) {
            self.told = true;
        }
        fn observe_runs(&mut self, runs: &[Run], _: &Blocks) {
            self.instructions += crate::runs::instructions(runs);
        }
    }

    #[test]
    fn fanout_passes_runs_only_to_members_that_take_them() {
        let mut takes = RunCounter {
            with_runs: ClassSet::of(Class::CondBranch),
            told: false,
            instructions: 0,
            events: 0,
        };
        let mut plain = Collect {
            events: vec![],
            wants: ClassSet::of(Class::Load),
        };
        {
            let mut f = Fanout::new();
            f.push(&mut plain);
            assert_eq!(f.wants_with_runs(), None, "no member takes runs");
        }
        let mut f = Fanout::new();
        f.push(&mut takes);
        f.push(&mut plain);
        // With runs: what the runs-taker still needs, plus what the other
        // wants as events; without: the union of wants().
        assert_eq!(
            f.wants_with_runs(),
            Some(ClassSet::of(Class::CondBranch).with(Class::Load))
        );
        assert_eq!(f.wants(), ClassSet::ALL);
        f.runs_follow();
        let mut blocks = Blocks::new();
        let id = blocks.push(crate::runs::tests::block(&[0, 4, 8], Class::Jump), None);
        f.observe_runs(
            &[Run { block: id, len: 3 }, Run { block: id, len: 2 }],
            &blocks,
        );
        f.observe(&[Event::load(0, 1, 8, 2)]);
        drop(f);
        assert!(takes.told);
        assert_eq!((takes.instructions, takes.events), (5, 1));
        assert_eq!(plain.events.len(), 1);
    }
}
