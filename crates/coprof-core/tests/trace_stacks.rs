//! Stacks in trace files (format version 3): each sampled event's stack
//! written before it, read back before it, to the sinks that want them.

use coprof_core::trace::{TraceMeta, TraceReader, TraceWriter, VERSION, VERSION_WITHOUT_STACKS};
use coprof_core::{Class, ClassSet, Event, OpenCall, Sink, Source};
use proptest::prelude::*;
use std::path::Path;

fn meta(stacks: bool) -> TraceMeta {
    TraceMeta {
        source: "native".into(),
        isa: "x86-64".into(),
        stacks,
        ..TraceMeta::default()
    }
}

/// What a sink was told, in order.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Seen {
    Event(u64),
    Switch(u64),
    Stack(Vec<OpenCall>),
}

/// A sink that records what it is told, and the sizes of the batches
/// that follow a stack.
struct Recorder {
    stacks: bool,
    wants: ClassSet,
    seen: Vec<Seen>,
    after_stack: Vec<usize>,
}

impl Recorder {
    fn new(stacks: bool) -> Recorder {
        Recorder {
            stacks,
            wants: ClassSet::ALL,
            seen: Vec::new(),
            after_stack: Vec::new(),
        }
    }
}

impl Sink for Recorder {
    fn wants(&self) -> ClassSet {
        self.wants
    }
    fn observe(&mut self, batch: &[Event]) {
        if matches!(self.seen.last(), Some(Seen::Stack(_))) {
            self.after_stack.push(batch.len());
        }
        self.seen.extend(batch.iter().map(|e| Seen::Event(e.pc)));
    }
    fn wants_thread_switches(&self) -> bool {
        true
    }
    fn thread_switch(&mut self, tid: u64) {
        self.seen.push(Seen::Switch(tid));
    }
    fn wants_stacks(&self) -> bool {
        self.stacks
    }
    fn stack(&mut self, calls: &[OpenCall]) {
        self.seen.push(Seen::Stack(calls.to_vec()));
    }
}

/// One step of a sampling source.
#[derive(Clone, Debug)]
enum Step {
    /// Another thread's samples follow.
    Switch(u64),
    /// A sample with its stack; a store, which the trace does not keep,
    /// when `dropped`.
    Sample {
        calls: Vec<(u64, u64)>,
        dropped: bool,
    },
    /// Events with no stack.
    Plain(usize),
}

fn arb_step() -> impl Strategy<Value = Step> {
    prop_oneof![
        (1u64..4).prop_map(Step::Switch),
        (
            proptest::collection::vec((0u64..1 << 48, 0u64..1 << 48), 0..12),
            proptest::bool::weighted(0.2)
        )
            .prop_map(|(calls, dropped)| Step::Sample { calls, dropped }),
        (1usize..5).prop_map(Step::Plain),
    ]
}

fn open_calls(calls: &[(u64, u64)]) -> Vec<OpenCall> {
    calls
        .iter()
        .map(|&(call_site, target)| OpenCall { call_site, target })
        .collect()
}

