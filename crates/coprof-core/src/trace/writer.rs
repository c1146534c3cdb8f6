//! The streaming trace writer.
//!
//! Events are encoded into a chunk buffer; every [`CHUNK_EVENTS`] events
//! the chunk is compressed and written. A file is written under a
//! temporary name in the destination's directory and renamed into place by
//! [`TraceWriter::commit`], so an interrupted writer leaves either the old
//! file, a complete new trace, or nothing. A pipe, a socket or a character
//! device (`/dev/fd/3` in a shell pipeline) is written as the trace goes,
//! so that its reader works beside the writer: the header then holds the
//! metadata known at the start, and the final metadata follows the end
//! marker ([`FLAG_STREAMED`]).

use super::chunks::{Chunks, Destination, Output};
use super::codec::Encoder;
use super::error::{TraceError, TraceErrorKind};
use super::format::*;
use super::meta::TraceMeta;
use crate::event::{Class, ClassSet, Event};
use crate::stream::{OpenCall, Sink};
use std::collections::BTreeMap;
use std::fs::File;
use std::io::{BufWriter, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use tempfile::NamedTempFile;

/// What a finished trace holds.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WriteSummary {
    /// Events written.
    pub events: u64,
    /// Bytes of the file.
    pub file_bytes: u64,
    /// Bytes of the records before compression.
    pub raw_bytes: u64,
    /// Chunks written.
    pub chunks: u64,
    /// Thread switches recorded (see [`TraceWriter::switch`]).
    pub switches: u64,
    /// Stacks recorded (see [`TraceWriter::stack`]).
    pub stacks: u64,
}

/// Bytes of metadata reserved for modules found after the trace starts,
/// when it starts with some: about a hundred paths. A trace that finds
/// more is given a larger header when it is committed.
const MODULE_ROOM: usize = 16 << 10;

/// Writes a `.cpt` trace. Also a [`Sink`], so a source can write straight
/// into it; as a sink it keeps the first error and returns it from
/// [`commit`](TraceWriter::commit).
pub struct TraceWriter {
    path: PathBuf,
    /// The destination, and the thread that compresses and writes chunks
    /// once the first is whole.
    out: Output,
    /// Whether the destination is a stream (see [`FLAG_STREAMED`]).
    streamed: bool,
    meta: TraceMeta,
    meta_reserve: usize,
    wants: ClassSet,
    enc: Encoder,
    raw: Vec<u8>,
    chunk_events: usize,
    /// The thread the events written so far belong to, if a switch named
    /// it.
    thread: Option<u64>,
    /// The last switch recorded, while no event follows it: where its
    /// record starts in the chunk, and the thread it names. A switch
    /// right after it replaces it, so every switch recorded has an event
    /// after it and a chunk's records stay bounded by its events.
    pending: Option<(usize, u64)>,
    /// The stack given for the next event, written before it.
    stack: Option<Vec<OpenCall>>,
    counts: [u64; Class::ALL.len()],
    summary: WriteSummary,
    level: i32,
    error: Option<TraceError>,
}

impl TraceWriter {
    /// Starts a trace at `path` with metadata `meta`, recording the classes
    /// in `classes`. Nothing appears at a file's `path` until
    /// [`commit`](Self::commit); a pipe, socket or character device gets
    /// the trace as it is written (see [`FLAG_STREAMED`]).
    pub fn create(
        path: &Path,
        meta: TraceMeta,
        classes: ClassSet,
    ) -> Result<TraceWriter, TraceError> {
        let file = if crate::put::is_stream(path) {
            let f = std::fs::OpenOptions::new()
                .write(true)
                .open(path)
                .map_err(|e| TraceError::new(path, 0, TraceErrorKind::Create(e)))?;
            Destination::Stream(BufWriter::with_capacity(1 << 20, f))
        } else {
            Destination::File(BufWriter::with_capacity(1 << 20, Self::temp_for(path)?))
        };
        Self::start(path, file, meta, classes)
    }

