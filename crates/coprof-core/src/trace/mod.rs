//! The `.cpt` trace file: a versioned, chunked, compressed event stream.
//!
//! A trace is a header (magic, version, a JSON metadata block), then chunks
//! of delta- and varint-encoded records, each compressed with zstd and
//! guarded by its length and a CRC-32, then an end marker with the event
//! count. Version 2 adds a record saying which thread runs the events
//! after it. Writing and reading are streaming: memory stays bounded by one
//! chunk however long the trace. docs/trace-format.md specifies every byte.
//!
//! A tracer of its own (a JIT's, a binary translator's) writes its events
//! with a [`TraceWriter`], and every coprof command reads the file;
//! anything can read one back with a [`TraceReader`], which is a
//! [`Source`](crate::Source) for any sink, an engine or the exact counts:
//!
//! ```
//! use coprof_core::trace::{TraceMeta, TraceReader, TraceWriter};
//! use coprof_core::{Class, ClassSet, Event, ExactCounts, Source};
//!
//! # fn main() -> Result<(), coprof_core::trace::TraceError> {
//! let dir = tempfile::tempdir().unwrap();
//! let path = dir.path().join("loop.cpt");
//! let meta = TraceMeta {
//!     source: "my-jit".into(),
//!     isa: "x86-64".into(),
//!     program: "loop".into(),
//!     ..TraceMeta::default()
//! };
//! let mut w = TraceWriter::create(&path, meta, ClassSet::ALL)?;
//! // A loop of three instructions, run 1,000 times: a load of the same
//! // value, an add, and a branch back.
//! for _ in 0..1000 {
//!     w.write(&[
//!         Event::load(0x1000, 0x8000, 8, 7),
//!         Event::new(0x1004, Class::IntAlu),
//!         Event::new(0x1008, Class::CondBranch),
//!     ])?;
//! }
//! let written = w.commit()?; // the file appears whole, or not at all
//! assert_eq!(written.events, 3000);
//!
//! let mut r = TraceReader::open(&path)?;
//! assert_eq!(r.meta().source, "my-jit");
//! let mut exact = ExactCounts::new();
//! r.run(&mut exact)?;
//! assert_eq!(exact.load_count(0x1000), 1000);
//! assert_eq!(exact.top_values(0x1000, 1), vec![(7, 1000)]);
//! # Ok(())
//! # }
//! ```

mod chunks;
mod codec;
mod error;
mod format;
mod meta;
mod reader;
mod varint;
mod writer;

pub use error::{TraceError, TraceErrorKind};
pub use format::{
    CHUNK_EVENTS, FLAG_STREAMED, MAGIC, MAX_STACK, META_TAG, OLDEST_VERSION, VERSION,
    VERSION_WITHOUT_STACKS,
};
pub use meta::{Module, TraceMeta};
pub use reader::{Stack, Switch, TraceReader, TraceStats};
pub use writer::{TraceWriter, WriteSummary};