/// Feeds `steps` to a trace at `path` holding stacks, of every class but
/// stores, and returns what a reader that wants stacks should be told.
fn write_steps(path: &Path, steps: &[Step]) -> Vec<Seen> {
    let kept = ClassSet::from_bits(ClassSet::ALL.bits() & !ClassSet::of(Class::Store).bits());
    let mut w = TraceWriter::create(path, meta(true), kept).unwrap();
    assert!(w.wants_stacks());
    let (mut want, mut pc) = (Vec::new(), 0u64);
    let (mut pending, mut thread) = (None, None);
    let mut switched = |want: &mut Vec<Seen>, pending: &mut Option<u64>| {
        if let Some(tid) = pending.take() {
            if thread != Some(tid) {
                want.push(Seen::Switch(tid));
                thread = Some(tid);
            }
        }
    };
    for step in steps {
        match step {
            Step::Switch(tid) => {
                w.thread_switch(*tid);
                pending = Some(*tid);
            }
            Step::Sample { calls, dropped } => {
                pc += 1;
                let class = if *dropped {
                    Class::Store
                } else {
                    Class::IntAlu
                };
                w.stack(&open_calls(calls));
                w.observe(&[Event::new(pc, class)]);
                if !dropped {
                    switched(&mut want, &mut pending);
                    want.push(Seen::Stack(open_calls(calls)));
                    want.push(Seen::Event(pc));
                }
            }
            Step::Plain(n) => {
                let batch: Vec<Event> = (0..*n)
                    .map(|_| {
                        pc += 1;
                        Event::new(pc, Class::Load)
                    })
                    .collect();
                w.observe(&batch);
                switched(&mut want, &mut pending);
                want.extend(batch.iter().map(|e| Seen::Event(e.pc)));
            }
        }
    }
    w.finish();
    let stacks = want.iter().filter(|s| matches!(s, Seen::Stack(_))).count();
    assert_eq!(w.commit().unwrap().stacks, stacks as u64);
    want
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn each_kept_samples_stack_is_read_back_right_before_it(
        steps in proptest::collection::vec(arb_step(), 0..60),
    ) {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s.cpt");
        let want = write_steps(&path, &steps);
        let mut r = TraceReader::open(&path).unwrap();
        prop_assert_eq!(r.version(), VERSION);
        prop_assert!(r.meta().stacks);
        let mut got = Recorder::new(true);
        r.run(&mut got).unwrap();
        prop_assert_eq!(&got.seen, &want);
        // Each stack's event comes in a batch of its own.
        prop_assert!(got.after_stack.iter().all(|&n| n == 1), "{:?}", got.after_stack);
        // A sink that does not want stacks gets the same events and
        // switches, and no stack.
        let mut plain = Recorder::new(false);
        TraceReader::open(&path).unwrap().run(&mut plain).unwrap();
        let without: Vec<Seen> =
            want.into_iter().filter(|s| !matches!(s, Seen::Stack(_))).collect();
        prop_assert_eq!(plain.seen, without);
        // A sink that wants loads alone gets no stack: the samples'
        // events are not loads.
        let mut loads = Recorder::new(true);
        loads.wants = ClassSet::of(Class::Load);
        TraceReader::open(&path).unwrap().run(&mut loads).unwrap();
        prop_assert!(!loads.seen.iter().any(|s| matches!(s, Seen::Stack(_))));
    }
}

#[test]
fn a_trace_without_stacks_keeps_none_and_is_written_as_version_2() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("p.cpt");
    let mut w = TraceWriter::create(&path, meta(false), ClassSet::ALL).unwrap();
    assert!(!w.wants_stacks());
    w.stack(&open_calls(&[(0x10, 0x20)]));
    w.observe(&[Event::new(1, Class::IntAlu)]);
    w.finish();
    assert_eq!(w.commit().unwrap().stacks, 0);
    let mut r = TraceReader::open(&path).unwrap();
    assert_eq!(r.version(), VERSION_WITHOUT_STACKS);
    assert!(!r.meta().stacks);
    let mut got = Recorder::new(true);
    r.run(&mut got).unwrap();
    assert_eq!(got.seen, [Seen::Event(1)]);
}

#[test]
fn the_process_and_its_whole_stacks_are_kept_in_the_final_metadata() {
    let dir = tempfile::tempdir().unwrap();
    let write = |name: &str, stacks: bool, told: bool| -> TraceMeta {
        let path = dir.path().join(name);
        let mut w = TraceWriter::create(&path, meta(stacks), ClassSet::ALL).unwrap();
        w.stack(&open_calls(&[(0x10, 0x20)]));
        w.observe(&[Event::new(1, Class::IntAlu)]);
        w.finish();
        if told {
            w.set_pid(u32::MAX);
            w.set_whole_stacks(u64::MAX);
        }
        w.commit().unwrap();
        TraceReader::open(&path).unwrap().meta().clone()
    };
    let told = write("told.cpt", true, true);
    assert_eq!(
        (told.pid, told.whole_stacks),
        (Some(u32::MAX), Some(u64::MAX))
    );
    let untold = write("untold.cpt", true, false);
    assert_eq!((untold.pid, untold.whole_stacks), (None, None));
    // A trace without stacks has no count of whole ones.
    let flat = write("flat.cpt", false, true);
    assert_eq!((flat.pid, flat.whole_stacks), (Some(u32::MAX), None));
}
