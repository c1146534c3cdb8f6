//! A profile: costs per PC, each PC with its place in the source, and,
//! when the run's calls were followed, per calling context.

use coprof_symbols::{Location, Quality};
use std::collections::HashMap;

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
    /// Its build ID in hexadecimal, when it has one: pprof's mapping
    /// carries it, so that tools find the file and its debug file by it
    /// (a symbol server, debuginfod) where the path means nothing.
    pub build_id: Option<String>,
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

/// A call made at a call site in a calling context: a node of the
/// calling context tree (Ammons, Ball & Larus, PLDI 1997).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CallContext {
    /// The context the call was made in, an index in
    /// [`PcProfile::calls`] smaller than its own; `None` for a call made
    /// with no call open (the root).
    pub parent: Option<usize>,
    /// The call instruction, as an index in [`PcProfile::pcs`].
    pub call_site: usize,
    /// Where it went (the called function's entry), as an index in
    /// [`PcProfile::pcs`].
    pub callee: usize,
    /// Times the call was made in its parent context.
    pub calls: u64,
    /// The thread that made it, when each thread's costs are kept apart
    /// ([`ContextCost::thread`]); `None` for all threads together. A
    /// call's children are its own thread's.
    pub thread: Option<u64>,
}

/// A PC's costs in one calling context.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ContextCost {
    /// The context, an index in [`PcProfile::calls`]; `None` for the
    /// root, with no call open.
    pub context: Option<usize>,
    /// The PC, as an index in [`PcProfile::pcs`].
    pub pc: usize,
    /// One value per [`PcProfile::costs`].
    pub values: Vec<u64>,
    /// The thread whose costs these are, when each thread's are kept
    /// apart; `None` for all threads together.
    pub thread: Option<u64>,
}

/// A function's costs, its own and with what it called.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FunctionCost {
    /// Its name ([`PcProfile::function_of`]).
    pub function: String,
    /// The index in [`PcProfile::objects`] of the file its code is in.
    pub object: Option<usize>,
    /// The costs of its own PCs, one per [`PcProfile::costs`].
    pub own: Vec<u64>,
    /// The costs of every PC run while it was running or on the stack,
    /// each counted once however deep it recursed (pprof's cumulative
    /// column); `None` in a profile without calls.
    pub inclusive: Option<Vec<u64>>,
}

