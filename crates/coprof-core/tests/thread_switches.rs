//! Thread switches in trace files (format version 2): written where the
//! source said, read back in place among the events, and the damage a
//! reader must name.

use coprof_core::trace::{TraceErrorKind, TraceMeta, TraceReader, TraceWriter, CHUNK_EVENTS};
use coprof_core::{Class, ClassSet, Event, Sink, Source};
use proptest::prelude::*;
use std::path::Path;

fn meta() -> TraceMeta {
    TraceMeta {
        source: "test".into(),
        isa: "synthetic".into(),
        ..TraceMeta::default()
    }
}

/// What a sink saw: runs of events' PCs and the switches between them.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Seen {
    Events(Vec<u64>),
    Switch(u64),
}

/// A sink that records what it is told, with or without the switches.
struct Recorder {
    switches: bool,
    wants: ClassSet,
    seen: Vec<Seen>,
}

impl Recorder {
    fn new(switches: bool) -> Recorder {
        Recorder {
            switches,
            wants: ClassSet::ALL,
            seen: Vec::new(),
        }
    }

    fn push_events(&mut self, pcs: impl IntoIterator<Item = u64>) {
        let pcs: Vec<u64> = pcs.into_iter().collect();
        if pcs.is_empty() {
            return;
        }
        match self.seen.last_mut() {
            Some(Seen::Events(v)) => v.extend(pcs),
            _ => self.seen.push(Seen::Events(pcs)),
        }
    }
}

impl Sink for Recorder {
    fn wants(&self) -> ClassSet {
        self.wants
    }
    fn observe(&mut self, batch: &[Event]) {
        self.push_events(batch.iter().map(|e| e.pc));
    }
    fn wants_thread_switches(&self) -> bool {
        self.switches
    }
    fn thread_switch(&mut self, tid: u64) {
        self.seen.push(Seen::Switch(tid));
    }
}

/// One step of a source: a batch of `n` events, or a switch.
#[derive(Clone, Debug)]
enum Step {
    Batch(usize),
    Switch(u64),
}

/// Runs `steps` into a trace at `path` through the writer's [`Sink`]
/// side, the events' PCs counting up from 1, and returns what a reader
/// that follows threads should see: each switch that is followed by an
/// event and names another thread than the last one kept.
fn write_steps(path: &Path, steps: &[Step]) -> Vec<Seen> {
    let mut w = TraceWriter::create(path, meta(), ClassSet::ALL).unwrap();
    let mut want = Recorder::new(true);
    let mut pc = 0u64;
    let mut pending = None;
    let mut thread = None;
    for step in steps {
        match *step {
            Step::Switch(tid) => {
                w.thread_switch(tid);
                pending = Some(tid);
            }
            Step::Batch(n) => {
                let batch: Vec<Event> = (0..n)
                    .map(|_| {
                        pc += 1;
                        Event::new(pc, Class::IntAlu)
                    })
                    .collect();
                w.observe(&batch);
                if n > 0 {
                    if let Some(tid) = pending.take() {
                        if thread != Some(tid) {
                            want.thread_switch(tid);
                            thread = Some(tid);
                        }
                    }
                    want.observe(&batch);
                }
            }
        }
    }
    w.finish();
    let summary = w.commit().unwrap();
    let switches = want.seen.iter().filter(|s| matches!(s, Seen::Switch(_)));
    assert_eq!(summary.switches, switches.count() as u64);
    want.seen
}

fn read(path: &Path, sink: &mut Recorder) -> u64 {
    TraceReader::open(path).unwrap().run(sink).unwrap()
}

/// The error reading the trace at `path` ends in.
fn error_of(path: &Path) -> coprof_core::trace::TraceError {
    TraceReader::open(path)
        .unwrap()
        .run(&mut Recorder::new(true))
        .unwrap_err()
}

