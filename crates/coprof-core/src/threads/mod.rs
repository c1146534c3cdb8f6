//! Sinks fed on threads of their own, beside the source's.
//!
//! A live profile spends its time in two places: the simulator that makes
//! the events and the engines that summarize them. They share nothing but
//! the stream, so on a machine with more than one core the engines can run
//! beside the simulator instead of after it. [`feed_on_threads`] hands the
//! source a sink that feeds one group of sinks itself, on the source's
//! thread, and for the others gathers the batches into a buffer they all
//! share, and queues it to each group (with no group on the source's
//! thread, it asks for batches of a whole message, [`Sink::batch_len`],
//! and a batch given away whole, [`Sink::observe_owned`], becomes the
//! message with no copy); a group sees the same events in the same order
//! as it would in a [`Fanout`], so every report is the same as with one
//! thread. A group that takes the instruction stream as runs of basic
//! blocks and needs no events gets none, and then no events are copied
//! for it.
//!
//! The groups are not tied to threads: worker threads take turns at
//! whichever group has messages waiting, one thread at a time per group,
//! and when a group has [`QUEUE`] messages waiting the source's thread
//! takes turns too before it makes more (module `pool`). So memory stays
//! bounded whatever the speeds, and the cores go where the work is.
//! Runs of basic blocks name blocks of the source's [`Blocks`] table,
//! which only grows: the blocks that are new since the last batch travel
//! with the runs, and each group keeps its own copy of the table.

mod pool;

use std::sync::Arc;

use crate::event::{ClassSet, Event};
use crate::runs::{Blocks, Run};
use crate::stream::{any_with_runs, Fanout, OpenCall, Sink};
use pool::Pool;

/// Messages waiting at most for each group before the source's thread
/// helps feed the groups instead of making more.
pub const QUEUE: usize = 4;

/// Events (or runs) per message: the source's batches are gathered into
/// messages of this many before they are queued, so that a thread wakes
/// once per 32,768 (1 MiB of events), not once per batch of a few
/// thousand.
pub const MESSAGE: usize = 32768;

/// A sink that may be moved to another thread.
pub type SendSink<'a> = &'a mut (dyn Sink + Send);

/// What the source's thread sends each group's thread.
enum Message {
    Events(Arc<Vec<Event>>),
    RunsFollow,
    /// A batch of runs, with the blocks added to the table since the last.
    Runs(Arc<Vec<Run>>, Option<Arc<Blocks>>),
    /// Another thread runs from here on.
    Switch(u64),
    /// The next event's call stack.
    Stack(Arc<Vec<OpenCall>>),
    Finish,
}

/// One group, as the source's side sees it: its desk in the pool and
/// what it asked for before it started.
struct Group {
    desk: usize,
    wants: ClassSet,
    with_runs: Option<ClassSet>,
    takes_runs: bool,
    switches: bool,
    stacks: bool,
}

impl Group {
    /// Whether the group needs events: any class it wants, or, when it
    /// takes runs, any class it still wants as events then.
    fn needs_events(&self) -> bool {
        match (self.takes_runs, self.with_runs) {
            (true, Some(classes)) => !classes.is_empty(),
            _ => !self.wants.is_empty(),
        }
    }
}

/// Runs `body` with a sink that feeds `local` on the calling thread (the
/// source's) and `groups` on `workers` threads of their own, then feeds
/// what is left and returns what `body` returned. Each group is fed as a
/// [`Fanout`] of its sinks, by one thread at a time, any of the workers
/// or the source's when the group falls behind (module `pool`); with no
/// worker, the source's thread feeds every group itself. A panic of a
/// sink of a group is raised again here, once the source is done.
///
/// ```
/// use coprof_core::threads::feed_on_threads;
/// use coprof_core::{Collect, ExactCounts, SliceSource, Source};
/// use coprof_core::synth::{generate, GenConfig, Workload};
///
/// let events = generate(&GenConfig::new(Workload::Mixed, 20_000)).unwrap();
/// let (mut a, mut b) = (Collect::all(), ExactCounts::new());
/// let delivered = feed_on_threads(vec![&mut a], vec![vec![&mut b]], 1, |sink| {
///     SliceSource::new(&events).run(sink).unwrap()
/// });
/// assert_eq!(delivered, 20_000);
/// assert_eq!(a.events, events);
/// assert_eq!(b.events, 20_000);
/// ```
pub fn feed_on_threads<R>(
    local: Vec<&mut dyn Sink>,
    groups: Vec<Vec<SendSink<'_>>>,
    workers: usize,
    body: impl FnOnce(&mut dyn Sink) -> R,
) -> R {
    let count = groups.len();
    let pool = Pool::new(groups);
    let mut broadcast = Broadcast {
        local: Fanout::new(),
        local_takes_runs: false,
        groups: Vec::new(),
        pool: &pool,
        spare: Vec::new(),
        events: Vec::new(),
        runs: Vec::new(),
        blocks_sent: 0,
        new_blocks: Blocks::new(),
    };
    for s in local {
        broadcast.local.push(s);
    }
    for desk in 0..count {
        let (wants, with_runs, switches, stacks) = pool.ask(desk, |fan| {
            (
                fan.wants(),
                fan.wants_with_runs(),
                fan.wants_thread_switches(),
                fan.wants_stacks(),
            )
        });
        broadcast.groups.push(Group {
            desk,
            wants,
            with_runs,
            takes_runs: false,
            switches,
            stacks,
        });
    }
    std::thread::scope(|scope| {
        let pool = &pool;
        let handles: Vec<_> = (0..workers.min(count))
            .map(|home| {
                std::thread::Builder::new()
                    .name("coprof-engines".into())
                    .spawn_scoped(scope, move || pool.work(home))
                    .expect("a thread for the engines")
            })
            .collect();
        let out = body(&mut broadcast);
        drop(broadcast);
        // The source's thread feeds what is left beside the workers.
        let finished = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| pool.finish()));
        for h in handles {
            if let Err(panic) = h.join() {
                std::panic::resume_unwind(panic);
            }
        }
        if let Err(panic) = finished {
            std::panic::resume_unwind(panic);
        }
        out
    })
}

