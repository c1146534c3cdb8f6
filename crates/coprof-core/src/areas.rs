//! The named areas of a program's address space over its whole run:
//! its files' segments, `[heap]`, `[stack]`, anonymous mappings
//! (`[anon]`), threads' stacks (`[stack:TID]`) and System V shared
//! memory (`[shm]`), to name the hot
//! ranges of data addresses that no variable covers, as `perf mem`'s
//! data object column names a sample's address by its mapping.
//!
//! A program's `/proc/self/maps` tells what is mapped now; a profile
//! needs what was mapped at any time, since the addresses it counted were
//! loaded over the whole run: a buffer `malloc` mapped and freed still
//! held the loads made while it lived. So every area is kept once
//! recorded, and areas of the same name that touch are joined. Where
//! several kinds of mapping lay at one address one after the other, the
//! address is in an area of each.
//!
//! A live run's areas reach the reports through a trace's metadata
//! ([`TraceMeta::areas`](crate::trace::TraceMeta::areas)), so that a
//! trace of the run names its ranges as the run itself does.

use serde::{Deserialize, Serialize};
use std::path::Path;

/// An address range and what was mapped there.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Area {
    /// First address.
    pub start: u64,
    /// The address after the last byte.
    pub end: u64,
    /// `[heap]`, `[stack]`, `[anon]`, `[shm]`, or the host path of the
    /// file mapped there.
    pub name: String,
}

/// The name of anonymous memory a program mapped (`mmap` with
/// `MAP_ANONYMOUS`, or pages `mremap` moved).
pub const ANON: &str = "[anon]";
/// The name of System V shared memory a program attached (`shmat`).
pub const SHM: &str = "[shm]";
/// The name of the program break's pages.
pub const HEAP: &str = "[heap]";
/// The name of the main thread's stack.
pub const STACK: &str = "[stack]";

/// The name of the stack of the thread `tid` (not the main thread's), as
/// Linux named them in `/proc/PID/maps` until 4.5: `[stack:TID]`.
pub fn thread_stack(tid: u64) -> String {
    format!("[stack:{tid}]")
}

/// Every area recorded over a run, by start and name; areas of one name
/// never touch or overlap each other. As JSON, a list of areas.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(transparent)]
pub struct Areas(Vec<Area>);

impl Areas {
    /// Records `[start, end)` as a place of `name`, joined with the areas
    /// of the same name it touches.
    pub fn record(&mut self, start: u64, end: u64, name: &str) {
        if start >= end {
            return;
        }
        let (mut lo, mut hi) = (start, end);
        self.0.retain(|a| {
            let joins = a.name == name && a.start <= hi && lo <= a.end;
            if joins {
                lo = lo.min(a.start);
                hi = hi.max(a.end);
            }
            !joins
        });
        let at = self
            .0
            .partition_point(|a| (a.start, a.name.as_str()) < (lo, name));
        self.0.insert(
            at,
            Area {
                start: lo,
                end: hi,
                name: name.to_string(),
            },
        );
    }

    /// Records `[start, end)` as `name`, and no longer as `was` there:
    /// what was mapped as `was` turned out to be `name` (anonymous memory
    /// a thread took for its stack). The areas of `was` around it stay.
    pub fn rename(&mut self, start: u64, end: u64, was: &str, name: &str) {
        if start >= end {
            return;
        }
        let mut rest = Vec::new();
        self.0.retain(|a| {
            let cut = a.name == was && a.start < end && start < a.end;
            if cut {
                rest.push((a.start, start));
                rest.push((end, a.end));
            }
            !cut
        });
        for (lo, hi) in rest {
            self.record(lo, hi, was);
        }
        self.record(start, end, name);
    }

    /// Records `[start, end)` as mapped from the file `path`.
    pub fn record_file(&mut self, start: u64, end: u64, path: &Path) {
        self.record(start, end, &path.display().to_string());
    }

    /// Whether no area was recorded (a trace whose source says nothing
    /// of its address space).
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// Every area, by start.
    pub fn iter(&self) -> impl Iterator<Item = &Area> {
        self.0.iter()
    }

    /// The areas that overlap `[lo, hi]` (both ends included, as a RAP
    /// range's are), by start.
    pub fn overlapping(&self, lo: u64, hi: u64) -> impl Iterator<Item = &Area> {
        self.0.iter().filter(move |a| a.start <= hi && lo < a.end)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(a: &Areas, lo: u64, hi: u64) -> Vec<(u64, u64, &str)> {
        a.overlapping(lo, hi)
            .map(|x| (x.start, x.end, x.name.as_str()))
            .collect()
    }

    #[test]
    fn areas_of_one_name_that_touch_are_joined_and_others_kept() {
        let mut a = Areas::default();
        a.record(0x1000, 0x2000, ANON);
        a.record(0x3000, 0x4000, ANON);
        a.record(0x2000, 0x3000, ANON);
        // The same pages later mapped as something else keep both names.
        a.record(0x1000, 0x2000, SHM);
        a.record(0x9000, 0x9000, HEAP);
        assert_eq!(
            names(&a, 0, u64::MAX),
            vec![(0x1000, 0x4000, ANON), (0x1000, 0x2000, SHM)]
        );
        // Ends are inclusive on the range asked about, exclusive on areas.
        assert_eq!(names(&a, 0x4000, 0x5000), vec![]);
        assert_eq!(names(&a, 0x3fff, 0x3fff), vec![(0x1000, 0x4000, ANON)]);
        assert_eq!(names(&a, 0, 0x1000).len(), 2);
    }

    #[test]
    fn a_thread_stack_is_cut_out_of_the_anonymous_memory_around_it() {
        let mut a = Areas::default();
        a.record(0x1000, 0x9000, ANON);
        a.record(0x4000, 0x5000, SHM);
        a.rename(0x3000, 0x6000, ANON, &thread_stack(12));
        assert_eq!(
            names(&a, 0, u64::MAX),
            vec![
                (0x1000, 0x3000, ANON),
                (0x3000, 0x6000, "[stack:12]"),
                (0x4000, 0x5000, SHM),
                (0x6000, 0x9000, ANON),
            ]
        );
        // At an edge, no empty area is left.
        a.rename(0x1000, 0x3000, ANON, &thread_stack(13));
        assert_eq!(names(&a, 0, 0x2fff), vec![(0x1000, 0x3000, "[stack:13]")]);
    }

    #[test]
    fn a_break_that_grows_page_by_page_is_one_area() {
        let mut a = Areas::default();
        for p in 0..100u64 {
            a.record(0x10_0000 + p * 0x1000, 0x10_1000 + p * 0x1000, HEAP);
        }
        assert_eq!(names(&a, 0, u64::MAX), vec![(0x10_0000, 0x16_4000, HEAP)]);
    }
}
