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
//! - by build ID in the debuginfod client's cache, where a debuginfod
//!   server's answers are kept ([`debuginfod_cache`]);
//! - by debug link (the `.gnu_debuglink` section's file name and CRC-32):
//!   in the binary's directory, in its `.debug` subdirectory, and under
//!   each debug directory followed by the binary's directory, and only if
//!   the file's CRC-32 is the one the link records.
//!
//! A candidate that does not match is passed over: a stale debug file
//! would name the wrong lines.
//!
//! The same goes for the supplementary file that `dwz -m` makes of the
//! DWARF several files share, named by a `.gnu_debugaltlink` (path and
//! build ID) in each: Debian's and Fedora's debug packages are built so,
//! under `/usr/lib/debug/.dwz/`. Without it, the names of the functions
//! moved there are missing.

use object::Object;
use serde::{Deserialize, Serialize};
use std::os::unix::ffi::OsStrExt;
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

/// The build ID of the ELF file at `path` (its `NT_GNU_BUILD_ID` note),
/// in hexadecimal as `file` and debuginfod print it; `None` for a file
/// without one, or that cannot be read. Reads the headers and the note
/// alone, not the whole file.
pub fn build_id(path: &Path) -> Option<String> {
    let file = std::fs::File::open(path).ok()?;
    let cache = object::ReadCache::new(file);
    let elf = object::File::parse(&cache).ok()?;
    let id = elf.build_id().ok().flatten()?;
    (!id.is_empty()).then(|| hex(id))
}

/// The build ID of the ELF image `data` (one read from memory), as
/// [`build_id`] gives a file's.
pub fn build_id_in(data: &[u8]) -> Option<String> {
    let elf = object::File::parse(data).ok()?;
    let id = elf.build_id().ok().flatten()?;
    (!id.is_empty()).then(|| hex(id))
}

/// How a candidate debug file is checked against the binary.
enum Check {
    /// Its own build ID must be this one, the binary's.
    BuildId(Vec<u8>),
    /// Its CRC-32 must be this one, the debug link's.
    Crc(u32),
}

/// The cache of the debuginfod client (elfutils' `debuginfod-find`, and
/// GDB and perf through it), where debug files fetched from a debuginfod
/// server are kept, chosen as the client chooses it:
/// `$DEBUGINFOD_CACHE_PATH`; else `$HOME/.debuginfod_client_cache` if it
/// exists (its older place); else `$XDG_CACHE_HOME/debuginfod_client`;
/// else `$HOME/.cache/debuginfod_client` (an empty variable counts as
/// unset, and no `HOME` as `/`). `env` reads an environment variable and
/// `is_dir` asks whether a directory exists. Only files already fetched
/// are read: coprof fetches nothing.
pub fn debuginfod_cache(
    env: impl Fn(&str) -> Option<std::ffi::OsString>,
    is_dir: impl Fn(&Path) -> bool,
) -> PathBuf {
    let set = |v: &str| env(v).filter(|x| !x.is_empty()).map(PathBuf::from);
    let home = set("HOME").unwrap_or_else(|| PathBuf::from("/"));
    let older = home.join(".debuginfod_client_cache");
    set("DEBUGINFOD_CACHE_PATH")
        .or_else(|| is_dir(&older).then_some(older))
        .or_else(|| set("XDG_CACHE_HOME").map(|d| d.join("debuginfod_client")))
        .unwrap_or_else(|| home.join(".cache/debuginfod_client"))
}

/// Where the debuginfod client keeps the debug file of build ID `id`:
/// `CACHE/<the ID in hex>/debuginfo`.
pub fn debuginfod_path(cache: &Path, id: &[u8]) -> PathBuf {
    cache.join(hex(id)).join("debuginfo")
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
        let cache = debuginfod_cache(|v| std::env::var_os(v), Path::is_dir);
        let paths = build_id_paths(id, debug_dirs).chain([debuginfod_path(&cache, id)]);
        out.extend(paths.map(|path| (path, Check::BuildId(id.to_vec()))));
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

/// `DIR/.build-id/ab/cdef….debug` under each of `debug_dirs`, where
/// distributions put the debug file of build ID `abcdef…` (none for an ID
/// shorter than two bytes).
fn build_id_paths<'a>(
    id: &'a [u8],
    debug_dirs: &'a [PathBuf],
) -> impl Iterator<Item = PathBuf> + 'a {
    let split = (id.len() >= 2).then(|| id.split_at(1));
    debug_dirs.iter().filter_map(move |dir| {
        let (head, rest) = split?;
        Some(
            dir.join(".build-id")
                .join(hex(head))
                .join(format!("{}.debug", hex(rest))),
        )
    })
}

