//! Errors of trace reading and writing, naming the file and byte offset.

use std::fmt;
use std::path::PathBuf;

/// What went wrong.
#[derive(Debug)]
pub enum TraceErrorKind {
    /// The file does not start with the trace magic.
    BadMagic,
    /// The format version is not one this reader knows.
    UnknownVersion(u16),
    /// The file ends before the end-of-trace marker.
    Truncated(String),
    /// A chunk or the header is malformed.
    Corrupt(String),
    /// The metadata block is not the JSON object the format requires.
    BadMetadata(String),
    /// The operating system refused a read or write.
    Io(std::io::Error),
    /// The trace file (or its temporary file beside it) could not be created.
    Create(std::io::Error),
}

/// A trace error: the file, the byte offset where the problem is, and what.
#[derive(Debug)]
pub struct TraceError {
    /// The trace file.
    pub path: PathBuf,
    /// Byte offset in the file of the structure that is wrong.
    pub offset: u64,
    /// What is wrong.
    pub kind: TraceErrorKind,
}

impl TraceError {
    pub(crate) fn new(path: &std::path::Path, offset: u64, kind: TraceErrorKind) -> TraceError {
        TraceError {
            path: path.to_path_buf(),
            offset,
            kind,
        }
    }
}

impl fmt::Display for TraceError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let p = self.path.display();
        let o = self.offset;
        match &self.kind {
            TraceErrorKind::BadMagic => write!(
                f,
                "{p}: byte {o}: not a coprof trace (the file does not start with the magic \"CPTRACE\\0\")"
            ),
            TraceErrorKind::UnknownVersion(v) => write!(
                f,
                "{p}: byte {o}: trace format version {v} is not supported (this coprof reads versions {} to {})",
                super::format::OLDEST_VERSION,
                super::VERSION
            ),
            TraceErrorKind::Truncated(what) => write!(f, "{p}: byte {o}: truncated trace: {what}"),
            TraceErrorKind::Corrupt(what) => write!(f, "{p}: byte {o}: corrupt trace: {what}"),
            TraceErrorKind::BadMetadata(what) => {
                write!(f, "{p}: byte {o}: trace metadata is not valid: {what}")
            }
            TraceErrorKind::Io(e) => write!(f, "{p}: byte {o}: {e}"),
            TraceErrorKind::Create(e) => write!(f, "{p}: cannot create the trace file: {e}"),
        }
    }
}

impl std::error::Error for TraceError {
    /// None: the message already says what the operating system said, and
    /// a chain printer would repeat it.
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        None
    }
}
