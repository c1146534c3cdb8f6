//! Trace files: round trips, and every kind of damage a reader must name.

use coprof_core::synth::{generate, GenConfig, Workload};
use coprof_core::trace::{TraceErrorKind, TraceMeta, TraceReader, TraceWriter, CHUNK_EVENTS};
use coprof_core::{flags, Class, ClassSet, Collect, Event, Source};
use proptest::prelude::*;
use std::path::{Path, PathBuf};

fn meta() -> TraceMeta {
    TraceMeta {
        source: "test".into(),
        isa: "synthetic".into(),
        program: "unit".into(),
        args: vec!["a b".into(), "c".into()],
        ..TraceMeta::default()
    }
}

fn write(path: &Path, events: &[Event]) {
    let mut w = TraceWriter::create(path, meta(), ClassSet::ALL).unwrap();
    w.write(events).unwrap();
    w.commit().unwrap();
}

fn read_all(path: &Path) -> Result<Vec<Event>, coprof_core::trace::TraceError> {
    let mut r = TraceReader::open(path)?;
    let mut c = Collect::all();
    r.run(&mut c)?;
    Ok(c.events)
}

/// Events as a trace keeps them: `value` only when `HAS_VALUE` says it is one.
fn canonical(e: &Event) -> Event {
    let mut e = *e;
    if e.flags & flags::HAS_VALUE == 0 {
        e.value = 0;
    }
    e
}

fn arb_event() -> impl Strategy<Value = Event> {
    (
        any::<u64>(),
        any::<u64>(),
        any::<u64>(),
        0u8..11,
        prop_oneof![Just(0u8), Just(1), Just(2), Just(4), Just(8), any::<u8>()],
        0u16..=flags::KNOWN,
    )
        .prop_map(|(pc, addr, value, c, size, fl)| Event {
            pc,
            addr,
            value,
            class: Class::from_u8(c).unwrap(),
            size,
            flags: fl,
        })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]
    #[test]
    fn any_events_round_trip(events in proptest::collection::vec(arb_event(), 0..3000)) {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("t.cpt");
        write(&p, &events);
        let back = read_all(&p).unwrap();
        let want: Vec<Event> = events.iter().map(canonical).collect();
        prop_assert_eq!(back, want);
    }
}

#[test]
fn multi_chunk_round_trip_and_metadata() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("loops.cpt");
    let events = generate(&GenConfig::new(
        Workload::Mixed,
        CHUNK_EVENTS as u64 * 2 + 17,
    ))
    .unwrap();
    write(&p, &events);
    let mut r = TraceReader::open(&p).unwrap();
    assert_eq!(r.meta().events, events.len() as u64);
    assert_eq!(r.meta().args, vec!["a b".to_string(), "c".to_string()]);
    let loads = events.iter().filter(|e| e.class == Class::Load).count() as u64;
    assert_eq!(r.meta().class_counts["load"], loads);
    let mut c = Collect::all();
    r.run(&mut c).unwrap();
    assert_eq!(c.events, events.iter().map(canonical).collect::<Vec<_>>());
    assert_eq!(r.stats().chunks, 3);
}

/// A program that maps more libraries than the header's room holds (a
/// large application, Python with many extension modules): every module
/// is kept, in order, and the events after the larger header read back
/// the same.
#[test]
fn modules_beyond_the_reserved_room_are_all_kept() {
    use coprof_core::trace::Module;
    let dir = tempfile::tempdir().unwrap();
    let module = |i: u64| {
        Module {
        start: 0x40_0000_0000 + i * 0x10_0000,
        end: 0x40_0000_0000 + i * 0x10_0000 + 0x8000,
        bias: 0x40_0000_0000 + i * 0x10_0000,
        path: format!("/usr/lib/riscv64-linux-gnu/python3.13/lib-dynload/ext{i:04}.cpython-313-riscv64-linux-gnu.so").into(),
    }
    };
    let events = generate(&GenConfig::new(Workload::Mixed, CHUNK_EVENTS as u64 + 99)).unwrap();
    for count in [3u64, 400] {
        let p = dir.path().join(format!("m{count}.cpt"));
        let start = TraceMeta {
            modules: vec![module(0)],
            ..meta()
        };
        let mut w = TraceWriter::create(&p, start, ClassSet::ALL).unwrap();
        w.write(&events).unwrap();
        let all: Vec<Module> = (0..count).map(module).collect();
        w.set_modules(all.clone(), None);
        let summary = w.commit().unwrap();
        assert_eq!(
            summary.file_bytes,
            std::fs::metadata(&p).unwrap().len(),
            "{count} modules: the size reported is the file's"
        );
        let mut r = TraceReader::open(&p).unwrap();
        assert_eq!(r.meta().modules, all, "{count} modules");
        assert_eq!(r.meta().events, events.len() as u64);
        let mut c = Collect::all();
        r.run(&mut c).unwrap();
        assert_eq!(c.events, events.iter().map(canonical).collect::<Vec<_>>());
        let left: Vec<_> = std::fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .filter(|n| n.ends_with(".tmp"))
            .collect();
        assert!(left.is_empty(), "temporary files left: {left:?}");
    }
}

