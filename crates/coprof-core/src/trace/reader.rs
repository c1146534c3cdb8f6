//! The streaming trace reader.
//!
//! It holds one chunk at a time (compressed bytes, raw records and decoded
//! events), so reading a trace of any length needs memory for one chunk.
//! Every length is checked before it is trusted: a corrupt or hostile file
//! gets an error naming the byte offset, never a panic or a huge
//! allocation.

use super::codec::{DecodeError, Decoder};
use super::error::{TraceError, TraceErrorKind};
use super::format::*;
use super::meta::TraceMeta;
use crate::event::Event;
use crate::stream::{OpenCall, Sink, Source};
use crate::wanted::with_wanted;
use std::fs::File;
use std::io::{BufReader, ErrorKind, Read};
use std::path::{Path, PathBuf};

/// Most events a reader accepts in one chunk: bounds its memory.
const MAX_CHUNK_EVENTS: u32 = 1 << 20;

/// Sizes seen while reading, for `coprof info`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct TraceStats {
    /// Chunks read.
    pub chunks: u64,
    /// Bytes of records before compression.
    pub raw_bytes: u64,
    /// Bytes read from the file.
    pub file_bytes: u64,
    /// Events decoded.
    pub events: u64,
    /// Thread switches read (version 2).
    pub switches: u64,
    /// Stacks read (version 3).
    pub stacks: u64,
}

/// A thread switch inside a chunk: the events from `at` on (up to the
/// next switch) are thread `tid`'s.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Switch {
    /// Index in the chunk's events of the first event after the switch.
    pub at: usize,
    /// The thread that runs from there.
    pub tid: u64,
}

/// A sampled event's stack inside a chunk: the calls open when the event
/// at `at` was taken, outermost first, at `calls` of the chunk's calls
/// ([`TraceReader::stack_calls`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Stack {
    /// Index in the chunk's events of the event it is the stack of.
    pub at: usize,
    pub calls: std::ops::Range<usize>,
}

/// Reads a `.cpt` trace chunk by chunk. Also a [`Source`].
pub struct TraceReader<R: Read = BufReader<File>> {
    input: R,
    path: PathBuf,
    meta: TraceMeta,
    offset: u64,
    packed: Vec<u8>,
    raw: Vec<u8>,
    events: Vec<Event>,
    /// The thread switches among the chunk's events.
    switches: Vec<Switch>,
    /// The stacks of the chunk's events that have one, and their calls.
    stacks: Vec<Stack>,
    stack_calls: Vec<OpenCall>,
    /// The format version of the header.
    version: u16,
    decompressor: zstd::bulk::Decompressor<'static>,
    stats: TraceStats,
    done: bool,
    /// Whether the final metadata follows the end marker
    /// ([`FLAG_STREAMED`]).
    streamed: bool,
}

impl TraceReader<BufReader<File>> {
    /// Opens the trace at `path` and reads its header.
    pub fn open(path: &Path) -> Result<TraceReader<BufReader<File>>, TraceError> {
        let f = File::open(path).map_err(|e| TraceError::new(path, 0, TraceErrorKind::Io(e)))?;
        TraceReader::from_reader(BufReader::with_capacity(1 << 20, f), path)
    }
}

impl<R: Read> TraceReader<R> {
    /// Reads a trace from `input`; `path` names it in errors.
    pub fn from_reader(input: R, path: &Path) -> Result<TraceReader<R>, TraceError> {
        let mut r = TraceReader {
            input,
            path: path.to_path_buf(),
            meta: TraceMeta::default(),
            offset: 0,
            packed: Vec::new(),
            raw: Vec::new(),
            events: Vec::new(),
            switches: Vec::new(),
            stacks: Vec::new(),
            stack_calls: Vec::new(),
            version: VERSION,
            decompressor: zstd::bulk::Decompressor::new()
                .map_err(|e| TraceError::new(path, 0, TraceErrorKind::Io(e)))?,
            stats: TraceStats::default(),
            done: false,
            streamed: false,
        };
        r.read_header()?;
        Ok(r)
    }

    fn err(&self, offset: u64, kind: TraceErrorKind) -> TraceError {
        TraceError::new(&self.path, offset, kind)
    }

