//! What a process mapped over its run, not only at its end: the files
//! whose code it ran and the areas of its memory, for naming its PCs and
//! the places its loads read afterwards.
//!
//! Its mappings are read at its exit stop, while it still has its address
//! space; but a library it loaded and unloaded before (`dlopen`, then
//! `dlclose`: a plugin, a test's module) is gone by then, and so are the
//! names of the samples taken in it. So the mappings are read again
//! whenever a sample's PC lies in no code they hold, as perf learns of a
//! mapping from its `PERF_RECORD_MMAP` as it is made; every file and area
//! seen is kept. A PC in no code even then (memory the process made
//! executable since, or a stale read) reads them again at most every
//! [`REREAD_EVERY`].

use crate::modules::{areas, modules, parse_maps, Mapping};
use coprof_core::areas::Areas;
use coprof_core::trace::Module;
use std::path::Path;
use std::time::{Duration, Instant};

/// How often at most the mappings are read again for PCs that lie in no
/// code they hold.
pub const REREAD_EVERY: Duration = Duration::from_millis(10);

/// Every mapping of one process seen over its run.
#[derive(Debug, Default)]
pub struct SeenMaps {
    /// The executable mappings of the last read, by start.
    code: Vec<(u64, u64)>,
    /// The files mapped at the last read, and the modules they make.
    files: Vec<Mapping>,
    current: Vec<Module>,
    /// Every file whose code was seen, where it was (a file seen in two
    /// places twice), in the order first seen.
    modules: Vec<Module>,
    /// Every area seen.
    areas: Areas,
    /// When the mappings were last read.
    read_at: Option<Instant>,
}

impl SeenMaps {
    /// Notes that process `pid` ran `pc`: when no code of the last read
    /// holds it, reads the mappings again (at most every
    /// [`REREAD_EVERY`] after the first read).
    pub fn ran(&mut self, pid: i32, pc: u64) {
        let i = self.code.partition_point(|&(start, _)| start <= pc);
        if i > 0 && pc < self.code[i - 1].1 {
            return;
        }
        if self.read_at.is_some_and(|t| t.elapsed() < REREAD_EVERY) {
            return;
        }
        self.read(pid);
    }

    /// Reads process `pid`'s mappings now, and keeps what they hold.
    pub fn read(&mut self, pid: i32) {
        self.read_at = Some(Instant::now());
        let Ok(text) = std::fs::read_to_string(format!("/proc/{pid}/maps")) else {
            return;
        };
        self.see(&parse_maps(&text));
    }

    /// Keeps what the mappings `maps` hold.
    pub fn see(&mut self, maps: &[Mapping]) {
        self.code = (maps.iter().filter(|m| m.executable))
            .map(|m| (m.start, m.end))
            .collect();
        self.code.sort_unstable();
        // A file's place is worked out from its ELF headers: only when
        // the files mapped have changed.
        let files: Vec<Mapping> = maps.iter().filter(|m| m.path.is_some()).cloned().collect();
        if files != self.files {
            self.current = modules(maps, None);
            for m in &self.current {
                if !self.modules.contains(m) {
                    self.modules.push(m.clone());
                }
            }
            self.files = files;
        }
        for a in areas(maps, &self.current).iter() {
            self.areas.record(a.start, a.end, &a.name);
        }
    }

    /// Every file whose code was seen, with `exe`, the program, first.
    pub fn modules(&self, exe: Option<&Path>) -> Vec<Module> {
        let mut out = self.modules.clone();
        if let Some(i) = exe.and_then(|exe| out.iter().position(|m| m.path == exe)) {
            let program = out.remove(i);
            out.insert(0, program);
        }
        out
    }

    /// Every area seen.
    pub fn areas(&self) -> &Areas {
        &self.areas
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn code(start: u64, end: u64, path: Option<&str>) -> Mapping {
        Mapping {
            start,
            end,
            executable: true,
            offset: 0,
            path: path.map(Into::into),
            special: None,
        }
    }

    #[test]
    fn a_file_unmapped_before_the_end_is_still_known() {
        // This test's own executable, a file of ELF headers it can read.
        let exe = std::env::current_exe().unwrap();
        let exe = exe.to_str().unwrap();
        let mut seen = SeenMaps::default();
        seen.see(&[code(0x10000, 0x20000, Some(exe))]);
        assert_eq!(seen.modules(None).len(), 1);
        // The file unmapped, anonymous memory where it was.
        seen.see(&[code(0x10000, 0x11000, None)]);
        let modules = seen.modules(None);
        assert_eq!(modules.len(), 1, "{modules:?}");
        assert_eq!(modules[0].path, Path::new(exe));
        let names: Vec<&str> = seen.areas().iter().map(|a| a.name.as_str()).collect();
        assert!(
            names.contains(&exe) && names.contains(&"[anon]"),
            "{names:?}"
        );
    }

    #[test]
    fn a_pc_in_no_code_reads_the_mappings_again_at_most_every_10_ms() {
        let pid = std::process::id() as i32;
        let mut seen = SeenMaps::default();
        seen.ran(pid, 0);
        assert!(!seen.code.is_empty(), "this process has code");
        // Just read: a PC in code is not read again, nor one in none yet.
        let now = Instant::now();
        seen.read_at = Some(now);
        let (start, _) = seen.code[0];
        seen.ran(pid, start);
        seen.ran(pid, 0);
        assert_eq!(seen.read_at, Some(now));
        // Read 10 ms ago: a PC in no code reads them again.
        seen.read_at = Some(now - REREAD_EVERY);
        seen.ran(pid, start);
        assert_eq!(seen.read_at, Some(now - REREAD_EVERY));
        seen.ran(pid, 0);
        assert!(seen.read_at.unwrap() >= now);
    }
}
