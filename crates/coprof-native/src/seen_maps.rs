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
//! [`REREAD_EVERY`]. The unwinder finds each file's CFI by the same
//! reads ([`crate::unwind`]).

use crate::modules::{areas, modules, parse_maps, Mapping};
use coprof_core::areas::Areas;
use coprof_core::trace::Module;
use std::path::Path;
use std::rc::Rc;
use std::time::{Duration, Instant};

/// How often at most the mappings are read again for PCs that lie in no
/// code they hold.
pub const REREAD_EVERY: Duration = Duration::from_millis(10);

/// Every mapping of one process seen over its run.
#[derive(Debug, Default)]
pub struct SeenMaps {
    /// Every mapping of the last read: its range, and whether it is
    /// executable, by start.
    mapped: Vec<(u64, u64, bool)>,
    /// The mappings of code from files (and the vDSO's) at the last read,
    /// the modules they make, and the vDSO; and how many times those
    /// changed.
    files: Vec<Mapping>,
    current: Vec<Module>,
    vdso: Option<Mapping>,
    generation: u64,
    /// Every file whose code was seen, where it was (a file seen in two
    /// places twice), in the order first seen.
    modules: Vec<Module>,
    /// Every area seen.
    areas: Areas,
    /// When the mappings were last read.
    read_at: Option<Instant>,
    /// The executable mappings of the last read, by start, shared with
    /// the unwinding of stacks copied by the kernel.
    code: Rc<[(u64, u64)]>,
}

impl SeenMaps {
    /// Notes that process `pid` ran `pc`: when no code of the last read
    /// holds it, reads the mappings again (at most every
    /// [`REREAD_EVERY`] after the first read).
    pub fn ran(&mut self, pid: i32, pc: u64) {
        if self.mapping(pc).is_some_and(|(_, executable)| executable) || self.read_lately() {
            return;
        }
        self.read(pid);
    }

    /// Whether the mappings were read less than [`REREAD_EVERY`] ago.
    pub fn read_lately(&self) -> bool {
        self.read_at.is_some_and(|t| t.elapsed() < REREAD_EVERY)
    }

    /// The mapping `pc` was in at the last read: its start, and whether
    /// it is executable.
    pub fn mapping(&self, pc: u64) -> Option<(u64, bool)> {
        let i = self.mapped.partition_point(|m| m.0 <= pc);
        let &(start, end, executable) = self.mapped.get(i.checked_sub(1)?)?;
        (pc < end).then_some((start, executable))
    }

    /// The end of the mapping `addr` was in at the last read.
    pub fn end_of(&self, addr: u64) -> Option<u64> {
        let i = self.mapped.partition_point(|m| m.0 <= addr);
        let &(_, end, _) = self.mapped.get(i.checked_sub(1)?)?;
        (addr < end).then_some(end)
    }

    /// The executable mappings of the last read, by start.
    pub fn code(&self) -> Rc<[(u64, u64)]> {
        self.code.clone()
    }

    /// The files with code at the last read, where they were.
    pub fn current(&self) -> &[Module] {
        &self.current
    }

    /// The vDSO's mapping at the last read.
    pub fn vdso(&self) -> Option<&Mapping> {
        self.vdso.as_ref()
    }

    /// How many times the mappings of code from files (or the vDSO's)
    /// have changed: what is made of [`current`](Self::current) is made
    /// again when it moves.
    pub fn generation(&self) -> u64 {
        self.generation
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
        self.mapped = (maps.iter())
            .map(|m| (m.start, m.end, m.executable))
            .collect();
        self.mapped.sort_unstable();
        self.code = (self.mapped.iter())
            .filter(|m| m.2)
            .map(|&(start, end, _)| (start, end))
            .collect();
        // A file's place is worked out from its ELF headers: only when
        // the mappings of code from files have changed. Memory mapped or
        // unmapped alone (code made at run time, a buffer, a file's data)
        // leaves them where they were.
        let vdso = maps.iter().find(|m| m.special.as_deref() == Some("[vdso]"));
        let files: Vec<Mapping> = (maps.iter())
            .filter(|m| m.executable && (m.path.is_some() || m.special.is_some()))
            .cloned()
            .collect();
        if files != self.files {
            self.generation += 1;
            self.vdso = vdso.cloned();
            self.current = modules(maps, None);
            for m in &self.current {
                // The same place seen again, its mappings grown or
                // split since (the loader's last `mprotect`): one module.
                match (self.modules.iter_mut()).find(|k| k.path == m.path && k.bias == m.bias) {
                    Some(k) => {
                        k.start = k.start.min(m.start);
                        k.end = k.end.max(m.end);
                    }
                    None => self.modules.push(m.clone()),
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
        assert_eq!(seen.generation(), 1);
        // The file unmapped, anonymous memory where it was.
        seen.see(&[code(0x10000, 0x11000, None)]);
        assert_eq!(seen.generation(), 2);
        assert!(seen.current().is_empty());
        assert_eq!(seen.mapping(0x10800), Some((0x10000, true)));
        // Anonymous memory mapped: the files are as they were.
        seen.see(&[code(0x10000, 0x11000, None), code(0x30000, 0x31000, None)]);
        assert_eq!(seen.generation(), 2);
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
    fn one_place_seen_again_with_more_mappings_is_one_module() {
        let exe = std::env::current_exe().unwrap();
        let bias = 0x5500_0000_0000;
        let all = crate::modules::laid_out(&exe, bias);
        // Its code alone first, then all its segments and the vDSO: the
        // mappings of code changed, and the file's place grew.
        let mut seen = SeenMaps::default();
        seen.see(
            &all.iter()
                .filter(|m| m.executable)
                .cloned()
                .collect::<Vec<_>>(),
        );
        let mut later = all.clone();
        later.push(Mapping {
            start: 0x7ffd_0000_0000,
            end: 0x7ffd_0000_2000,
            executable: true,
            offset: 0,
            path: None,
            special: Some("[vdso]".into()),
        });
        seen.see(&later);
        assert_eq!(seen.generation(), 2);
        let modules = seen.modules(None);
        assert_eq!(modules.len(), 1, "{modules:?}");
        assert_eq!(modules[0].bias, bias);
        assert_eq!(modules[0].start, all.iter().map(|m| m.start).min().unwrap());
        assert!(modules[0].end >= all.iter().map(|m| m.end).max().unwrap());
    }

    #[test]
    fn a_pc_in_no_code_reads_the_mappings_again_at_most_every_10_ms() {
        let pid = std::process::id() as i32;
        let mut seen = SeenMaps::default();
        seen.ran(pid, 0);
        let &(start, _, _) = (seen.mapped.iter())
            .find(|m| m.2)
            .expect("this process has code");
        // Just read: a PC in code is not read again, nor one in none yet.
        let now = Instant::now();
        seen.read_at = Some(now);
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
