//! A flat profile: costs per PC, each PC with its place in the source.

use coprof_symbols::{Location, Quality};

/// A kind of cost every PC carries (one column of a callgrind file, one
/// sample type of a pprof profile).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Cost {
    /// The event's name in a callgrind file: an identifier (`Ir`, the name
    /// callgrind and KCachegrind give instructions retired).
    pub event: String,
    /// The sample type in a pprof profile (`instructions`, `samples`).
    pub sample_type: String,
    /// Its unit in a pprof profile (`count`).
    pub unit: String,
    /// What it counts, in words: callgrind's long name of the event.
    pub description: String,
}

impl Cost {
    /// Instructions retired, as callgrind counts them (`Ir`).
    pub fn instructions() -> Cost {
        Cost::new("Ir", "instructions", "Instructions retired")
    }

    /// Samples taken (of a native process, or of a stream by a sampler).
    pub fn samples() -> Cost {
        Cost::new("Samples", "samples", "Samples taken")
    }

    /// A cost counted in units of `count`: `event` for callgrind,
    /// `sample_type` for pprof, `description` in words.
    pub fn new(event: &str, sample_type: &str, description: &str) -> Cost {
        Cost {
            event: event.to_string(),
            sample_type: sample_type.to_string(),
            unit: "count".to_string(),
            description: description.to_string(),
        }
    }
}

/// A file whose code the PCs lie in, and where it was mapped in the run.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Object {
    /// Its path.
    pub path: String,
    /// Its addresses in the run, `[start, end)`. A program read at its own
    /// addresses, with no mapping known, spans the whole address space
    /// (`0..u64::MAX`); a pprof mapping is then narrowed to its PCs.
    pub start: u64,
    pub end: u64,
}

/// One PC and what it cost.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PcCost {
    /// The PC, as the run's address.
    pub pc: u64,
    /// One value per [`PcProfile::costs`], in that order.
    pub values: Vec<u64>,
    /// The index in [`PcProfile::objects`] of the file it lies in.
    pub object: Option<usize>,
    /// Its function, file and line, with the frames it was inlined into.
    pub location: Location,
}

/// Costs per PC of one run, with where each PC is.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PcProfile {
    /// The kinds of cost, one value each per PC.
    pub costs: Vec<Cost>,
    /// The files the PCs lie in.
    pub objects: Vec<Object>,
    /// The PCs, each once.
    pub pcs: Vec<PcCost>,
    /// The command profiled, its program first.
    pub command: Vec<String>,
    /// Its process id, when known.
    pub pid: Option<u32>,
}

impl PcProfile {
    /// An empty profile of `costs` for `command`.
    pub fn new(costs: Vec<Cost>, command: Vec<String>) -> PcProfile {
        PcProfile {
            costs,
            command,
            ..PcProfile::default()
        }
    }

    /// Adds `pc`'s costs, one per [`costs`](Self::costs).
    ///
    /// # Panics
    /// When `values` does not have one value per kind of cost.
    pub fn push(&mut self, pc: u64, values: Vec<u64>, object: Option<usize>, location: Location) {
        assert_eq!(
            values.len(),
            self.costs.len(),
            "{pc:#x}: one value per kind of cost"
        );
        self.pcs.push(PcCost {
            pc,
            values,
            object,
            location,
        });
    }

    /// The function `pc` counts in, as callgrind counts it: the one its
    /// code lies in (the outermost when inlined); for code no symbol
    /// names, its file in brackets (`[libc.so.6]`), as pprof groups such
    /// code; the PC's address when not even its file is known.
    pub fn function_of(&self, pc: &PcCost) -> String {
        if let Some(f) = pc.location.outer_function() {
            return f.to_string();
        }
        match pc.object {
            Some(o) => {
                let path = &self.objects[o].path;
                format!("[{}]", path.rsplit('/').next().unwrap_or(path))
            }
            None => format!("{:#x}", pc.pc),
        }
    }

    /// Each kind of cost summed over every PC.
    pub fn totals(&self) -> Vec<u64> {
        let mut totals = vec![0u64; self.costs.len()];
        for p in &self.pcs {
            for (t, v) in totals.iter_mut().zip(&p.values) {
                *t += v;
            }
        }
        totals
    }
}

/// One source frame of a PC: a function and a position in it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SourceFrame<'a> {
    /// The function, if named.
    pub function: Option<&'a str>,
    /// Its source file (as the debug info records it), if known.
    pub file: Option<&'a str>,
    /// The line, if known.
    pub line: Option<u32>,
}

/// The source frames of `l`, innermost first: the PC's own function and
/// line, then each function it was inlined into, at the line of the call
/// (pprof's order of a location's lines). One frame with the symbol's name
/// and no file for a PC named by the symbol table; none for a bare
/// address.
pub fn frames(l: &Location) -> Vec<SourceFrame<'_>> {
    if l.source == Quality::Address {
        return Vec::new();
    }
    let own = SourceFrame {
        function: l.function.as_deref(),
        file: l.file.as_deref(),
        line: l.line,
    };
    let callers = l.inlined.iter().map(|f| SourceFrame {
        function: f.function.as_deref(),
        file: f.file.as_deref(),
        line: f.line,
    });
    std::iter::once(own).chain(callers).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fixtures::inlined;

    #[test]
    fn frames_run_from_the_inlined_function_out_to_its_caller() {
        let l = inlined(0x1000, 5);
        let f = frames(&l);
        assert_eq!(f.len(), 2);
        assert_eq!(
            (f[0].function, f[0].file, f[0].line),
            (Some("helper"), Some("/src/util.h"), Some(5))
        );
        assert_eq!(
            (f[1].function, f[1].file, f[1].line),
            (Some("main"), Some("/src/prog.c"), Some(20))
        );
        assert!(frames(&Location::address(0x1000)).is_empty());
    }

    #[test]
    fn totals_sum_each_kind_of_cost() {
        let mut p = PcProfile::new(vec![Cost::instructions(), Cost::samples()], vec![]);
        p.push(0x1000, vec![10, 1], None, inlined(0x1000, 5));
        p.push(0x1004, vec![5, 0], None, Location::address(0x1004));
        assert_eq!(p.totals(), vec![15, 1]);
    }

    #[test]
    fn a_pc_counts_in_its_outer_function_else_its_file_else_its_address() {
        let mut p = PcProfile::new(vec![Cost::samples()], vec![]);
        p.objects.push(crate::Object {
            path: "/usr/lib/libc.so.6".into(),
            start: 0x4000,
            end: 0x8000,
        });
        p.push(0x4000, vec![1], Some(0), inlined(0x4000, 5));
        p.push(0x4004, vec![1], Some(0), Location::address(0x4004));
        p.push(0x9000, vec![1], None, Location::address(0x9000));
        let names: Vec<String> = p.pcs.iter().map(|pc| p.function_of(pc)).collect();
        assert_eq!(names, ["main", "[libc.so.6]", "0x9000"]);
    }

    #[test]
    #[should_panic(expected = "one value per kind of cost")]
    fn a_pc_without_a_value_for_each_cost_is_refused() {
        let mut p = PcProfile::new(vec![Cost::instructions()], vec![]);
        p.push(0x1000, vec![1, 2], None, Location::address(0x1000));
    }
}
