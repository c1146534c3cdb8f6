//! The names a JIT gives the code it makes, in the file perf reads for
//! them: `/tmp/perf-PID.map`, one line per function, `START SIZE NAME`
//! with START and SIZE in hexadecimal (perf's `jit-interface.txt`). V8's
//! `--perf-basic-prof`, LuaJIT, the JVM's perf agents and .NET write
//! it. No file holds that code, so its PCs have no other names.
//!
//! The map is read when a report names PCs, after the run, as `perf
//! report` reads it: a process that wrote none, or whose map was
//! removed since, leaves its code named by its memory (`[anon]`).
//! Reports name a PC there as a library's, after the map's file:
//! `LazyCompile:~add script.js:3+0x10 in perf-1234.map`.

use coprof_report::Object;
use coprof_symbols::{Location, Quality};
use std::path::{Path, PathBuf};

/// A process's perf map, by address.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PerfMap {
    path: PathBuf,
    /// Each function's start, end and name, by start; a later line for
    /// the same start replaces an earlier one (code made again there).
    entries: Vec<(u64, u64, String)>,
}

impl PerfMap {
    /// The map process `pid` wrote, if it wrote one.
    pub fn of_process(pid: u32) -> Option<PerfMap> {
        PerfMap::read(Path::new(&format!("/tmp/perf-{pid}.map")))
    }

    /// The map at `path`, if it can be read; lines that are not
    /// `START SIZE NAME` are skipped.
    pub fn read(path: &Path) -> Option<PerfMap> {
        let text = std::fs::read_to_string(path).ok()?;
        let mut map = PerfMap {
            path: path.to_path_buf(),
            entries: Vec::new(),
        };
        for line in text.lines() {
            let mut words = line.splitn(3, ' ');
            let hex = |w: Option<&str>| {
                let w = w?.trim();
                u64::from_str_radix(w.strip_prefix("0x").unwrap_or(w), 16).ok()
            };
            let (Some(start), Some(size)) = (hex(words.next()), hex(words.next())) else {
                continue;
            };
            let Some(name) = words.next().map(str::trim).filter(|n| !n.is_empty()) else {
                continue;
            };
            map.entries
                .push((start, start.saturating_add(size), name.to_string()));
        }
        // Of the lines for one start the last is kept: the latest first,
        // a stable sort keeps it first among its start's.
        map.entries.reverse();
        map.entries.sort_by_key(|e| e.0);
        map.entries.dedup_by_key(|e| e.0);
        Some(map)
    }

    /// The function `pc` lies in: its start, end and name.
    pub fn function(&self, pc: u64) -> Option<(u64, u64, &str)> {
        let i = self.entries.partition_point(|e| e.0 <= pc);
        let (start, end, name) = self.entries.get(i.checked_sub(1)?)?;
        (pc < *end).then_some((*start, *end, name.as_str()))
    }

    /// `what` after the map's file name, as a library's names are:
    /// `what in perf-1234.map`.
    fn named(&self, what: &str) -> String {
        let file = self.path.file_name().unwrap_or(self.path.as_os_str());
        format!("{what} in {}", file.to_string_lossy())
    }

    /// Where `pc` is, as the files' symbols say it: the function it lies
    /// in and the offset there.
    pub fn location(&self, pc: u64) -> Option<Location> {
        let (start, _, name) = self.function(pc)?;
        Some(Location {
            function: Some(name.to_string()),
            offset: Some(pc - start),
            source: Quality::Symbols,
            ..Location::address(pc)
        })
    }

    /// Where `pc` is, for a profile other tools read: its function's code
    /// as the object it lies in (the map's file, the function's
    /// addresses), and its location.
    pub fn located(&self, pc: u64) -> Option<(Object, Location)> {
        let (start, end, _) = self.function(pc)?;
        let object = Object {
            path: self.path.display().to_string(),
            start,
            end,
            build_id: None,
        };
        Some((object, self.location(pc)?))
    }

    /// `name+0x1a in perf-1234.map`: the place of `pc`.
    pub fn place(&self, pc: u64) -> Option<String> {
        Some(self.named(&self.location(pc)?.to_string()))
    }

    /// `name in perf-1234.map`: the function `pc` lies in.
    pub fn function_name(&self, pc: u64) -> Option<String> {
        Some(self.named(self.function(pc)?.2))
    }

    /// What a value that is a pointer points at: the function that
    /// starts there, if one does.
    pub fn pointee(&self, value: u64) -> Option<String> {
        let (start, _, name) = self.function(value)?;
        (start == value).then(|| self.named(name))
    }

