//! The constants of the `.cpt` format (docs/trace-format.md).

/// The first eight bytes of every trace.
pub const MAGIC: [u8; 8] = *b"CPTRACE\0";
/// The newest format version this code reads and writes. Version 2 added
/// the thread-switch record (the tag `0x0f`); a version-1 trace is a
/// version-2 trace without one, and is read as well. Version 3 added the
/// stack record (the tag `0x1f`), and is written only by a trace that
/// holds stacks ([`super::TraceMeta::stacks`]); any other is written as
/// version 2, for readers that know no later one.
pub const VERSION: u16 = 3;
/// The version of a trace without stacks.
pub const VERSION_WITHOUT_STACKS: u16 = 2;
/// Most calls a stack record holds: the call tree's deepest chain
/// ([`crate::call_tree::MAX_DEPTH`]). Bounds a reader's memory.
pub const MAX_STACK: u64 = 4096;
/// The oldest format version this code reads.
pub const OLDEST_VERSION: u16 = 1;
/// Header flag: the trace was streamed, and its final metadata follows the
/// end marker (see [`META_TAG`]); the header's is what was known at the
/// start.
pub const FLAG_STREAMED: u16 = 1;
/// Bytes in the fixed part of the header: magic, version, flags, meta length.
pub const HEADER_FIXED: usize = 16;
/// Tag at the start of every chunk header: "CHNK".
pub const CHUNK_TAG: [u8; 4] = *b"CHNK";
/// Tag at the start of the end marker: "CEND".
pub const END_TAG: [u8; 4] = *b"CEND";
/// Tag of the final metadata after the end marker of a streamed trace:
/// "CMET", followed by its length (u32) and the JSON object.
pub const META_TAG: [u8; 4] = *b"CMET";
/// Bytes in a chunk header: tag, compressed length, raw length, event count, CRC-32.
pub const CHUNK_HEADER: usize = 20;
/// Bytes in the end marker: tag, reserved, total event count.
pub const END_MARKER: usize = 16;
/// Events per chunk written by [`super::TraceWriter`]. Readers accept any count.
pub const CHUNK_EVENTS: usize = 1 << 16;
/// Largest raw (decompressed) chunk a reader accepts: bounds its memory.
pub const MAX_RAW_CHUNK: u32 = 64 << 20;
/// Largest metadata block a reader accepts.
pub const MAX_META: u32 = 16 << 20;

/// Record tag bits (the low four bits are the class number).
pub mod tag {
    /// An address or target follows.
    pub const ADDR: u8 = 1 << 4;
    /// A value follows (the event has `flags::HAS_VALUE`).
    pub const VALUE: u8 = 1 << 5;
    /// The event has `flags::TAKEN`.
    pub const TAKEN: u8 = 1 << 6;
    /// An extension varint follows: other flags, and size for non-memory classes.
    pub const EXT: u8 = 1 << 7;
    /// The whole tag of a thread-switch record (class number 15, no other
    /// bit; version 2): the thread id follows as a varint, and the events
    /// after it, up to the next switch, are that thread's. It is not an
    /// event, so chunk and end-marker counts leave it out.
    pub const SWITCH: u8 = 0x0f;
    /// The whole tag of a stack record (class number 15 with the ADDR
    /// bit; version 3): the calls open when the next event was sampled,
    /// outermost first, follow: their count, then each call's site as a
    /// zigzag delta from the previous call's (the first's from 0) and its
    /// target as a zigzag delta from its site, all varints. The event
    /// follows it at once. It is not an event either.
    pub const STACK: u8 = 0x1f;
}
