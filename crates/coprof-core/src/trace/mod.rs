//! The `.cpt` trace file: a versioned, chunked, compressed event stream.
//!
//! A trace is a header (magic, version, a JSON metadata block), then chunks
//! of delta- and varint-encoded records, each compressed with zstd and
//! guarded by its length and a CRC-32, then an end marker with the event
//! count. Version 2 adds a record saying which thread runs the events
//! after it. Writing and reading are streaming: memory stays bounded by one
//! chunk however long the trace. docs/trace-format.md specifies every byte.

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