#[test]
fn reader_filters_to_wanted_classes() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("m.cpt");
    let events = generate(&GenConfig::new(Workload::Mixed, 10_000)).unwrap();
    write(&p, &events);
    let mut c = Collect {
        events: vec![],
        wants: ClassSet::of(Class::Store),
    };
    let n = TraceReader::open(&p).unwrap().run(&mut c).unwrap();
    let stores = events.iter().filter(|e| e.class == Class::Store).count();
    assert_eq!(n as usize, stores);
    assert_eq!(c.events.len(), stores);
}

#[test]
fn loops_stream_costs_few_bytes_per_event() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("l.cpt");
    let events = generate(&GenConfig::new(Workload::Loops, 1_000_000)).unwrap();
    let mut w = TraceWriter::create(&p, meta(), ClassSet::ALL).unwrap();
    w.write(&events).unwrap();
    let s = w.commit().unwrap();
    let bpe = s.file_bytes as f64 / s.events as f64;
    assert!(bpe <= 10.0, "{bpe} bytes per event");
    assert_eq!(std::fs::metadata(&p).unwrap().len(), s.file_bytes);
}

/// A valid trace of a few chunks, as bytes.
fn sample_trace(dir: &Path) -> (PathBuf, Vec<u8>) {
    let p = dir.join("ok.cpt");
    let events = generate(&GenConfig::new(Workload::Mixed, CHUNK_EVENTS as u64 + 100)).unwrap();
    write(&p, &events);
    let bytes = std::fs::read(&p).unwrap();
    (p, bytes)
}

fn damaged(dir: &Path, bytes: &[u8]) -> coprof_core::trace::TraceError {
    let p = dir.join("bad.cpt");
    std::fs::write(&p, bytes).unwrap();
    read_all(&p).expect_err("damaged trace was accepted")
}

fn meta_len(bytes: &[u8]) -> usize {
    u32::from_le_bytes(bytes[12..16].try_into().unwrap()) as usize
}

#[test]
fn wrong_magic_is_named() {
    let dir = tempfile::tempdir().unwrap();
    let (_, mut b) = sample_trace(dir.path());
    b[0] = b'X';
    let e = damaged(dir.path(), &b);
    assert!(matches!(e.kind, TraceErrorKind::BadMagic));
    assert_eq!(e.offset, 0);
    assert!(e.to_string().contains("bad.cpt"), "{e}");
    let e = damaged(dir.path(), b"hello");
    assert!(matches!(e.kind, TraceErrorKind::BadMagic), "{e}");
    let e = damaged(dir.path(), b"");
    assert!(matches!(e.kind, TraceErrorKind::BadMagic), "{e}");
}

#[test]
fn unknown_version_is_named() {
    let dir = tempfile::tempdir().unwrap();
    let (_, mut b) = sample_trace(dir.path());
    b[8] = 9;
    let e = damaged(dir.path(), &b);
    assert!(matches!(e.kind, TraceErrorKind::UnknownVersion(9)), "{e}");
    assert_eq!(e.offset, 8);
}

#[test]
fn bad_metadata_is_named() {
    let dir = tempfile::tempdir().unwrap();
    let (_, mut b) = sample_trace(dir.path());
    b[16] = b'[';
    let e = damaged(dir.path(), &b);
    assert!(matches!(e.kind, TraceErrorKind::BadMetadata(_)), "{e}");
    assert_eq!(e.offset, 16);
}