    /// Reads exactly `n` bytes into `buf`; `what` names them if the file ends.
    fn read_exact_into(
        &mut self,
        buf: &mut Vec<u8>,
        n: usize,
        what: &str,
    ) -> Result<(), TraceError> {
        buf.clear();
        buf.reserve(n);
        let got = (&mut self.input)
            .take(n as u64)
            .read_to_end(buf)
            .map_err(|e| self.err(self.offset, TraceErrorKind::Io(e)))?;
        if got < n {
            return Err(self.err(
                self.offset + got as u64,
                TraceErrorKind::Truncated(format!(
                    "the file ends inside {what} ({got} of {n} bytes)"
                )),
            ));
        }
        self.offset += n as u64;
        self.stats.file_bytes += n as u64;
        Ok(())
    }

    /// Reads into `buf` the `n` bytes that start the next structure,
    /// `what`: a file that ends before any of them is truncated before
    /// `expected`, named at the structure's start.
    fn read_start(
        &mut self,
        buf: &mut Vec<u8>,
        n: usize,
        what: &str,
        expected: &str,
    ) -> Result<(), TraceError> {
        let start = self.offset;
        self.read_exact_into(buf, n, what)
            .map_err(|e| match e.kind {
                TraceErrorKind::Truncated(_) => self.err(
                    start,
                    TraceErrorKind::Truncated(format!("the file ends before {expected}")),
                ),
                _ => e,
            })
    }

    /// Reads the final metadata after a streamed trace's end marker.
    fn read_final_meta(&mut self) -> Result<(), TraceError> {
        let start = self.offset;
        let mut h = Vec::new();
        self.read_start(
            &mut h,
            8,
            "the final metadata's header",
            "the final metadata of a streamed trace",
        )?;
        if h[0..4] != META_TAG {
            return Err(self.err(
                start,
                TraceErrorKind::Corrupt(format!(
                    "expected the final metadata (\"CMET\") after the end marker of a streamed trace, found bytes {:02x?}",
                    &h[0..4]
                )),
            ));
        }
        let len = u32::from_le_bytes([h[4], h[5], h[6], h[7]]);
        self.meta = self.read_meta(start + 4, len, "the final metadata")?;
        Ok(())
    }

    fn read_header(&mut self) -> Result<(), TraceError> {
        let mut h = Vec::new();
        self.read_exact_into(&mut h, HEADER_FIXED, "the header")
            .map_err(|e| match e.kind {
                TraceErrorKind::Truncated(_)
                    if h.is_empty() || !MAGIC.starts_with(&h[..h.len().min(8)]) =>
                {
                    self.err(0, TraceErrorKind::BadMagic)
                }
                _ => e,
            })?;
        if h[0..8] != MAGIC {
            return Err(self.err(0, TraceErrorKind::BadMagic));
        }
        let version = u16::from_le_bytes([h[8], h[9]]);
        if !(OLDEST_VERSION..=VERSION).contains(&version) {
            return Err(self.err(8, TraceErrorKind::UnknownVersion(version)));
        }
        self.version = version;
        let hflags = u16::from_le_bytes([h[10], h[11]]);
        if hflags & !FLAG_STREAMED != 0 {
            return Err(self.err(
                10,
                TraceErrorKind::Corrupt(format!(
                    "header flags {hflags:#x} are not defined in version {version}"
                )),
            ));
        }
        self.streamed = hflags & FLAG_STREAMED != 0;
        let meta_len = u32::from_le_bytes([h[12], h[13], h[14], h[15]]);
        self.meta = self.read_meta(12, meta_len, "the metadata block")?;
        Ok(())
    }

    /// Reads a metadata block of `len` bytes, whose length field is at
    /// byte `len_at`; `what` names it if the file ends.
    fn read_meta(&mut self, len_at: u64, len: u32, what: &str) -> Result<TraceMeta, TraceError> {
        if len > MAX_META {
            return Err(self.err(
                len_at,
                TraceErrorKind::Corrupt(format!(
                    "metadata length {len} exceeds the limit of {MAX_META} bytes"
                )),
            ));
        }
        let at = self.offset;
        let mut m = Vec::new();
        self.read_exact_into(&mut m, len as usize, what)?;
        serde_json::from_slice(&m)
            .map_err(|e| self.err(at, TraceErrorKind::BadMetadata(e.to_string())))
    }

