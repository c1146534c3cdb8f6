//! Where a trace writer's bytes go, and the chunks' compression, on a
//! thread of its own beside the source that encodes the next chunk.
//!
//! Compressing a chunk (zstd) takes longer than encoding its events: on
//! bzip2's 327 million instructions, 58% of `coprof run --trace`'s time
//! against 22% for the encoding. So a writer hands each chunk's records to
//! a thread that compresses and writes them, in order, while the source
//! goes on; the bytes written are the same as on one thread.

use super::error::{TraceError, TraceErrorKind};
use super::format::*;
use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::PathBuf;
use std::sync::mpsc::{sync_channel, Receiver, SyncSender};
use std::thread::JoinHandle;
use tempfile::NamedTempFile;

/// Where a trace's bytes go.
pub(super) enum Destination {
    /// A temporary file, put in place by the writer's commit, whose header
    /// is written again there with the final metadata.
    File(BufWriter<NamedTempFile>),
    /// A pipe, socket or character device, written as the trace goes, with
    /// the final metadata after the end marker.
    Stream(BufWriter<File>),
}

impl Write for Destination {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        match self {
            Destination::File(f) => f.write(buf),
            Destination::Stream(s) => s.write(buf),
        }
    }

    fn write_all(&mut self, buf: &[u8]) -> std::io::Result<()> {
        match self {
            Destination::File(f) => f.write_all(buf),
            Destination::Stream(s) => s.write_all(buf),
        }
    }

    fn flush(&mut self) -> std::io::Result<()> {
        match self {
            Destination::File(f) => f.flush(),
            Destination::Stream(s) => s.flush(),
        }
    }
}

/// The destination with what has been written to it.
pub(super) struct Chunks {
    pub(super) file: Destination,
    /// The trace's name in errors.
    pub(super) path: PathBuf,
    /// Bytes written so far.
    pub(super) offset: u64,
    /// Bytes of the chunks' records before compression.
    pub(super) raw_bytes: u64,
    /// Chunks written.
    pub(super) chunks: u64,
}

impl Chunks {
    pub(super) fn new(file: Destination, path: PathBuf) -> Chunks {
        Chunks {
            file,
            path,
            offset: 0,
            raw_bytes: 0,
            chunks: 0,
        }
    }

    /// An error of the operating system's at the current offset.
    pub(super) fn io_err(&self, e: std::io::Error) -> TraceError {
        TraceError::new(&self.path, self.offset, TraceErrorKind::Io(e))
    }

    /// Writes `bytes` as they are (the header, the end marker).
    pub(super) fn write_raw(&mut self, bytes: &[u8]) -> Result<(), TraceError> {
        self.file.write_all(bytes).map_err(|e| self.io_err(e))?;
        self.offset += bytes.len() as u64;
        Ok(())
    }

    /// Writes out what the destination buffers.
    pub(super) fn flush(&mut self) -> Result<(), TraceError> {
        self.file.flush().map_err(|e| self.io_err(e))
    }

    /// Compresses the records `raw` of `count` events with `zstd` and
    /// writes them as a chunk: its header, then the compressed bytes. A
    /// stream's reader gets each chunk as soon as it is whole.
    fn put(
        &mut self,
        zstd: &mut zstd::bulk::Compressor<'static>,
        raw: &[u8],
        count: usize,
    ) -> Result<(), TraceError> {
        let packed = zstd.compress(raw).map_err(|e| self.io_err(e))?;
        let mut h = [0u8; CHUNK_HEADER];
        h[0..4].copy_from_slice(&CHUNK_TAG);
        h[4..8].copy_from_slice(&(packed.len() as u32).to_le_bytes());
        h[8..12].copy_from_slice(&(raw.len() as u32).to_le_bytes());
        h[12..16].copy_from_slice(&(count as u32).to_le_bytes());
        h[16..20].copy_from_slice(&crc32fast::hash(&packed).to_le_bytes());
        self.write_raw(&h)?;
        self.write_raw(&packed)?;
        self.raw_bytes += raw.len() as u64;
        self.chunks += 1;
        if let Destination::Stream(_) = self.file {
            self.flush()?;
        }
        Ok(())
    }
}

/// A chunk's records and its count of events, sent to the thread.
type Job = (Vec<u8>, usize);