#[test]
fn truncation_anywhere_is_an_error() {
    let dir = tempfile::tempdir().unwrap();
    let (_, b) = sample_trace(dir.path());
    let first_chunk = 16 + meta_len(&b);
    // Inside the header, the metadata, a chunk header, a chunk, at a chunk
    // boundary, and inside the end marker.
    for cut in [
        10,
        20,
        first_chunk,
        first_chunk + 7,
        first_chunk + 200,
        b.len() - 16,
        b.len() - 3,
    ] {
        let e = damaged(dir.path(), &b[..cut]);
        assert!(
            matches!(
                e.kind,
                TraceErrorKind::Truncated(_) | TraceErrorKind::BadMagic
            ),
            "cut at {cut}: {e}"
        );
        assert!(e.offset <= cut as u64, "cut at {cut}: offset {}", e.offset);
    }
}

#[test]
fn corrupt_chunk_fails_its_checksum() {
    let dir = tempfile::tempdir().unwrap();
    let (_, mut b) = sample_trace(dir.path());
    let first_chunk = 16 + meta_len(&b);
    b[first_chunk + 20 + 30] ^= 0x55;
    let e = damaged(dir.path(), &b);
    assert!(matches!(e.kind, TraceErrorKind::Corrupt(_)), "{e}");
    assert_eq!(e.offset, (first_chunk + 20) as u64);
    assert!(e.to_string().contains("checksum"), "{e}");
}

#[test]
fn hostile_lengths_are_rejected_without_allocating() {
    let dir = tempfile::tempdir().unwrap();
    let (_, mut b) = sample_trace(dir.path());
    let c = 16 + meta_len(&b);
    b[c + 8..c + 12].copy_from_slice(&u32::MAX.to_le_bytes());
    let e = damaged(dir.path(), &b);
    assert!(matches!(e.kind, TraceErrorKind::Corrupt(_)), "{e}");
    assert_eq!(e.offset, c as u64);
    let mut h = b[..16].to_vec();
    h[12..16].copy_from_slice(&u32::MAX.to_le_bytes());
    let e = damaged(dir.path(), &h);
    assert!(matches!(e.kind, TraceErrorKind::Corrupt(_)), "{e}");
}

#[test]
fn trailing_bytes_and_wrong_totals_are_corrupt() {
    let dir = tempfile::tempdir().unwrap();
    let (_, b) = sample_trace(dir.path());
    let mut extra = b.clone();
    extra.push(0);
    assert!(matches!(
        damaged(dir.path(), &extra).kind,
        TraceErrorKind::Corrupt(_)
    ));
    let mut total = b.clone();
    let n = total.len();
    total[n - 8] ^= 1;
    assert!(matches!(
        damaged(dir.path(), &total).kind,
        TraceErrorKind::Corrupt(_)
    ));
    // The end marker's reserved field must be 0; the error points at it.
    let mut reserved = b.clone();
    reserved[n - 12] = 1;
    let e = damaged(dir.path(), &reserved);
    assert!(matches!(e.kind, TraceErrorKind::Corrupt(_)), "{e}");
    assert_eq!(e.offset, (n - 12) as u64);
    assert!(e.to_string().contains("reserved"), "{e}");
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]
    /// Any single damaged byte is either harmless (inside metadata padding) or an error; never a panic.
    #[test]
    fn flipped_bytes_never_panic(pos in any::<prop::sample::Index>(), x in 1u8..=255) {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("small.cpt");
        let events = generate(&GenConfig::new(Workload::Loops, 3000)).unwrap();
        write(&p, &events);
        let mut b = std::fs::read(&p).unwrap();
        let i = pos.index(b.len());
        b[i] ^= x;
        std::fs::write(&p, &b).unwrap();
        let _ = read_all(&p);
    }
}

#[test]
fn uncommitted_writer_leaves_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("never.cpt");
    {
        let mut w = TraceWriter::create(&p, meta(), ClassSet::ALL).unwrap();
        w.write(&generate(&GenConfig::new(Workload::Zipf, 100_000)).unwrap())
            .unwrap();
        // Dropped without commit, as when a run is interrupted.
    }
    assert!(!p.exists());
    assert_eq!(
        std::fs::read_dir(dir.path()).unwrap().count(),
        0,
        "temporary file left behind"
    );
}

#[test]
fn commit_replaces_an_existing_file_whole() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("t.cpt");
    write(
        &p,
        &generate(&GenConfig::new(Workload::Zipf, 1000)).unwrap(),
    );
    write(
        &p,
        &generate(&GenConfig::new(Workload::Zipf, 2000)).unwrap(),
    );
    assert_eq!(read_all(&p).unwrap().len(), 2000);
}