    /// Starts a trace streamed into `file`, already open (standard
    /// output, a socket), as [`create`](Self::create) streams into a
    /// pipe; `name` names it in errors.
    pub fn to_stream(
        file: File,
        name: &Path,
        meta: TraceMeta,
        classes: ClassSet,
    ) -> Result<TraceWriter, TraceError> {
        let file = Destination::Stream(BufWriter::with_capacity(1 << 20, file));
        Self::start(name, file, meta, classes)
    }

    /// Writes the header of a trace into `file`, named `path`.
    fn start(
        path: &Path,
        file: Destination,
        mut meta: TraceMeta,
        classes: ClassSet,
    ) -> Result<TraceWriter, TraceError> {
        meta.classes = classes.names();
        // Reserve room for the final metadata: the same JSON with every
        // count at its widest.
        let mut widest = meta.clone();
        widest.events = u64::MAX;
        widest.class_counts = Class::ALL
            .iter()
            .map(|c| (c.name().to_string(), u64::MAX))
            .collect();
        // Known at the end: the process's id, how many stacks were whole,
        // and the CPU time sampled.
        widest.pid = Some(u32::MAX);
        if widest.stacks {
            widest.whole_stacks = Some(u64::MAX);
        }
        widest.cpu_ns = Some(u64::MAX);
        // A source that names modules at the start may find more as the
        // program runs (the libraries its dynamic loader maps).
        let module_room = if meta.modules.is_empty() {
            0
        } else {
            MODULE_ROOM
        };
        let meta_reserve = serde_json::to_vec(&widest)
            .expect("metadata serialises")
            .len()
            + module_room;
        let streamed = matches!(file, Destination::Stream(_));
        let mut w = TraceWriter {
            path: path.to_path_buf(),
            out: Output::Here(Chunks::new(file, path.to_path_buf())),
            streamed,
            meta,
            meta_reserve,
            wants: classes,
            enc: Encoder::default(),
            raw: Vec::with_capacity(CHUNK_EVENTS * 12),
            chunk_events: 0,
            thread: None,
            pending: None,
            stack: None,
            counts: [0; Class::ALL.len()],
            summary: WriteSummary {
                events: 0,
                file_bytes: 0,
                raw_bytes: 0,
                chunks: 0,
                switches: 0,
                stacks: 0,
            },
            level: 3,
            error: None,
        };
        w.write_header()?;
        Ok(w)
    }

    /// The temporary file a trace for the file `path` is written into.
    fn temp_for(path: &Path) -> Result<NamedTempFile, TraceError> {
        let dir = match path.parent() {
            Some(d) if !d.as_os_str().is_empty() => d,
            _ => Path::new("."),
        };
        crate::put::temp_for(path, ".coprof-", ".cpt.tmp").map_err(|e| {
            // The operating system's words, without the temporary
            // file's name, which means nothing to the user.
            let e = match (e.raw_os_error(), e.kind()) {
                (Some(code), _) => std::io::Error::from_raw_os_error(code),
                (None, std::io::ErrorKind::NotFound) => std::io::Error::new(
                    std::io::ErrorKind::NotFound,
                    format!("directory {} does not exist", dir.display()),
                ),
                (None, kind) => std::io::Error::from(kind),
            };
            TraceError::new(path, 0, TraceErrorKind::Create(e))
        })
    }

    /// Whether the trace goes to a pipe, socket or character device as it
    /// is written, with its final metadata after the end marker.
    pub fn is_streamed(&self) -> bool {
        self.streamed
    }

    /// Sets the modules the final metadata names (see
    /// [`TraceMeta::modules`]): those the source found while the trace was
    /// written, and the sysroot they were looked up in, if one. All are
    /// kept: when they do not fit the room reserved,
    /// [`commit`](Self::commit) writes the chunks again behind a larger
    /// header.
    pub fn set_modules(&mut self, modules: Vec<super::Module>, sysroot: Option<PathBuf>) {
        self.meta.modules = modules;
        if sysroot.is_some() {
            self.meta.sysroot = sysroot;
        }
    }

    /// Sets the program and arguments the final metadata names: those a
    /// process ran last, when it replaced the program the trace began
    /// with (`execve`). A longer metadata moves the chunks behind a
    /// larger header, as more modules do.
    pub fn set_program(&mut self, program: String, args: Vec<String>) {
        self.meta.program = program;
        self.meta.args = args;
    }