    /// The functions the code range `[lo, hi]` covers, as a file's are
    /// named: the one it lies in, or `first .. last (N functions)`, of
    /// the functions it overlaps; `None` when it overlaps none.
    pub fn functions(&self, lo: u64, hi: u64) -> Option<String> {
        let (at_lo, at_hi) = (self.function(lo), self.function(hi));
        if at_lo.is_some() && at_lo == at_hi {
            return Some(self.named(at_lo?.2));
        }
        let before_hi = self.entries.partition_point(|e| e.0 <= hi);
        let inside: Vec<&str> = (self.entries[..before_hi].iter())
            .filter(|e| lo < e.1)
            .map(|e| e.2.as_str())
            .collect();
        let (x, y) = (inside.first()?, inside.last()?);
        Some(match inside.len() {
            1 => self.named(&format!("{x} (1 function)")),
            n => self.named(&format!("{x} .. {y} ({n} functions)")),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn functions_are_found_by_address_and_a_later_line_replaces_an_earlier() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("perf-1.map");
        std::fs::write(
            &path,
            "7f0000001000 40 LazyCompile:~add script.js:3\n\
             0x7f0000002000 0x10 first\n\
             not a line\n\
             7f0000002000 20 second\n\
             7f0000003000 8\n",
        )
        .unwrap();
        let map = PerfMap::read(&path).unwrap();
        assert_eq!(
            map.function(0x7f0000001010),
            Some((
                0x7f0000001000,
                0x7f0000001040,
                "LazyCompile:~add script.js:3"
            ))
        );
        assert_eq!(map.function(0x7f0000001040), None, "past its end");
        assert_eq!(map.function(0x7f0000000fff), None);
        assert_eq!(map.function(0x7f0000002018).map(|f| f.2), Some("second"));
        assert_eq!(map.function(0x7f0000003000), None, "a line without a name");
        assert_eq!(PerfMap::read(&dir.path().join("none.map")), None);
    }

    /// A map of three functions, `a` and `b` side by side and `c` apart.
    fn three(dir: &Path) -> PerfMap {
        let path = dir.join("perf-4321.map");
        std::fs::write(&path, "1000 100 a\n1100 100 b\n2000 10 c\n").unwrap();
        PerfMap::read(&path).unwrap()
    }

    #[test]
    fn code_is_named_as_a_librarys_after_the_maps_file() {
        let dir = tempfile::tempdir().unwrap();
        let map = three(dir.path());
        assert_eq!(map.place(0x1000).as_deref(), Some("a in perf-4321.map"));
        assert_eq!(
            map.place(0x1110).as_deref(),
            Some("b+0x10 in perf-4321.map")
        );
        assert_eq!(
            map.function_name(0x1110).as_deref(),
            Some("b in perf-4321.map")
        );
        assert_eq!(map.place(0x1200), None, "between functions");
        // A pointer names the function that starts there, not one inside.
        assert_eq!(map.pointee(0x2000).as_deref(), Some("c in perf-4321.map"));
        assert_eq!(map.pointee(0x2004), None);
        // A profile's object is the function's code in the map's file.
        let (object, location) = map.located(0x1104).unwrap();
        assert_eq!((object.start, object.end), (0x1100, 0x1200));
        assert!(object.path.ends_with("/perf-4321.map"), "{}", object.path);
        assert_eq!(location.function.as_deref(), Some("b"));
        assert_eq!(location.offset, Some(4));
    }

    #[test]
    fn a_range_is_named_by_the_functions_it_overlaps() {
        let dir = tempfile::tempdir().unwrap();
        let map = three(dir.path());
        let f = |lo, hi| map.functions(lo, hi);
        assert_eq!(f(0x1010, 0x1020).as_deref(), Some("a in perf-4321.map"));
        assert_eq!(
            f(0x1010, 0x1110).as_deref(),
            Some("a .. b (2 functions) in perf-4321.map")
        );
        // Ends between functions: those inside, however many.
        assert_eq!(
            f(0x0800, 0x3000).as_deref(),
            Some("a .. c (3 functions) in perf-4321.map")
        );
        assert_eq!(
            f(0x1180, 0x2fff).as_deref(),
            Some("b .. c (2 functions) in perf-4321.map")
        );
        assert_eq!(
            f(0x1800, 0x2fff).as_deref(),
            Some("c (1 function) in perf-4321.map")
        );
        assert_eq!(f(0x1200, 0x1fff), None, "no function there");
    }
}