fn arb_steps() -> impl Strategy<Value = Vec<Step>> {
    proptest::collection::vec(
        prop_oneof![
            (0usize..50).prop_map(Step::Batch),
            (1u64..4).prop_map(Step::Switch),
        ],
        0..60,
    )
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    /// Every switch that matters comes back in place among the events; a
    /// sink that does not follow threads gets the events alone.
    #[test]
    fn switches_come_back_in_place(steps in arb_steps()) {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("t.cpt");
        let want = write_steps(&p, &steps);
        let mut got = Recorder::new(true);
        read(&p, &mut got);
        prop_assert_eq!(&got.seen, &want);

        let mut flat = Recorder::new(false);
        read(&p, &mut flat);
        let pcs: Vec<u64> = want.iter().flat_map(|s| match s {
            Seen::Events(v) => v.clone(),
            Seen::Switch(_) => Vec::new(),
        }).collect();
        let got_pcs: Vec<u64> = flat.seen.iter().flat_map(|s| match s {
            Seen::Events(v) => v.clone(),
            Seen::Switch(_) => panic!("a switch given to a sink that does not want them"),
        }).collect();
        prop_assert_eq!(got_pcs, pcs);
    }
}

#[test]
fn switches_across_chunks_and_counts_leave_them_out() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("t.cpt");
    // Threads 1 and 2 take turns of 40,000 events: switches inside chunks
    // and right at a chunk's start.
    let mut steps = Vec::new();
    for turn in 0..6u64 {
        steps.push(Step::Switch(1 + turn % 2));
        steps.push(Step::Batch(if turn == 1 {
            CHUNK_EVENTS - 40_000
        } else {
            40_000
        }));
    }
    let want = write_steps(&p, &steps);
    let mut got = Recorder::new(true);
    let events = read(&p, &mut got);
    assert_eq!(got.seen, want);
    assert_eq!(events, 5 * 40_000 + (CHUNK_EVENTS as u64 - 40_000));
    let mut r = TraceReader::open(&p).unwrap();
    assert_eq!(r.version(), coprof_core::trace::VERSION_WITHOUT_STACKS);
    let mut per_chunk = Vec::new();
    let mut pieces = Vec::new();
    while let Some(b) = r.next_batch().unwrap() {
        let n = b.len();
        per_chunk.push((
            n,
            r.switches()
                .iter()
                .map(|s| (s.at, s.tid))
                .collect::<Vec<_>>(),
        ));
        pieces.push(r.pieces().collect::<Vec<_>>());
    }
    // The second chunk starts where thread 1's second turn does.
    assert_eq!(per_chunk[0].1, vec![(0, 1), (40_000, 2)]);
    assert_eq!(per_chunk[1].1, vec![(0, 1), (40_000, 2)]);
    // Cut at the switches: nothing before the first, then each turn.
    let n = CHUNK_EVENTS;
    assert_eq!(
        pieces[0],
        vec![(None, 0..0), (Some(1), 0..40_000), (Some(2), 40_000..n)]
    );
    // The third chunk goes on with the rest of thread 2's second turn
    // (the second chunk held n - 40,000 of it) before thread 1 takes over.
    assert_eq!(pieces[2][0], (None, 0..40_000 - (n - 40_000)));
    assert_eq!(pieces[2][1].0, Some(1));
    assert_eq!(r.stats().switches, 6);
    assert_eq!(r.stats().events, events);
    assert_eq!(r.meta().events, events);
}

#[test]
fn a_filtered_sink_gets_the_switches_between_its_classes() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("t.cpt");
    let mut w = TraceWriter::create(&p, meta(), ClassSet::ALL).unwrap();
    w.thread_switch(7);
    w.observe(&[Event::new(1, Class::Call), Event::new(2, Class::Load)]);
    w.thread_switch(8);
    w.observe(&[Event::new(3, Class::Load)]);
    w.thread_switch(7);
    w.observe(&[Event::new(4, Class::Return)]);
    w.commit().unwrap();
    let mut got = Recorder::new(true);
    got.wants = ClassSet::of(Class::Call).with(Class::Return);
    read(&p, &mut got);
    assert_eq!(
        got.seen,
        vec![
            Seen::Switch(7),
            Seen::Events(vec![1]),
            Seen::Switch(8),
            Seen::Switch(7),
            Seen::Events(vec![4]),
        ]
    );
}

/// The trace's bytes with its version set to `v`.
fn with_version(p: &Path, v: u16) -> std::path::PathBuf {
    let mut b = std::fs::read(p).unwrap();
    b[8..10].copy_from_slice(&v.to_le_bytes());
    let q = p.with_extension("v.cpt");
    std::fs::write(&q, b).unwrap();
    q
}