    /// The trace's metadata. A streamed trace's ([`is_streamed`](Self::is_streamed))
    /// is what its header says until the end marker is read, and the final
    /// metadata from then on, with the counts of events and the modules
    /// found while it was written.
    pub fn meta(&self) -> &TraceMeta {
        &self.meta
    }

    /// Whether the trace was streamed: written as it went, with its final
    /// metadata after the end marker.
    pub fn is_streamed(&self) -> bool {
        self.streamed
    }

    /// The format version the trace's header names.
    pub fn version(&self) -> u16 {
        self.version
    }

    /// The thread switches among the events of the chunk
    /// [`next_batch`](Self::next_batch) returned last, in order. Empty for
    /// a source that did not record them (a version-1 trace, samples).
    pub fn switches(&self) -> &[Switch] {
        &self.switches
    }

    /// The stacks of the events of the chunk
    /// [`next_batch`](Self::next_batch) returned last, in order. Empty but
    /// for a trace of stacks (version 3).
    pub fn stacks(&self) -> &[Stack] {
        &self.stacks
    }

    /// The calls of the chunk's stacks, which each [`Stack`] names.
    pub fn stack_calls(&self) -> &[OpenCall] {
        &self.stack_calls
    }

    /// The events of the chunk [`next_batch`](Self::next_batch) returned
    /// last, cut at its thread switches, as ranges of indices: first those
    /// before the first switch (the thread that ran last goes on, `None`),
    /// then each switch's thread with its events. A range may be empty
    /// (a switch at the chunk's start).
    pub fn pieces(&self) -> impl Iterator<Item = (Option<u64>, std::ops::Range<usize>)> + '_ {
        let starts =
            std::iter::once((None, 0)).chain(self.switches.iter().map(|s| (Some(s.tid), s.at)));
        let ends = self
            .switches
            .iter()
            .map(|s| s.at)
            .chain([self.events.len()]);
        starts.zip(ends).map(|((tid, from), to)| (tid, from..to))
    }

    /// Sizes read so far.
    pub fn stats(&self) -> &TraceStats {
        &self.stats
    }

    /// The next chunk's events, or `None` after the end marker.
    pub fn next_batch(&mut self) -> Result<Option<&[Event]>, TraceError> {
        if self.done {
            return Ok(None);
        }
        let start = self.offset;
        let mut h = std::mem::take(&mut self.packed);
        self.read_start(&mut h, 4, "a chunk header", "the end-of-trace marker")?;
        let tag = [h[0], h[1], h[2], h[3]];
        if tag == END_TAG {
            self.read_exact_into(&mut h, END_MARKER - 4, "the end-of-trace marker")?;
            self.packed = h;
            return self.finish_end(start);
        }
        if tag != CHUNK_TAG {
            self.packed = h;
            return Err(self.err(
                start,
                TraceErrorKind::Corrupt(format!("expected a chunk header (\"CHNK\") or end marker (\"CEND\"), found bytes {tag:02x?}")),
            ));
        }
        self.read_exact_into(&mut h, CHUNK_HEADER - 4, "a chunk header")?;
        let word = |i: usize| u32::from_le_bytes([h[i], h[i + 1], h[i + 2], h[i + 3]]);
        let (packed_len, raw_len, count, crc) = (word(0), word(4), word(8), word(12));
        if raw_len > MAX_RAW_CHUNK
            || count > MAX_CHUNK_EVENTS
            || count as u64 * 2 > raw_len as u64
            || packed_len > raw_len.saturating_add(raw_len / 2 + 1024)
        {
            self.packed = h;
            return Err(self.err(
                start,
                TraceErrorKind::Corrupt(format!(
                    "chunk header is inconsistent: {count} events, {raw_len} raw bytes, {packed_len} compressed bytes"
                )),
            ));
        }
        self.read_exact_into(&mut h, packed_len as usize, "a chunk's compressed records")?;
        let payload_at = start + CHUNK_HEADER as u64;
        if crc32fast::hash(&h) != crc {
            self.packed = h;
            return Err(self.err(
                payload_at,
                TraceErrorKind::Corrupt(format!("chunk checksum mismatch ({packed_len} bytes)")),
            ));
        }
        self.raw.clear();
        self.raw.reserve(raw_len as usize);
        let n = self
            .decompressor
            .decompress_to_buffer(&h, &mut self.raw)
            .map_err(|e| {
                TraceError::new(
                    &self.path,
                    payload_at,
                    TraceErrorKind::Corrupt(format!("chunk does not decompress: {e}")),
                )
            })?;
        self.packed = h;
        if n != raw_len as usize {
            return Err(self.err(
                payload_at,
                TraceErrorKind::Corrupt(format!(
                    "chunk decompresses to {n} bytes, header says {raw_len}"
                )),
            ));
        }
        self.decode_chunk(count as usize, payload_at)?;
        self.stats.chunks += 1;
        self.stats.raw_bytes += raw_len as u64;
        self.stats.events += count as u64;
        Ok(Some(&self.events))
    }

    /// Decodes the chunk's records into its `count` events and the thread
    /// switches between them; `at` names the chunk's payload in errors.
    fn decode_chunk(&mut self, count: usize, at: u64) -> Result<(), TraceError> {
        let mut out = Records {
            events: std::mem::take(&mut self.events),
            switches: std::mem::take(&mut self.switches),
            stacks: std::mem::take(&mut self.stacks),
            calls: std::mem::take(&mut self.stack_calls),
        };
        let r = decode_records(&self.raw, self.version, count, &mut out);
        self.events = out.events;
        self.switches = out.switches;
        self.stacks = out.stacks;
        self.stack_calls = out.calls;
        let i = self.events.len();
        r.map_err(|(pos, what)| {
            let what = match what {
                Some(DecodeError::Short) => "records end early".to_string(),
                Some(DecodeError::BadClass(c)) => format!("unknown instruction class {c}"),
                Some(DecodeError::BadFlags(x)) => format!("undefined flag bits {x:#x}"),
                Some(DecodeError::LongStack(n)) => {
                    format!("a stack of {n} calls, more than {MAX_STACK}")
                }
                None => {
                    return TraceError::new(
                        &self.path,
                        at,
                        TraceErrorKind::Corrupt(format!(
                            "{} bytes left over after {count} records",
                            self.raw.len() - pos
                        )),
                    )
                }
            };
            TraceError::new(
                &self.path,
                at,
                TraceErrorKind::Corrupt(format!(
                    "record {i} at raw byte {pos} of the chunk: {what}"
                )),
            )
        })?;
        self.stats.switches += self.switches.len() as u64;
        self.stats.stacks += self.stacks.len() as u64;
        Ok(())
    }

    fn finish_end(&mut self, start: u64) -> Result<Option<&[Event]>, TraceError> {
        let h = &self.packed;
        let reserved = u32::from_le_bytes(h[0..4].try_into().expect("4 bytes"));
        let total = u64::from_le_bytes(h[4..12].try_into().expect("8 bytes"));
        if reserved != 0 {
            return Err(self.err(
                start + 4,
                TraceErrorKind::Corrupt(format!(
                    "the end marker's reserved field is {reserved:#x}, not 0"
                )),
            ));
        }
        if total != self.stats.events {
            return Err(self.err(
                start,
                TraceErrorKind::Corrupt(format!(
                    "end marker counts {total} events but the chunks hold {}",
                    self.stats.events
                )),
            ));
        }
        if self.streamed {
            self.read_final_meta()?;
        }
        let mut extra = [0u8; 1];
        match self.input.read(&mut extra) {
            Ok(0) => {}
            Ok(_) => {
                return Err(self.err(
                    self.offset,
                    TraceErrorKind::Corrupt("bytes follow the end-of-trace marker".into()),
                ))
            }
            Err(e) if e.kind() == ErrorKind::Interrupted => {}
            Err(e) => return Err(self.err(self.offset, TraceErrorKind::Io(e))),
        }
        self.done = true;
        Ok(None)
    }
}