/// The sink the source feeds: feeds the local group, and gathers the
/// batches, once, into messages that it queues to every other group that
/// wants them.
struct Broadcast<'p, 'l, 'g> {
    /// The group fed on the source's thread.
    local: Fanout<'l>,
    local_takes_runs: bool,
    groups: Vec<Group>,
    /// The groups' desks.
    pool: &'p Pool<'g>,
    /// Event buffers, reused once every thread has let go of them.
    spare: Vec<Arc<Vec<Event>>>,
    /// The events gathered for the next message.
    events: Vec<Event>,
    /// The runs gathered for the next message.
    runs: Vec<Run>,
    /// Blocks of the source's table already sent.
    blocks_sent: usize,
    /// The blocks new since the last message of runs.
    new_blocks: Blocks,
}

impl Broadcast<'_, '_, '_> {
    /// Queues `m` to every group that `to` picks, feeding groups on this
    /// thread while one is behind (see [`Pool::send`]).
    fn send(&self, m: impl Fn() -> Message, to: impl Fn(&Group) -> bool) {
        for g in self.groups.iter().filter(|g| to(g)) {
            self.pool.send(g.desk, m());
        }
    }

    /// Queues the events gathered, in a shared buffer: a spare one if
    /// every thread is done with it, else a new one.
    fn send_events(&mut self) {
        if self.events.is_empty() {
            return;
        }
        let mut buffer = match self.spare.iter().position(|b| Arc::strong_count(b) == 1) {
            Some(i) => self.spare.swap_remove(i),
            None => Arc::new(Vec::with_capacity(MESSAGE)),
        };
        let v = Arc::get_mut(&mut buffer).expect("a buffer no thread holds");
        std::mem::swap(v, &mut self.events);
        self.events.clear();
        if self.spare.len() < 2 * QUEUE + 2 {
            self.spare.push(buffer.clone());
        }
        self.send(|| Message::Events(buffer.clone()), Group::needs_events);
    }

    /// Adds a batch of events to the next message with `add`, when a
    /// group needs events, and queues the message once it is full.
    fn add_events(&mut self, add: impl FnOnce(&mut Vec<Event>)) {
        if self.groups.iter().any(Group::needs_events) {
            add(&mut self.events);
            if self.events.len() >= MESSAGE {
                self.send_events();
            }
        }
    }

    /// Adds a batch of runs over `blocks` to the next message with `add`,
    /// with the blocks no thread has yet, when a group takes runs, and
    /// queues the message once it is full.
    fn add_runs(&mut self, blocks: &Blocks, add: impl FnOnce(&mut Vec<Run>)) {
        if self.groups.iter().any(|g| g.takes_runs) {
            self.new_blocks.append_from(blocks, self.blocks_sent);
            self.blocks_sent = blocks.len();
            add(&mut self.runs);
            if self.runs.len() >= MESSAGE {
                self.send_runs();
            }
        }
    }

    /// Queues the runs gathered, with the blocks they may name that no
    /// thread has yet.
    fn send_runs(&mut self) {
        if self.runs.is_empty() {
            return;
        }
        let runs = Arc::new(std::mem::replace(
            &mut self.runs,
            Vec::with_capacity(MESSAGE),
        ));
        let new =
            (!self.new_blocks.is_empty()).then(|| Arc::new(std::mem::take(&mut self.new_blocks)));
        self.send(
            || Message::Runs(runs.clone(), new.clone()),
            |g| g.takes_runs,
        );
    }
}

