//! Separate debug files: the DWARF and symbols of a stripped binary, kept
//! beside it or under a debug directory, as distributions ship them
//! (Debian's `-dbgsym` packages) and as `objcopy --only-keep-debug` plus
//! `--add-gnu-debuglink` makes them. Found as GDB finds them ("Debugging
//! Information in Separate Files" in its manual), and perf and valgrind
//! too:
//!
//! - by build ID: `DIR/.build-id/ab/cdef….debug` for the binary's
//!   `NT_GNU_BUILD_ID` note `abcdef…`, under each debug directory
//!   (`/usr/lib/debug` by default), and only if the file's own build ID
//!   is the same;
//! - by debug link (the `.gnu_debuglink` section's file name and CRC-32):
//!   in the binary's directory, in its `.debug` subdirectory, and under
//!   each debug directory followed by the binary's directory, and only if
//!   the file's CRC-32 is the one the link records.
//!
//! A candidate that does not match is passed over: a stale debug file
//! would name the wrong lines.

use object::Object;
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

/// Where distributions install debug files.
pub const DEFAULT_DEBUG_DIR: &str = "/usr/lib/debug";

/// A separate debug file found for a binary: where, and its bytes.
pub struct DebugFile {
    /// Its path.
    pub path: PathBuf,
    /// Its contents.
    pub data: Vec<u8>,
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// How a candidate debug file is checked against the binary.
enum Check {
    /// Its own build ID must be this one, the binary's.
    BuildId(Vec<u8>),
    /// Its CRC-32 must be this one, the debug link's.
    Crc(u32),
}

/// Every file that could be `binary`'s separate debug file, in the order
/// they are tried, each with its check.
fn candidates<'d, R: object::ReadRef<'d>>(
    binary: &Path,
    file: &object::File<'d, R>,
    debug_dirs: &[PathBuf],
) -> Vec<(PathBuf, Check)> {
    let mut out = Vec::new();
    if let Some(id) = file.build_id().ok().flatten().filter(|id| id.len() >= 2) {
        let (head, rest) = id.split_at(1);
        for dir in debug_dirs {
            let path = dir
                .join(".build-id")
                .join(hex(head))
                .join(format!("{}.debug", hex(rest)));
            out.push((path, Check::BuildId(id.to_vec())));
        }
    }
    let Some((name, crc)) = file.gnu_debuglink().ok().flatten() else {
        return out;
    };
    let Some(name) = std::str::from_utf8(name).ok().map(Path::new) else {
        return out;
    };
    // A link names a file, never a path (GDB refuses one with a slash).
    if name.components().count() != 1 {
        return out;
    }
    let binary = std::fs::canonicalize(binary).unwrap_or_else(|_| binary.to_path_buf());
    let Some(dir) = binary.parent() else {
        return out;
    };
    let mut linked = vec![dir.join(name), dir.join(".debug").join(name)];
    for d in debug_dirs {
        linked.push(d.join(dir.strip_prefix("/").unwrap_or(dir)).join(name));
    }
    out.extend(
        linked
            .into_iter()
            .filter(|path| *path != binary)
            .map(|path| (path, Check::Crc(crc))),
    );
    out
}

/// The separate debug file of `file` (read from `binary`), looked for
/// under `debug_dirs`, or `None`.
pub fn find(binary: &Path, file: &object::File<'_>, debug_dirs: &[PathBuf]) -> Option<DebugFile> {
    candidates(binary, file, debug_dirs)
        .into_iter()
        .find_map(|(path, check)| {
            let data = std::fs::read(&path).ok()?;
            let same = match &check {
                Check::BuildId(id) => object::File::parse(&*data)
                    .ok()
                    .and_then(|f| f.build_id().ok().flatten().map(|b| b == &id[..]))
                    .unwrap_or(false),
                Check::Crc(crc) => crc32fast::hash(&data) == *crc,
            };
            same.then_some(DebugFile { path, data })
        })
}

/// A file as it is now: where, how long, and when it was last changed.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct FileStamp {
    /// Its path.
    pub path: PathBuf,
    /// Its length in bytes.
    pub len: u64,
    /// Its modification time, in nanoseconds since the Unix epoch.
    pub modified_ns: u128,
}

impl FileStamp {
    /// `path`'s stamp, or the error of reading its metadata.
    pub fn of(path: &Path) -> std::io::Result<FileStamp> {
        let meta = std::fs::metadata(path)?;
        let modified_ns = meta
            .modified()?
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos());
        Ok(FileStamp {
            path: path.to_path_buf(),
            len: meta.len(),
            modified_ns,
        })
    }
}

/// The stamps of every file whose contents decide what
/// [`Symbolizer::open_with_debug_dirs`](crate::Symbolizer::open_with_debug_dirs)
/// of `binary` answers: the binary, and, when it has no DWARF of its own,
/// each candidate separate debug file that exists now. While none of them
/// changes (and no candidate appears), opening it again gives the same
/// answers; a cache of answers keys them by this.
pub fn stamps(binary: &Path, debug_dirs: &[PathBuf]) -> std::io::Result<Vec<FileStamp>> {
    let mut out = vec![FileStamp::of(binary)?];
    // Read in place, only the parts the questions need (the section
    // headers and the notes): the file itself may be large, and on a
    // cache hit it is not opened again.
    let data = object::ReadCache::new(std::fs::File::open(binary)?);
    if let Ok(file) = object::File::parse(&data) {
        if !crate::dwarf::has_info(&file) {
            for (path, _) in candidates(binary, &file, debug_dirs) {
                if let Ok(stamp) = FileStamp::of(&path) {
                    out.push(stamp);
                }
            }
        }
    }
    Ok(out)
}