/// The chunks' destination: here, or with the thread that compresses and
/// writes them.
pub(super) enum Output {
    Here(Chunks),
    Thread(Worker),
    /// After the thread failed.
    Gone,
}

/// The thread that compresses and writes chunks, in the order they come.
/// Dropped, it finishes the chunks sent (so that an uncommitted file's
/// temporary file is gone when the writer is).
pub(super) struct Worker {
    jobs: Option<SyncSender<Job>>,
    /// Record buffers the thread is done with, for the next chunks.
    spare: Receiver<Vec<u8>>,
    thread: Option<JoinHandle<Result<Chunks, TraceError>>>,
}

impl Worker {
    /// Starts the thread, with a compression context of its own at
    /// `level`.
    fn start(mut chunks: Chunks, level: i32) -> Result<Worker, TraceError> {
        let mut zstd = zstd::bulk::Compressor::new(level).map_err(|e| chunks.io_err(e))?;
        let path = chunks.path.clone();
        // One chunk waiting beside the one being compressed: memory for
        // three chunks' records in all.
        let (jobs, inbox) = sync_channel::<Job>(1);
        let (give_back, spare) = sync_channel::<Vec<u8>>(2);
        let thread = std::thread::Builder::new()
            .name("coprof trace".into())
            .spawn(move || {
                for (mut raw, count) in inbox {
                    chunks.put(&mut zstd, &raw, count)?;
                    raw.clear();
                    let _ = give_back.try_send(raw);
                }
                Ok(chunks)
            })
            .map_err(|e| TraceError::new(&path, 0, TraceErrorKind::Io(e)))?;
        Ok(Worker {
            jobs: Some(jobs),
            spare,
            thread: Some(thread),
        })
    }

    /// Sends a chunk; false if the thread has stopped, at an error.
    fn send(&mut self, job: Job) -> bool {
        self.jobs.as_ref().is_some_and(|j| j.send(job).is_ok())
    }

    /// Waits for every chunk sent to be written: the destination, or the
    /// thread's first error.
    fn finish(&mut self) -> Result<Chunks, TraceError> {
        self.jobs.take();
        let thread = self.thread.take().expect("finished once");
        thread
            .join()
            .unwrap_or_else(|p| std::panic::resume_unwind(p))
    }
}

impl Drop for Worker {
    fn drop(&mut self) {
        self.jobs.take();
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

impl Output {
    /// Sends the records `raw` of `count` events to be compressed at
    /// `level` and written, starting the thread the first time; returns
    /// a buffer for the next chunk's records. The thread's first error
    /// comes back here at the next chunk, or from [`here`](Self::here).
    pub(super) fn put(
        &mut self,
        raw: Vec<u8>,
        count: usize,
        level: i32,
    ) -> Result<Vec<u8>, TraceError> {
        *self = match std::mem::replace(self, Output::Gone) {
            Output::Here(chunks) => Output::Thread(Worker::start(chunks, level)?),
            other => other,
        };
        let Output::Thread(worker) = self else {
            return Err(failed_before());
        };
        let next = worker.spare.try_recv().unwrap_or_default();
        if !worker.send((raw, count)) {
            // The thread stopped at an error, which it returns.
            return Err(self.here().err().unwrap_or_else(failed_before));
        }
        Ok(next)
    }

    /// The destination back here, once every chunk sent is written, or the
    /// thread's first error.
    pub(super) fn here(&mut self) -> Result<&mut Chunks, TraceError> {
        if !matches!(self, Output::Here(_)) {
            *self = Output::Here(std::mem::replace(self, Output::Gone).finish()?);
        }
        let Output::Here(chunks) = self else {
            unreachable!("set just above")
        };
        Ok(chunks)
    }

    /// The destination, once every chunk sent is written, or the thread's
    /// first error.
    pub(super) fn finish(self) -> Result<Chunks, TraceError> {
        match self {
            Output::Here(chunks) => Ok(chunks),
            Output::Thread(mut worker) => worker.finish(),
            Output::Gone => Err(failed_before()),
        }
    }
}

/// What a writer whose thread failed says afterwards (its first error was
/// returned before).
fn failed_before() -> TraceError {
    TraceError::new(
        &PathBuf::new(),
        0,
        TraceErrorKind::Io(std::io::Error::other("the trace's writer failed before")),
    )
}
