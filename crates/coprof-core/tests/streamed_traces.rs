//! Traces written to a pipe: read while they are written, with their final
//! metadata after the end marker, and every kind of damage to that part
//! named.

use coprof_core::synth::{generate, GenConfig, Workload};
use coprof_core::trace::{
    Module, TraceErrorKind, TraceMeta, TraceReader, TraceWriter, CHUNK_EVENTS,
};
use coprof_core::{flags, ClassSet, Collect, Event, Sink, Source};
use std::io::Read;
use std::os::fd::AsRawFd;
use std::path::{Path, PathBuf};
use std::sync::mpsc;
use std::time::Duration;

fn meta() -> TraceMeta {
    TraceMeta {
        source: "test".into(),
        isa: "synthetic".into(),
        program: "unit".into(),
        modules: vec![module(0)],
        ..TraceMeta::default()
    }
}

fn module(i: u64) -> Module {
    Module {
        start: 0x10000 + i * 0x10_0000,
        end: 0x18000 + i * 0x10_0000,
        bias: i * 0x10_0000,
        path: format!("/lib/m{i}.so").into(),
    }
}

/// Events as a trace keeps them: `value` only when `HAS_VALUE` says it is one.
fn canonical(events: &[Event]) -> Vec<Event> {
    events
        .iter()
        .map(|e| {
            let mut e = *e;
            if e.flags & flags::HAS_VALUE == 0 {
                e.value = 0;
            }
            e
        })
        .collect()
}

/// A pipe, and the path that names its writing end (as a shell's
/// `/dev/fd/3` does): the writer opens the pipe again through it.
fn pipe() -> (std::io::PipeReader, std::io::PipeWriter, PathBuf) {
    let (r, w) = std::io::pipe().unwrap();
    let path = PathBuf::from(format!("/dev/fd/{}", w.as_raw_fd()));
    (r, w, path)
}

/// The bytes of `events` written as a streamed trace through a pipe, with
/// modules `0..modules` found by the end.
fn streamed_bytes(events: &[Event], modules: u64) -> Vec<u8> {
    let (mut r, w, path) = pipe();
    let reader = std::thread::spawn(move || {
        let mut bytes = Vec::new();
        r.read_to_end(&mut bytes).unwrap();
        bytes
    });
    let mut tw = TraceWriter::create(&path, meta(), ClassSet::ALL).unwrap();
    drop(w);
    assert!(tw.is_streamed(), "a pipe is written as the trace goes");
    tw.write(events).unwrap();
    tw.set_modules((0..modules).map(module).collect(), None);
    let s = tw.commit().unwrap();
    let bytes = reader.join().unwrap();
    assert_eq!(
        s.file_bytes,
        bytes.len() as u64,
        "the size reported is the stream's"
    );
    bytes
}

fn read_all(path: &Path) -> Result<(Vec<Event>, TraceMeta), coprof_core::trace::TraceError> {
    let mut r = TraceReader::open(path)?;
    let mut c = Collect::all();
    r.run(&mut c)?;
    Ok((c.events, r.meta().clone()))
}

fn damaged(dir: &Path, bytes: &[u8]) -> coprof_core::trace::TraceError {
    let p = dir.join("bad.cpt");
    std::fs::write(&p, bytes).unwrap();
    read_all(&p).expect_err("damaged trace was accepted")
}