/// A chunk's records, decoded.
struct Records {
    events: Vec<Event>,
    switches: Vec<Switch>,
    stacks: Vec<Stack>,
    calls: Vec<OpenCall>,
}

/// Decodes a chunk's records `raw`, of format `version`, into its `count`
/// events, the thread switches between them and their stacks. At a
/// fault, the raw byte where the record starts, and why: a record that
/// does not decode, or `None` for bytes left over after the last event.
fn decode_records(
    raw: &[u8],
    version: u16,
    count: usize,
    out: &mut Records,
) -> Result<(), (usize, Option<DecodeError>)> {
    let Records {
        events,
        switches,
        stacks,
        calls,
    } = out;
    events.clear();
    events.reserve(count);
    switches.clear();
    stacks.clear();
    calls.clear();
    let mut dec = Decoder::default();
    let mut pos = 0;
    // A switch's tag, and a stack's, name no class, so the events' loop
    // meets one as a record that does not decode: off the events' path,
    // which stays as fast as a version-1 trace's.
    let mut switch = |pos: &mut usize, at: usize| -> Result<bool, (usize, Option<DecodeError>)> {
        if version < 2 {
            return Ok(false);
        }
        match Decoder::switch(raw, pos) {
            Ok(Some(tid)) => {
                switches.push(Switch { at, tid });
                return Ok(true);
            }
            Ok(None) => {}
            Err(e) => return Err((*pos, Some(e))),
        }
        if version < 3 {
            return Ok(false);
        }
        let from = calls.len();
        match Decoder::stack(raw, pos, calls) {
            Ok(true) => {
                stacks.push(Stack {
                    at,
                    calls: from..calls.len(),
                });
                Ok(true)
            }
            Ok(false) => Ok(false),
            Err(e) => Err((*pos, Some(e))),
        }
    };
    while events.len() < count {
        let start = pos;
        match dec.decode(raw, &mut pos) {
            Ok(e) => events.push(e),
            Err(e) => {
                pos = start;
                if !switch(&mut pos, events.len())? {
                    return Err((start, Some(e)));
                }
            }
        }
    }
    while pos < raw.len() && switch(&mut pos, count)? {}
    if pos != raw.len() {
        return Err((pos, None));
    }
    Ok(())
}

