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

/// The separate debug file of `file` (read from `binary`), looked for
/// under `debug_dirs`, or `None`.
pub fn find(binary: &Path, file: &object::File<'_>, debug_dirs: &[PathBuf]) -> Option<DebugFile> {
    if let Some(id) = file.build_id().ok().flatten().filter(|id| id.len() >= 2) {
        let (head, rest) = id.split_at(1);
        for dir in debug_dirs {
            let path = dir
                .join(".build-id")
                .join(hex(head))
                .join(format!("{}.debug", hex(rest)));
            let Ok(data) = std::fs::read(&path) else {
                continue;
            };
            let same = object::File::parse(&*data)
                .ok()
                .and_then(|f| f.build_id().ok().flatten().map(|b| b == id))
                .unwrap_or(false);
            if same {
                return Some(DebugFile { path, data });
            }
        }
    }
    let (name, crc) = file.gnu_debuglink().ok().flatten()?;
    let name = Path::new(std::str::from_utf8(name).ok()?);
    // A link names a file, never a path (GDB refuses one with a slash).
    if name.components().count() != 1 {
        return None;
    }
    let binary = std::fs::canonicalize(binary).unwrap_or_else(|_| binary.to_path_buf());
    let dir = binary.parent()?;
    let mut candidates = vec![dir.join(name), dir.join(".debug").join(name)];
    for d in debug_dirs {
        candidates.push(d.join(dir.strip_prefix("/").unwrap_or(dir)).join(name));
    }
    candidates.into_iter().find_map(|path| {
        if path == binary {
            return None;
        }
        let data = std::fs::read(&path).ok()?;
        (crc32fast::hash(&data) == crc).then_some(DebugFile { path, data })
    })
}