#[test]
fn version_1_reads_without_switches_and_refuses_them() {
    let dir = tempfile::tempdir().unwrap();
    let plain = dir.path().join("plain.cpt");
    let want = write_steps(&plain, &[Step::Batch(100)]);
    let v1 = with_version(&plain, 1);
    let mut got = Recorder::new(true);
    assert_eq!(read(&v1, &mut got), 100);
    assert_eq!(got.seen, want);
    assert_eq!(TraceReader::open(&v1).unwrap().version(), 1);

    // In version 1 a switch record is no record at all.
    let threaded = dir.path().join("threaded.cpt");
    write_steps(&threaded, &[Step::Switch(1), Step::Batch(10)]);
    let v1 = with_version(&threaded, 1);
    let e = error_of(&v1);
    assert!(matches!(e.kind, TraceErrorKind::Corrupt(_)), "{e}");
    assert!(
        e.to_string()
            .contains("record 0 at raw byte 0 of the chunk: unknown instruction class 15"),
        "{e}"
    );
    let e = TraceReader::open(&with_version(&threaded, 4))
        .err()
        .unwrap();
    assert!(
        e.to_string()
            .contains("version 4 is not supported (this coprof reads versions 1 to 3)"),
        "{e}"
    );
}

/// A trace of one chunk whose records are `raw`, holding `count` events.
fn one_chunk(p: &Path, raw: &[u8], count: u32) {
    let mut w = TraceWriter::create(p, meta(), ClassSet::ALL).unwrap();
    w.observe(&[]);
    w.commit().unwrap();
    let mut b = std::fs::read(p).unwrap();
    let end = b.split_off(b.len() - 16);
    let packed = zstd::bulk::compress(raw, 3).unwrap();
    b.extend_from_slice(b"CHNK");
    b.extend_from_slice(&(packed.len() as u32).to_le_bytes());
    b.extend_from_slice(&(raw.len() as u32).to_le_bytes());
    b.extend_from_slice(&count.to_le_bytes());
    b.extend_from_slice(&crc32fast::hash(&packed).to_le_bytes());
    b.extend_from_slice(&packed);
    b.extend_from_slice(&end[..8]);
    b.extend_from_slice(&(count as u64).to_le_bytes());
    std::fs::write(p, b).unwrap();
}

#[test]
fn damaged_switch_records_are_named() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("bad.cpt");
    // A switch whose thread id ends early: tag 0x0f, then a varint byte
    // that says more follow.
    one_chunk(&p, &[0x06, 0x02, 0x0f, 0x80], 1);
    let e = error_of(&p);
    assert!(
        e.to_string()
            .contains("record 1 at raw byte 2 of the chunk: records end early"),
        "{e}"
    );
    // Class 15 with another tag bit is no switch.
    one_chunk(&p, &[0x1f, 0x02, 0x00], 1);
    let e = error_of(&p);
    assert!(
        e.to_string().contains("unknown instruction class 15"),
        "{e}"
    );
    // A well-formed chunk of one event after a switch reads.
    one_chunk(&p, &[0x0f, 0x05, 0x06, 0x02], 1);
    let mut got = Recorder::new(true);
    read(&p, &mut got);
    assert_eq!(got.seen, vec![Seen::Switch(5), Seen::Events(vec![1])]);
    // Switches after the count's last event are allowed; events are not.
    one_chunk(&p, &[0x06, 0x02, 0x06, 0x02], 1);
    let e = error_of(&p);
    assert!(
        e.to_string().contains("2 bytes left over after 1 records"),
        "{e}"
    );
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]

    /// Any records in a chunk whose header and checksum are right, switch
    /// tags among them, read as events and switches or fail with an
    /// error; never a panic.
    #[test]
    fn any_records_read_or_fail_cleanly(
        raw in proptest::collection::vec(
            prop_oneof![Just(0x0fu8), Just(0x80), Just(0x06), any::<u8>()],
            0..200,
        ),
        count in 0u32..100,
    ) {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("any.cpt");
        one_chunk(&p, &raw, count);
        let mut got = Recorder::new(true);
        if let Ok(n) = TraceReader::open(&p).unwrap().run(&mut got) {
            prop_assert_eq!(n, count as u64);
        }
    }
}