    /// Sets the areas of the address space the final metadata names (see
    /// [`TraceMeta::areas`]): those the source mapped while the trace was
    /// written. Like the modules, they are all kept, behind a larger
    /// header when they do not fit the room reserved.
    pub fn set_areas(&mut self, areas: crate::areas::Areas) {
        self.meta.areas = areas;
    }

    /// Sets the threads' names the final metadata gives (see
    /// [`TraceMeta::thread_names`]).
    pub fn set_thread_names(&mut self, names: BTreeMap<u64, String>) {
        self.meta.thread_names = names;
    }

    /// Sets the traced process's id the final metadata gives (see
    /// [`TraceMeta::pid`]).
    pub fn set_pid(&mut self, pid: u32) {
        self.meta.pid = Some(pid);
    }

    /// Sets how many of the trace's stacks reached their thread's first
    /// frame (see [`TraceMeta::whole_stacks`]); for a trace of stacks
    /// only.
    pub fn set_whole_stacks(&mut self, whole: u64) {
        if self.meta.stacks {
            self.meta.whole_stacks = Some(whole);
        }
    }

    /// Sets the CPU time the trace's samples were taken over (see
    /// [`TraceMeta::cpu_ns`]).
    pub fn set_cpu_ns(&mut self, ns: u64) {
        self.meta.cpu_ns = Some(ns);
    }

    /// Sets the zstd compression level (1 to 19; default 3).
    pub fn level(mut self, level: i32) -> TraceWriter {
        self.level = level.clamp(1, 19);
        self
    }

    /// The metadata as it stands, as JSON, with the event and class
    /// counts so far.
    fn meta_json(&self) -> Vec<u8> {
        let mut m = self.meta.clone();
        m.events = self.summary.events;
        m.class_counts = Class::ALL
            .iter()
            .filter(|c| self.counts[**c as usize] > 0)
            .map(|c| (c.name().to_string(), self.counts[*c as usize]))
            .collect();
        serde_json::to_vec(&m).expect("metadata serialises")
    }

    /// Metadata `bytes` padded with spaces to the room reserved for them,
    /// or `None` when they have grown past that room (more modules than
    /// it holds).
    fn padded(&self, mut bytes: Vec<u8>) -> Option<Vec<u8>> {
        if bytes.len() > self.meta_reserve {
            return None;
        }
        bytes.resize(self.meta_reserve, b' ');
        Some(bytes)
    }

    /// The format version written: 3 for a trace of stacks, else 2.
    fn version(&self) -> u16 {
        match self.meta.stacks {
            true => VERSION,
            false => VERSION_WITHOUT_STACKS,
        }
    }

    /// The header: magic, `version`, `flags`, metadata length and
    /// metadata.
    fn header(meta: &[u8], version: u16, flags: u16) -> Vec<u8> {
        let mut h = Vec::with_capacity(HEADER_FIXED + meta.len());
        h.extend_from_slice(&MAGIC);
        h.extend_from_slice(&version.to_le_bytes());
        h.extend_from_slice(&flags.to_le_bytes());
        h.extend_from_slice(&(meta.len() as u32).to_le_bytes());
        h.extend_from_slice(meta);
        h
    }

    /// The header: a file's with room for the final metadata, a stream's
    /// with the metadata known now.
    fn write_header(&mut self) -> Result<(), TraceError> {
        let h = if self.is_streamed() {
            Self::header(&self.meta_json(), self.version(), FLAG_STREAMED)
        } else {
            let meta = self
                .padded(self.meta_json())
                .expect("the reserve is the metadata's widest form");
            Self::header(&meta, self.version(), 0)
        };
        self.out.here()?.write_raw(&h)
    }

    /// Records that the events written from now on are thread `tid`'s,
    /// when it is not the thread that ran last (format version 2). A
    /// switch with no event before the next is not kept.
    pub fn switch(&mut self, tid: u64) {
        self.switch_dropped();
        if self.thread != Some(tid) {
            self.pending = Some((self.raw.len(), tid));
            self.enc.switch(tid, &mut self.raw);
            self.summary.switches += 1;
        }
    }