impl<R: Read> Source for TraceReader<R> {
    type Error = TraceError;

    /// Pushes every event of the classes the sink wants, with the thread
    /// switches and stacks before them when it wants those: an event
    /// with a stack in a batch of its own.
    fn run(&mut self, sink: &mut dyn Sink) -> Result<u64, TraceError> {
        let wants = sink.wants();
        let mut delivered = 0;
        let switches = sink.wants_thread_switches();
        let stacks = sink.wants_stacks();
        let mut filtered = Vec::new();
        let mut deliver = |events: &[Event], sink: &mut dyn Sink| {
            if events.is_empty() {
                return;
            }
            with_wanted(wants, events, &mut filtered, |wanted| {
                delivered += wanted.len() as u64;
                sink.observe(wanted);
            });
        };
        while self.next_batch()?.is_some() {
            let with_stacks = stacks && !self.stacks.is_empty();
            if !switches && !with_stacks {
                deliver(&self.events, sink);
                continue;
            }
            // The events cut at each switch and each stack, in order: a
            // switch at an event goes before its stack.
            let mut stacks = self.stacks.iter().filter(|_| with_stacks).peekable();
            let mut from = 0;
            for (tid, piece) in self.pieces() {
                if let Some(tid) = tid.filter(|_| switches) {
                    deliver(&self.events[from..piece.start], sink);
                    from = piece.start;
                    sink.thread_switch(tid);
                }
                while let Some(s) = stacks.next_if(|s| s.at < piece.end) {
                    deliver(&self.events[from..s.at], sink);
                    // The stack of an event the sink does not want goes
                    // with it.
                    if wants.contains(self.events[s.at].class) {
                        sink.stack(&self.stack_calls[s.calls.clone()]);
                    }
                    deliver(&self.events[s.at..s.at + 1], sink);
                    from = s.at + 1;
                }
            }
            deliver(&self.events[from..], sink);
        }
        sink.finish();
        Ok(delivered)
    }
}