/// Costs per PC of one run, with where each PC is, and with its calls
/// followed, per calling context.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PcProfile {
    /// The kinds of cost, one value each per PC.
    pub costs: Vec<Cost>,
    /// The files the PCs lie in.
    pub objects: Vec<Object>,
    /// The PCs, each once, with their costs summed over every context.
    /// Call sites and called functions' entries are among them, with
    /// zero costs when nothing counted there.
    pub pcs: Vec<PcCost>,
    /// The calling contexts, parents before their children; empty in a
    /// flat profile.
    pub calls: Vec<CallContext>,
    /// The costs per PC and calling context; empty in a flat profile.
    pub context_costs: Vec<ContextCost>,
    /// The command profiled, its program first.
    pub command: Vec<String>,
    /// Its process id, when known.
    pub pid: Option<u32>,
    /// The thread whose costs these alone are, for one thread's part of a
    /// profile whose threads were kept apart ([`PcProfile::of_thread`]).
    pub thread: Option<u64>,
    /// The threads' names, by id, where known: pprof's samples carry
    /// them as a `thread_name` label beside the `thread` one.
    pub thread_names: std::collections::BTreeMap<u64, String>,
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

    /// Adds `pc`'s costs, one per [`costs`](Self::costs), and returns its
    /// index in [`pcs`](Self::pcs).
    ///
    /// # Panics
    /// When `values` does not have one value per kind of cost.
    pub fn push(
        &mut self,
        pc: u64,
        values: Vec<u64>,
        object: Option<usize>,
        location: Location,
    ) -> usize {
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
        self.pcs.len() - 1
    }

    /// Adds a calling context and returns its index in
    /// [`calls`](Self::calls).
    ///
    /// # Panics
    /// When its parent, call site or callee is not already in the profile.
    pub fn push_call(&mut self, call: CallContext) -> usize {
        assert!(
            call.parent.is_none_or(|p| p < self.calls.len()),
            "a context after its parent"
        );
        assert!(
            call.call_site < self.pcs.len() && call.callee < self.pcs.len(),
            "a call between PCs of the profile"
        );
        self.calls.push(call);
        self.calls.len() - 1
    }

    /// Adds a PC's costs in a context.
    ///
    /// # Panics
    /// When the context or the PC is not in the profile, or `values` does
    /// not have one value per kind of cost.
    pub fn push_context_cost(&mut self, cost: ContextCost) {
        assert!(cost.context.is_none_or(|c| c < self.calls.len()) && cost.pc < self.pcs.len());
        assert_eq!(
            cost.values.len(),
            self.costs.len(),
            "one value per kind of cost"
        );
        self.context_costs.push(cost);
    }

    /// Whether the profile has its calls followed: costs per context.
    pub fn has_calls(&self) -> bool {
        !self.context_costs.is_empty()
    }

    /// The call sites open in `context`, innermost first, as indices in
    /// [`pcs`](Self::pcs): a pprof sample's stack above its PC.
    pub fn call_stack(&self, mut context: Option<usize>) -> Vec<usize> {
        let mut stack = Vec::new();
        while let Some(c) = context {
            stack.push(self.calls[c].call_site);
            context = self.calls[c].parent;
        }
        stack
    }

    /// Each context's costs with those of every context below it: what
    /// its call cost, from the call to the return (callgrind's inclusive
    /// cost of a call).
    pub fn inclusive(&self) -> Vec<Vec<u64>> {
        let mut sums = vec![vec![0u64; self.costs.len()]; self.calls.len()];
        for c in &self.context_costs {
            if let Some(ctx) = c.context {
                add(&mut sums[ctx], &c.values);
            }
        }
        for ctx in (0..self.calls.len()).rev() {
            if let Some(parent) = self.calls[ctx].parent {
                let (below, above) = sums.split_at_mut(ctx);
                add(&mut below[parent], &above[0]);
            }
        }
        sums
    }

    /// Every function with a cost, its own and, in a profile with calls,
    /// inclusive; in no set order.
    pub fn functions(&self) -> Vec<FunctionCost> {
        let mut ids: HashMap<(String, Option<usize>), usize> = HashMap::new();
        let mut out: Vec<FunctionCost> = Vec::new();
        let mut id_of_pc = vec![usize::MAX; self.pcs.len()];
        let mut id_of = |i: usize, out: &mut Vec<FunctionCost>| {
            if id_of_pc[i] == usize::MAX {
                let pc = &self.pcs[i];
                let key = (self.function_of(pc), pc.object);
                id_of_pc[i] = *ids.entry(key.clone()).or_insert_with(|| {
                    out.push(FunctionCost {
                        function: key.0,
                        object: key.1,
                        own: vec![0; self.costs.len()],
                        inclusive: self.has_calls().then(|| vec![0; self.costs.len()]),
                    });
                    out.len() - 1
                });
            }
            id_of_pc[i]
        };
        for (i, pc) in self.pcs.iter().enumerate() {
            if pc.values.iter().any(|&v| v != 0) {
                let f = id_of(i, &mut out);
                add(&mut out[f].own, &pc.values);
            }
        }
        if !self.has_calls() {
            return out;
        }
        // The functions on each context's stack, each once.
        let mut on_stack: Vec<Vec<usize>> = Vec::with_capacity(self.calls.len());
        for c in &self.calls {
            let mut set = c.parent.map_or_else(Vec::new, |p| on_stack[p].clone());
            let f = id_of(c.call_site, &mut out);
            if !set.contains(&f) {
                set.push(f);
            }
            on_stack.push(set);
        }
        for c in &self.context_costs {
            let f = id_of(c.pc, &mut out);
            let stack = c.context.map_or(&[][..], |ctx| &on_stack[ctx][..]);
            for &g in stack.iter().chain((!stack.contains(&f)).then_some(&f)) {
                if let Some(inclusive) = &mut out[g].inclusive {
                    add(inclusive, &c.values);
                }
            }
        }
        out.retain(|f| {
            f.own
                .iter()
                .chain(f.inclusive.iter().flatten())
                .any(|&v| v != 0)
        });
        out
    }

    /// The function `pc` counts in, as callgrind counts it: the one its
    /// code lies in (the outermost when inlined); for code no symbol
    /// names, its file in brackets (`[libc.so.6]`), as pprof groups such
    /// code (an area no file holds by its own name, `[vdso]`); the PC's
    /// address when not even its file is known.
    pub fn function_of(&self, pc: &PcCost) -> String {
        if let Some(f) = pc.location.outer_function() {
            return f.to_string();
        }
        match pc.object {
            // An area no file holds is named already (`[vdso]`).
            Some(o) if self.objects[o].path.starts_with('[') => self.objects[o].path.clone(),
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
            add(&mut totals, &p.values);
        }
        totals
    }
}