impl Sink for Broadcast<'_, '_, '_> {
    fn wants(&self) -> ClassSet {
        self.groups
            .iter()
            .fold(self.local.wants(), |s, g| s.union(g.wants))
    }
    fn observe(&mut self, batch: &[Event]) {
        self.add_events(|events| events.extend_from_slice(batch));
        self.local.observe(batch);
    }
    /// Batches of a whole message when no sink runs on the source's
    /// thread, so that each is sent as it comes, with no copy.
    fn batch_len(&self) -> Option<usize> {
        self.local.is_empty().then_some(MESSAGE)
    }
    fn observe_owned(&mut self, batch: &mut Vec<Event>) {
        self.local.observe(batch);
        self.add_events(|events| gather(events, batch));
        batch.clear();
    }
    fn finish(&mut self) {
        self.send_events();
        self.send_runs();
        self.send(|| Message::Finish, |_| true);
        self.local.finish();
    }
    fn wants_with_runs(&self) -> Option<ClassSet> {
        let local = (self.local.wants_with_runs(), self.local.wants());
        any_with_runs(
            std::iter::once(local).chain(self.groups.iter().map(|g| (g.with_runs, g.wants))),
        )
    }
    fn runs_follow(&mut self) {
        for g in &mut self.groups {
            g.takes_runs = g.with_runs.is_some();
        }
        self.send(|| Message::RunsFollow, |g| g.takes_runs);
        self.local_takes_runs = self.local.wants_with_runs().is_some();
        if self.local_takes_runs {
            self.local.runs_follow();
        }
    }
    fn observe_runs_owned(&mut self, runs: &mut Vec<Run>, blocks: &Blocks) {
        if self.local_takes_runs {
            self.local.observe_runs(runs, blocks);
        }
        self.add_runs(blocks, |gathered| gather(gathered, runs));
        runs.clear();
    }
    fn observe_runs(&mut self, runs: &[Run], blocks: &Blocks) {
        self.add_runs(blocks, |gathered| gathered.extend_from_slice(runs));
        if self.local_takes_runs {
            self.local.observe_runs(runs, blocks);
        }
    }
    fn wants_thread_switches(&self) -> bool {
        self.local.wants_thread_switches() || self.groups.iter().any(|g| g.switches)
    }
    /// Queues what was gathered before the switch, then the switch, to
    /// the groups that want it (the others' messages stay whole).
    fn thread_switch(&mut self, tid: u64) {
        if self.groups.iter().any(|g| g.switches) {
            self.send_events();
            self.send_runs();
            self.send(|| Message::Switch(tid), |g| g.switches);
        }
        self.local.thread_switch(tid);
    }
    fn wants_stacks(&self) -> bool {
        self.local.wants_stacks() || self.groups.iter().any(|g| g.stacks)
    }
    /// Queues what was gathered before the stack, then the stack, to the
    /// groups that want it.
    fn stack(&mut self, calls: &[OpenCall]) {
        if self.groups.iter().any(|g| g.stacks) {
            self.send_events();
            self.send_runs();
            let calls = Arc::new(calls.to_vec());
            self.send(|| Message::Stack(calls.clone()), |g| g.stacks);
        }
        self.local.stack(calls);
    }
}