/// The first of `candidates` that can be read and passes its check.
fn first_match(candidates: Vec<(PathBuf, Check)>) -> Option<DebugFile> {
    candidates.into_iter().find_map(|(path, check)| {
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

/// The separate debug file of `file` (read from `binary`), looked for
/// under `debug_dirs`, or `None`.
pub fn find(binary: &Path, file: &object::File<'_>, debug_dirs: &[PathBuf]) -> Option<DebugFile> {
    first_match(candidates(binary, file, debug_dirs))
}

/// The path a `.gnu_debugaltlink` of `file` (read from `holder`, a binary
/// or its separate debug file) names, and where it may lead, in the order
/// they are tried, each checked by the link's build ID: the supplementary
/// DWARF file that `dwz -m`
/// moved the units several files share to (distributions' debug packages
/// are built so). As GDB looks for it: by its build ID under each debug
/// directory, then the path the link gives, under each debug directory
/// when it lies in `/usr/lib/debug` (a sysroot's), then as it is, a
/// relative one from `holder`'s directory. `None` when `file` has no
/// link.
fn supplementary_candidates<'d, R: object::ReadRef<'d>>(
    holder: &Path,
    file: &object::File<'d, R>,
    debug_dirs: &[PathBuf],
) -> Option<(PathBuf, Vec<(PathBuf, Check)>)> {
    let (name, id) = file.gnu_debugaltlink().ok().flatten()?;
    let named = PathBuf::from(std::ffi::OsStr::from_bytes(name));
    let mut out: Vec<PathBuf> = build_id_paths(id, debug_dirs).collect();
    if let Ok(rest) = named.strip_prefix(DEFAULT_DEBUG_DIR) {
        out.extend(debug_dirs.iter().map(|d| d.join(rest)));
    }
    let dir = holder.parent().unwrap_or(Path::new(""));
    out.push(dir.join(&named));
    let checked = out.into_iter().map(|p| (p, Check::BuildId(id.to_vec())));
    Some((named, checked.collect()))
}

/// What a `.gnu_debugaltlink` led to.
pub enum Supplementary {
    /// The supplementary file, with the build ID the link records.
    Found(DebugFile),
    /// The file the link names, found nowhere with its build ID.
    Missing(PathBuf),
}

/// The supplementary DWARF file of `file` (read from `holder`): by its
/// build ID under `debug_dirs`, then where the link says, or `None` when
/// `file` has no `.gnu_debugaltlink`.
pub fn find_supplementary(
    holder: &Path,
    file: &object::File<'_>,
    debug_dirs: &[PathBuf],
) -> Option<Supplementary> {
    let (named, candidates) = supplementary_candidates(holder, file, debug_dirs)?;
    Some(match first_match(candidates) {
        Some(f) => Supplementary::Found(f),
        None => Supplementary::Missing(named),
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
/// of `binary` answers, but for split DWARF's `.dwo` files: the binary,
/// its DWARF package (`BINARY.dwp`) when there is one, and, when it has
/// no DWARF of its own, each candidate separate debug file that exists
/// now, and each candidate of the supplementary file its
/// `.gnu_debugaltlink` names that exists now. While none of them changes
/// (and no candidate appears), opening it again gives the same answers; a
/// cache of answers keys them by this. Which `.dwo` files count is known
/// only from the binary's DWARF, which this does not read: a cache checks
/// them by [`Symbolizer::split_files`](crate::Symbolizer::split_files).
pub fn stamps(binary: &Path, debug_dirs: &[PathBuf]) -> std::io::Result<Vec<FileStamp>> {
    let mut out = vec![FileStamp::of(binary)?];
    // Read in place, only the parts the questions need (the section
    // headers and the notes): the file itself may be large, and on a
    // cache hit it is not opened again.
    let data = object::ReadCache::new(std::fs::File::open(binary)?);
    if let Ok(file) = object::File::parse(&data) {
        let mut paths = vec![crate::split_dwarf::package_path(binary)];
        if !crate::dwarf::has_info(&file) {
            paths.extend(
                candidates(binary, &file, debug_dirs)
                    .into_iter()
                    .map(|(p, _)| p),
            );
        }
        if let Some((_, sup)) = supplementary_candidates(binary, &file, debug_dirs) {
            paths.extend(sup.into_iter().map(|(p, _)| p));
        }
        out.extend(paths.iter().filter_map(|p| FileStamp::of(p).ok()));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::ffi::OsString;

    fn env<'a>(vars: &'a [(&'a str, &'a str)]) -> impl Fn(&str) -> Option<OsString> + 'a {
        move |name| {
            vars.iter()
                .find(|(n, _)| *n == name)
                .map(|(_, v)| OsString::from(v))
        }
    }

    #[test]
    fn the_debuginfod_cache_is_where_the_client_puts_it() {
        let none = |_: &Path| false;
        let all = [
            ("DEBUGINFOD_CACHE_PATH", "/d"),
            ("XDG_CACHE_HOME", "/x"),
            ("HOME", "/h"),
        ];
        assert_eq!(debuginfod_cache(env(&all), none), PathBuf::from("/d"));
        assert_eq!(
            debuginfod_cache(env(&all[1..]), none),
            PathBuf::from("/x/debuginfod_client")
        );
        assert_eq!(
            debuginfod_cache(env(&all[2..]), none),
            PathBuf::from("/h/.cache/debuginfod_client")
        );
        // The older place, where it exists, before XDG's.
        let older = |p: &Path| p == Path::new("/h/.debuginfod_client_cache");
        assert_eq!(
            debuginfod_cache(env(&all[1..]), older),
            PathBuf::from("/h/.debuginfod_client_cache")
        );
        assert_eq!(debuginfod_cache(env(&all), older), PathBuf::from("/d"));
        // An empty variable counts as unset, as the client takes it, and
        // no HOME as `/`.
        let empty = [("DEBUGINFOD_CACHE_PATH", ""), ("XDG_CACHE_HOME", "")];
        assert_eq!(
            debuginfod_cache(env(&empty), none),
            PathBuf::from("/.cache/debuginfod_client")
        );
        assert_eq!(
            debuginfod_path(Path::new("/d"), &[0xab, 0x01, 0xff]),
            PathBuf::from("/d/ab01ff/debuginfo")
        );
    }
}