/// Adds `values` into `sums`, one by one.
pub(crate) fn add(sums: &mut [u64], values: &[u64]) {
    for (s, v) in sums.iter_mut().zip(values) {
        *s += v;
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
            build_id: None,
        });
        p.push(0x4000, vec![1], Some(0), inlined(0x4000, 5));
        p.push(0x4004, vec![1], Some(0), Location::address(0x4004));
        p.push(0x9000, vec![1], None, Location::address(0x9000));
        p.objects.push(crate::Object {
            path: "[vdso]".into(),
            start: 0xa000,
            end: 0xb000,
            build_id: None,
        });
        p.push(0xa010, vec![1], Some(1), Location::address(0xa010));
        let names: Vec<String> = p.pcs.iter().map(|pc| p.function_of(pc)).collect();
        assert_eq!(names, ["main", "[libc.so.6]", "0x9000", "[vdso]"]);
    }

    #[test]
    fn a_call_costs_what_ran_until_its_return_and_a_recursive_function_counts_once() {
        let p = crate::fixtures::recursive();
        assert!(p.has_calls());
        assert_eq!(p.inclusive(), vec![vec![5], vec![2]]);
        assert_eq!(
            p.call_stack(Some(1)),
            vec![3, 1],
            "f's call site, then main's"
        );
        let mut f = p.functions();
        f.sort_by(|a, b| a.function.cmp(&b.function));
        let got: Vec<(&str, u64, Option<u64>)> = f
            .iter()
            .map(|f| {
                (
                    f.function.as_str(),
                    f.own[0],
                    f.inclusive.as_ref().map(|i| i[0]),
                )
            })
            .collect();
        assert_eq!(got, [("f", 5, Some(5)), ("main", 3, Some(8))]);
    }

    #[test]
    fn a_flat_profile_has_no_inclusive_costs() {
        let mut p = PcProfile::new(vec![Cost::instructions()], vec![]);
        p.push(0x1000, vec![10], None, inlined(0x1000, 5));
        p.push(0x1004, vec![0], None, inlined(0x1004, 6));
        let f = p.functions();
        assert_eq!(f.len(), 1);
        assert_eq!((f[0].own.clone(), f[0].inclusive.clone()), (vec![10], None));
    }

    #[test]
    #[should_panic(expected = "one value per kind of cost")]
    fn a_pc_without_a_value_for_each_cost_is_refused() {
        let mut p = PcProfile::new(vec![Cost::instructions()], vec![]);
        p.push(0x1000, vec![1, 2], None, Location::address(0x1000));
    }
}