    /// Records `calls` as the stack of the next event written: the calls
    /// open when it was sampled, outermost first (format version 3). Kept
    /// only by a trace whose metadata says it holds stacks
    /// ([`TraceMeta::stacks`]); given again before that event, the last
    /// stands.
    pub fn stack(&mut self, calls: &[OpenCall]) {
        if self.meta.stacks {
            self.stack = Some(calls.to_vec());
        }
    }

    /// Appends events, the first after its stack when one was given.
    pub fn write(&mut self, events: &[Event]) -> Result<(), TraceError> {
        if events.is_empty() {
            return Ok(());
        }
        if let Some((_, tid)) = self.pending.take() {
            self.thread = Some(tid);
        }
        if let Some(calls) = self.stack.take() {
            self.enc.stack(&calls, &mut self.raw);
            self.summary.stacks += 1;
        }
        for e in events {
            self.enc.encode(e, &mut self.raw);
            self.counts[e.class as usize] += 1;
            self.chunk_events += 1;
            if self.chunk_events == CHUNK_EVENTS {
                self.flush_chunk()?;
            }
        }
        self.summary.events += events.len() as u64;
        Ok(())
    }

    /// Sends the chunk's records to be compressed and written.
    fn flush_chunk(&mut self) -> Result<(), TraceError> {
        if self.chunk_events == 0 {
            return Ok(());
        }
        let raw = std::mem::take(&mut self.raw);
        self.raw = self.out.put(raw, self.chunk_events, self.level)?;
        self.raw.reserve(CHUNK_EVENTS * 12);
        self.chunk_events = 0;
        self.enc.reset();
        Ok(())
    }

    /// Writes the last chunk, the end marker and the final metadata, and
    /// renames the file into place. Returns the first error met, if any,
    /// in which case no file is left at the destination (a stream has
    /// what was written before the error).
    pub fn commit(mut self) -> Result<WriteSummary, TraceError> {
        if let Some(e) = self.error.take() {
            return Err(e);
        }
        // A switch after the last event: no event is that thread's.
        self.switch_dropped();
        self.flush_chunk()?;
        let mut end = [0u8; END_MARKER];
        end[0..4].copy_from_slice(&END_TAG);
        end[8..16].copy_from_slice(&self.summary.events.to_le_bytes());
        let path = self.path.clone();
        let full = self.meta_json();
        // Every chunk written, by the thread if there is one.
        let mut chunks = std::mem::replace(&mut self.out, Output::Gone).finish()?;
        chunks.write_raw(&end)?;
        self.summary.raw_bytes = chunks.raw_bytes;
        self.summary.chunks = chunks.chunks;
        if self.streamed {
            // The final metadata after the end marker.
            chunks.write_raw(&META_TAG)?;
            chunks.write_raw(&(full.len() as u32).to_le_bytes())?;
            chunks.write_raw(&full)?;
            chunks.flush()?;
            self.summary.file_bytes = chunks.offset;
            return Ok(self.summary);
        }
        let offset = chunks.offset;
        let Destination::File(mut file) = chunks.file else {
            unreachable!("a destination that is not a stream is a file")
        };
        let meta = self.padded(full.clone());
        if let Some(meta) = &meta {
            file.seek(SeekFrom::Start(HEADER_FIXED as u64))
                .and_then(|_| file.write_all(meta))
                .map_err(|e| TraceError::new(&path, offset, TraceErrorKind::Io(e)))?;
        }
        file.flush()
            .map_err(|e| TraceError::new(&path, offset, TraceErrorKind::Io(e)))?;
        let mut tmp = file
            .into_inner()
            .map_err(|e| TraceError::new(&path, 0, TraceErrorKind::Io(e.into_error())))?;
        self.summary.file_bytes = offset;
        if meta.is_none() {
            // More modules than the room reserved: the chunks move behind
            // a header that holds them all, in a second file.
            let old_header = (HEADER_FIXED + self.meta_reserve) as u64;
            let header = Self::header(&full, self.version(), 0);
            tmp = Self::with_header(&path, tmp, old_header, &header)?;
            self.summary.file_bytes = offset - old_header + (HEADER_FIXED + full.len()) as u64;
        }
        tmp.as_file()
            .sync_all()
            .map_err(|e| TraceError::new(&path, 0, TraceErrorKind::Io(e)))?;
        crate::put::put(tmp, &path)
            .map_err(|e| TraceError::new(&path, 0, TraceErrorKind::Io(e)))?;
        Ok(self.summary)
    }

