//! The names a JIT gives the code it makes, in the file perf reads for
//! them: `/tmp/perf-PID.map`, one line per function, `START SIZE NAME`
//! with START and SIZE in hexadecimal (perf's `jit-interface.txt`). V8's
//! `--perf-basic-prof`, LuaJIT, the JVM's perf agents and .NET write
//! it. No file holds that code, so its PCs have no other names.

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
    pub fn of_process(pid: i32) -> Option<PerfMap> {
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

    /// The file it was read from.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The function `pc` lies in: its start, end and name.
    pub fn function(&self, pc: u64) -> Option<(u64, u64, &str)> {
        let i = self.entries.partition_point(|e| e.0 <= pc);
        let (start, end, name) = self.entries.get(i.checked_sub(1)?)?;
        (pc < *end).then_some((*start, *end, name.as_str()))
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
}