#[test]
fn a_streamed_trace_is_read_while_it_is_written() {
    let events = generate(&GenConfig::new(
        Workload::Mixed,
        CHUNK_EVENTS as u64 * 3 + 5,
    ))
    .unwrap();
    let (r, w, path) = pipe();
    let (first, first_seen) = mpsc::channel();
    let reader = std::thread::spawn(move || {
        let mut r =
            TraceReader::from_reader(std::io::BufReader::new(r), Path::new("pipe")).unwrap();
        assert!(r.is_streamed());
        let header = r.meta().clone();
        let batch = r.next_batch().unwrap().expect("a first chunk").to_vec();
        first.send(batch.len()).unwrap();
        let mut all = batch;
        while let Some(b) = r.next_batch().unwrap() {
            all.extend_from_slice(b);
        }
        (header, all, r.meta().clone())
    });
    let mut tw = TraceWriter::create(&path, meta(), ClassSet::ALL).unwrap();
    drop(w);
    // One chunk, then nothing more until the reader has it: a writer that
    // held its chunks back until the end would never get past this.
    tw.write(&events[..CHUNK_EVENTS]).unwrap();
    let got = first_seen
        .recv_timeout(Duration::from_secs(60))
        .expect("the reader got the first chunk before the trace was complete");
    assert_eq!(got, CHUNK_EVENTS);
    tw.write(&events[CHUNK_EVENTS..]).unwrap();
    tw.set_modules(vec![module(0), module(1), module(2)], None);
    tw.commit().unwrap();
    let (header, all, last) = reader.join().unwrap();
    assert_eq!(all, canonical(&events));
    // The header says what was known at the start; the final metadata
    // what was known at the end.
    assert_eq!(header.events, 0);
    assert!(header.class_counts.is_empty());
    assert_eq!(header.modules, vec![module(0)]);
    assert_eq!(last.events, events.len() as u64);
    assert_eq!(last.modules, vec![module(0), module(1), module(2)]);
    assert_eq!(last.class_counts.values().sum::<u64>(), events.len() as u64);
    assert_eq!(
        (last.source.as_str(), last.program.as_str()),
        ("test", "unit")
    );
}

#[test]
fn a_streamed_trace_kept_in_a_file_reads_as_one() {
    let dir = tempfile::tempdir().unwrap();
    let events = generate(&GenConfig::new(Workload::Loops, CHUNK_EVENTS as u64 + 99)).unwrap();
    // More modules than a file's header would have had room for.
    let bytes = streamed_bytes(&events, 500);
    let p = dir.path().join("kept.cpt");
    std::fs::write(&p, &bytes).unwrap();
    let (got, meta) = read_all(&p).unwrap();
    assert_eq!(got, canonical(&events));
    assert_eq!(meta.modules, (0..500).map(module).collect::<Vec<_>>());
    assert_eq!(meta.events, events.len() as u64);
    // The same events as the trace written to a file.
    let f = dir.path().join("file.cpt");
    let mut w = TraceWriter::create(&f, meta.clone(), ClassSet::ALL).unwrap();
    assert!(!w.is_streamed());
    w.write(&events).unwrap();
    w.commit().unwrap();
    let (from_file, file_meta) = read_all(&f).unwrap();
    assert_eq!(from_file, got);
    assert_eq!(file_meta.modules, meta.modules);
    assert!(!TraceReader::open(&f).unwrap().is_streamed());
}