/// Adds a batch the source gave away to what is `gathered` for the next
/// message: the batch itself when nothing is gathered yet (the source
/// gets the empty buffer it replaces), else a copy of it. `batch` is left
/// empty.
fn gather<T: Copy>(gathered: &mut Vec<T>, batch: &mut Vec<T>) {
    if gathered.is_empty() {
        std::mem::swap(gathered, batch);
    } else {
        gathered.extend_from_slice(batch);
        batch.clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::exact::ExactCounts;
    use crate::synth::{generate, GenConfig, Workload};
    use crate::{Collect, SliceSource, Source};

    /// A sink that takes runs and expands them back to PCs, and counts
    /// the events it is given although it needs none.
    #[derive(Default)]
    struct Pcs(Vec<u64>, usize);

    impl Sink for Pcs {
        fn wants(&self) -> ClassSet {
            ClassSet::ALL
        }
        fn observe(&mut self, batch: &[Event]) {
            self.1 += batch.len();
        }
        fn wants_with_runs(&self) -> Option<ClassSet> {
            Some(ClassSet::NONE)
        }
        fn observe_runs(&mut self, runs: &[Run], blocks: &Blocks) {
            crate::runs::for_each_pc(runs, blocks, |pc| self.0.push(pc));
        }
    }

    #[test]
    fn every_group_sees_the_stream_a_fanout_would() {
        let events = generate(&GenConfig::new(Workload::Mixed, 200_000)).unwrap();
        let mut serial = (Collect::all(), ExactCounts::new(), Pcs::default());
        {
            let mut fan = Fanout::new();
            fan.push(&mut serial.0);
            fan.push(&mut serial.1);
            fan.push(&mut serial.2);
            SliceSource::new(&events).with_runs().run(&mut fan).unwrap();
        }
        // Each group on a worker of its own, both on one worker, and
        // both fed by the source's thread alone.
        for workers in [2, 1, 0] {
            let mut threaded = (Collect::all(), ExactCounts::new(), Pcs::default());
            let n = feed_on_threads(
                vec![&mut threaded.0],
                vec![vec![&mut threaded.1], vec![&mut threaded.2]],
                workers,
                |sink| SliceSource::new(&events).with_runs().run(sink).unwrap(),
            );
            assert_eq!(n, 200_000);
            assert_eq!(threaded.0.events, serial.0.events);
            assert_eq!(format!("{:?}", threaded.1), format!("{:?}", serial.1));
            assert_eq!(threaded.2 .0, serial.2 .0, "{workers} workers");
            assert_eq!(threaded.2 .0.len(), 200_000, "every PC came in a run");
            assert_eq!(
                threaded.2 .1, 0,
                "a group that takes runs only gets no events"
            );
        }
    }

    #[test]
    fn runs_and_events_given_away_whole_reach_every_group_unchanged() {
        let events = generate(&GenConfig::new(Workload::Mixed, 300_000)).unwrap();
        let mut serial = (ExactCounts::new(), Pcs::default());
        {
            let mut fan = Fanout::new();
            fan.push(&mut serial.0);
            fan.push(&mut serial.1);
            SliceSource::new(&events).with_runs().run(&mut fan).unwrap();
        }
        // Batches of a message each, as the simulator gives them when no
        // sink is on its thread, then of a few thousand, gathered.
        for (batch, workers) in [(MESSAGE, 2), (3000, 2), (MESSAGE, 1), (3000, 1)] {
            let mut threaded = (ExactCounts::new(), Pcs::default());
            feed_on_threads(
                vec![],
                vec![vec![&mut threaded.0], vec![&mut threaded.1]],
                workers,
                |sink| {
                    SliceSource::new(&events)
                        .with_runs()
                        .batch_size(batch)
                        .run(sink)
                        .unwrap()
                },
            );
            assert_eq!(format!("{:?}", threaded.0), format!("{:?}", serial.0));
            assert_eq!(
                threaded.1 .0, serial.1 .0,
                "batches of {batch}, {workers} workers"
            );
        }
    }

    #[test]
    fn batches_given_away_whole_reach_every_group_unchanged() {
        let events = generate(&GenConfig::new(Workload::Mixed, 5 * MESSAGE as u64)).unwrap();
        // Whole messages, then sizes that leave part of one gathered.
        let sizes = [MESSAGE, 100, MESSAGE - 1, MESSAGE + MESSAGE / 2, 1];
        let (mut a, mut b) = (Collect::all(), Collect::all());
        let returned = feed_on_threads(vec![], vec![vec![&mut a], vec![&mut b]], 2, |sink| {
            assert_eq!(sink.batch_len(), Some(MESSAGE), "no sink on this thread");
            let mut rest = &events[..];
            let mut buffer = Vec::new();
            let mut returned = Vec::new();
            for &n in sizes.iter().cycle() {
                if rest.is_empty() {
                    break;
                }
                let (batch, tail) = rest.split_at(n.min(rest.len()));
                buffer.extend_from_slice(batch);
                sink.observe_owned(&mut buffer);
                returned.push(buffer.len());
                rest = tail;
            }
            sink.finish();
            returned
        });
        assert!(
            returned.iter().all(|&n| n == 0),
            "the buffer comes back empty"
        );
        assert_eq!(a.events, events);
        assert_eq!(b.events, events);
        let mut local = Collect::all();
        feed_on_threads(vec![&mut local], vec![vec![&mut a]], 1, |sink| {
            assert_eq!(
                sink.batch_len(),
                None,
                "a sink on this thread takes batches"
            );
        });
    }

    #[test]
    fn a_panic_on_an_engine_thread_reaches_the_caller() {
        struct Boom;
        impl Sink for Boom {
            fn observe(&mut self, _: &[Event]) {
                panic!("boom");
            }
        }
        let events = generate(&GenConfig::new(Workload::Mixed, 50_000)).unwrap();
        for workers in [1, 0] {
            let mut also = ExactCounts::new();
            let caught = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                feed_on_threads(
                    vec![],
                    vec![vec![&mut Boom], vec![&mut also]],
                    workers,
                    |sink| SliceSource::new(&events).run(sink).unwrap(),
                )
            }));
            let panic = caught.expect_err("the sink's panic");
            assert_eq!(
                panic.downcast_ref::<&str>(),
                Some(&"boom"),
                "{workers} workers"
            );
            assert_eq!(also.events, 50_000, "the other group got every event");
        }
    }
}