    /// A file beside `old` with `header` and then `old`'s bytes from
    /// `from` on: the trace's chunks behind a larger header.
    fn with_header(
        path: &Path,
        old: NamedTempFile,
        from: u64,
        header: &[u8],
    ) -> Result<NamedTempFile, TraceError> {
        let io = |e: std::io::Error| TraceError::new(path, 0, TraceErrorKind::Io(e));
        let dir = old.path().parent().unwrap_or(Path::new("."));
        let new = tempfile::Builder::new()
            .prefix(".coprof-")
            .suffix(".cpt.tmp")
            .tempfile_in(dir)
            .map_err(io)?;
        let mut reader = std::io::BufReader::with_capacity(1 << 20, old.as_file());
        reader.seek(SeekFrom::Start(from)).map_err(io)?;
        let mut out = BufWriter::with_capacity(1 << 20, new);
        out.write_all(header).map_err(io)?;
        std::io::copy(&mut reader, &mut out).map_err(io)?;
        out.into_inner().map_err(|e| io(e.into_error()))
    }

    /// Drops the last switch recorded when no event follows it.
    fn switch_dropped(&mut self) {
        if let Some((at, _)) = self.pending.take() {
            self.raw.truncate(at);
            self.summary.switches -= 1;
        }
    }

    /// Events written so far.
    pub fn events(&self) -> u64 {
        self.summary.events
    }

    /// The first error met while writing as a [`Sink`], if any: nothing
    /// more is written, and [`commit`](Self::commit) returns it. A chunk's
    /// error is met when the next chunk is sent, since chunks are written
    /// by a thread of their own.
    pub fn error(&self) -> Option<&TraceError> {
        self.error.as_ref()
    }
}

impl Sink for TraceWriter {
    fn wants(&self) -> ClassSet {
        self.wants
    }

    /// Yes: the trace records which thread ran which events, so that a
    /// reader of it can keep each thread's call stack apart.
    fn wants_thread_switches(&self) -> bool {
        true
    }

    fn thread_switch(&mut self, tid: u64) {
        if self.error.is_none() {
            self.switch(tid);
        }
    }

    /// When the trace holds stacks ([`TraceMeta::stacks`]).
    fn wants_stacks(&self) -> bool {
        self.meta.stacks
    }

    fn stack(&mut self, calls: &[OpenCall]) {
        TraceWriter::stack(self, calls);
    }

    fn observe(&mut self, batch: &[Event]) {
        if self.error.is_some() {
            return;
        }
        let wants = self.wants;
        let r = if wants == ClassSet::ALL {
            self.write(batch)
        } else {
            batch
                .iter()
                .filter(|e| wants.contains(e.class))
                .try_for_each(|e| self.write(std::slice::from_ref(e)))
        };
        // A stack whose event was not wanted goes with it.
        self.stack = None;
        if let Err(e) = r {
            self.error = Some(e);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_final_metadata_at_its_widest_fits_the_room_reserved_at_the_start() {
        let dir = tempfile::tempdir().unwrap();
        for stacks in [false, true] {
            let meta = TraceMeta {
                source: "native".into(),
                isa: "x86-64".into(),
                stacks,
                ..TraceMeta::default()
            };
            let path = dir.path().join(format!("{stacks}.cpt"));
            let mut w = TraceWriter::create(&path, meta, ClassSet::ALL).unwrap();
            w.summary.events = u64::MAX;
            w.counts = [u64::MAX; Class::ALL.len()];
            w.set_pid(u32::MAX);
            w.set_whole_stacks(u64::MAX);
            w.set_cpu_ns(u64::MAX);
            // Else the chunks would move behind a larger header.
            assert!(w.padded(w.meta_json()).is_some(), "stacks: {stacks}");
        }
    }
}