#[test]
fn damage_after_a_streamed_end_marker_is_named() {
    let dir = tempfile::tempdir().unwrap();
    let events = generate(&GenConfig::new(Workload::Mixed, 3000)).unwrap();
    let b = streamed_bytes(&events, 2);
    // The final metadata starts right after the end marker, whose total
    // is the last 8 bytes before it.
    let end = b
        .windows(4)
        .rposition(|w| w == b"CEND")
        .expect("an end marker");
    let trailer = end + 16;
    assert_eq!(&b[trailer..trailer + 4], b"CMET");
    let len = u32::from_le_bytes(b[trailer + 4..trailer + 8].try_into().unwrap()) as usize;
    assert_eq!(
        trailer + 8 + len,
        b.len(),
        "nothing follows the final metadata"
    );

    // Cut anywhere after the end marker: truncated, at or before the cut.
    for cut in [trailer, trailer + 3, trailer + 8, b.len() - 1] {
        let e = damaged(dir.path(), &b[..cut]);
        assert!(
            matches!(e.kind, TraceErrorKind::Truncated(_)),
            "cut at {cut}: {e}"
        );
        assert!(e.offset <= cut as u64, "cut at {cut}: offset {}", e.offset);
    }
    // Another tag where the final metadata belongs.
    let mut tag = b.clone();
    tag[trailer..trailer + 4].copy_from_slice(b"CHNK");
    let e = damaged(dir.path(), &tag);
    assert!(matches!(e.kind, TraceErrorKind::Corrupt(_)), "{e}");
    assert_eq!(e.offset, trailer as u64);
    assert!(e.to_string().contains("final metadata"), "{e}");
    // Not JSON: named at the metadata itself.
    let mut json = b.clone();
    json[trailer + 8] = b'[';
    let e = damaged(dir.path(), &json);
    assert!(matches!(e.kind, TraceErrorKind::BadMetadata(_)), "{e}");
    assert_eq!(e.offset, (trailer + 8) as u64);
    // A length beyond the limit, rejected before anything is allocated.
    let mut long = b.clone();
    long[trailer + 4..trailer + 8].copy_from_slice(&u32::MAX.to_le_bytes());
    let e = damaged(dir.path(), &long);
    assert!(matches!(e.kind, TraceErrorKind::Corrupt(_)), "{e}");
    assert_eq!(e.offset, (trailer + 4) as u64);
    // Bytes after it.
    let mut extra = b.clone();
    extra.push(b' ');
    let e = damaged(dir.path(), &extra);
    assert!(matches!(e.kind, TraceErrorKind::Corrupt(_)), "{e}");
    assert_eq!(e.offset, b.len() as u64);
    // A header flag that no version defines.
    let mut flag = b.clone();
    flag[10] = 3;
    let e = damaged(dir.path(), &flag);
    assert!(matches!(e.kind, TraceErrorKind::Corrupt(_)), "{e}");
    assert_eq!(e.offset, 10);
    // A file whose header does not say it was streamed ends at its end
    // marker: the final metadata is then bytes after the end.
    let mut unflagged = b.clone();
    unflagged[10] = 0;
    let e = damaged(dir.path(), &unflagged);
    assert!(
        e.to_string()
            .contains("bytes follow the end-of-trace marker"),
        "{e}"
    );
}

#[test]
fn a_write_error_of_the_thread_that_compresses_comes_back() {
    // /dev/full refuses every write (ENOSPC): the chunks' thread meets
    // the error, and the writer returns it, naming the destination,
    // at the next chunk or at the commit; it does not hang or panic.
    let events = generate(&GenConfig::new(Workload::Mixed, CHUNK_EVENTS as u64 * 4)).unwrap();
    let path = Path::new("/dev/full");
    let mut w = TraceWriter::create(path, meta(), ClassSet::ALL).unwrap();
    assert!(w.is_streamed());
    let written = events.chunks(CHUNK_EVENTS).try_for_each(|c| w.write(c));
    let e = match written {
        Err(e) => e,
        Ok(()) => w.commit().expect_err("a full device took the trace"),
    };
    assert!(matches!(e.kind, TraceErrorKind::Io(_)), "{e}");
    assert!(e.to_string().contains("/dev/full"), "{e}");
    assert!(e.to_string().contains("No space left"), "{e}");
}

#[test]
fn a_sinks_write_error_is_told_before_the_commit() {
    // A pipe whose reader has gone: as a sink, the writer keeps the
    // error, and tells it within two chunks of the write that failed,
    // so that its source can stop there (a program run to write
    // nothing more); the commit returns it.
    let events = generate(&GenConfig::new(Workload::Mixed, CHUNK_EVENTS as u64 * 4)).unwrap();
    let (r, w, path) = pipe();
    drop(r);
    let mut tw = TraceWriter::create(&path, meta(), ClassSet::ALL).unwrap();
    drop(w);
    assert!(tw.error().is_none());
    let mut chunks = 0;
    for c in events.chunks(CHUNK_EVENTS) {
        tw.observe(c);
        chunks += 1;
        if tw.error().is_some() {
            break;
        }
    }
    let told = tw.error().expect("no error told after four chunks");
    assert!(chunks <= 3, "told after {chunks} chunks");
    let broken = matches!(&told.kind, TraceErrorKind::Io(io)
        if io.kind() == std::io::ErrorKind::BrokenPipe);
    assert!(broken, "{told}");
    let e = tw.commit().unwrap_err();
    assert!(e.to_string().contains("Broken pipe"), "{e}");
}
