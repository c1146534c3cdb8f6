//! Exact events per PC and calling context: the call graph of a stream.
//!
//! A [`CallTree`] follows the stream's calls and returns with a shadow
//! stack, as a profiler that instruments every call and return does
//! (callgrind, or the calling context tree of Ammons, Ball & Larus, PLDI
//! 1997), and counts every event under the chain of calls that was open
//! when it retired: its context. From it come what a flat profile cannot
//! give: each function's inclusive cost, the call arcs of a callgrind
//! file, and the stacks of a pprof profile.
//!
//! Events carry no stack, so the stack is rebuilt from the transfers:
//!
//! - a call (a jump that saves a return address: [`Class::Call`]) opens a
//!   context under the current one, one per call site and target;
//! - a recursive call, one whose call site and target are already in the
//!   current context's chain, goes back into that context rather than
//!   opening one more below it (recursion folded, as the calling context
//!   tree's authors fold it): what the deeper calls run counts once, in
//!   the context of the outermost, and the contexts of a recursive
//!   program are as many as its distinct chains without repeats, not as
//!   many as its calls;
//! - a return goes back to the innermost open call whose return address
//!   it goes to, closing every call opened after it: a `longjmp` or an
//!   exception that unwinds several frames returns to the frame it lands
//!   in. A return that goes to no open call's return address (a signal
//!   handler's, to its trampoline; a thread's first return) changes
//!   nothing.
//!
//! A call's return address is not in every stream (runs of blocks do not
//! hold instruction lengths), so a return is taken to go back to a call
//! when it lands just after it, within [`MAX_CALL_LEN`] bytes: for RV64 a
//! 2- or 4-byte call, for x86-64 any instruction.
//!
//! Each thread has a shadow stack of its own when the source says which
//! thread runs ([`Sink::thread_switch`]: the RV64 simulator does, and a
//! trace file of its run, from format version 2); a thread's first call
//! opens a context under the root. In a stream that does not say (a
//! version-1 trace), the threads of a multithreaded program share one
//! shadow stack, so their contexts mix at a switch (a return still finds
//! its own call, and the chains heal); single-threaded programs, and
//! each thread between switches, are exact.
//!
//! A source that samples a program rather than running every
//! instruction (the native tracer) cannot show its calls and returns; it
//! unwinds each sample's stack instead and gives it before the sample
//! ([`Sink::stack`]). The tree then takes the stack's calls as the open
//! ones, as a sampling profiler's call graph does (`perf record -g`),
//! and follows no transfers: a sample counts under the chain of calls
//! its stack holds, and a context's calls are not counted.
//!
//! Threads that run the same code share its contexts, so a context's
//! counts are those of every thread. [`CallTree::separate_threads`] keeps
//! them apart instead, as callgrind's `--separate-threads=yes` does: each
//! thread's calls open contexts under a root of its own.

use crate::{Blocks, Class, ClassSet, Event, OpenCall, Run, Sink};
use rustc_hash::FxHashMap;

/// The longest call instruction: a return that lands at most this many
/// bytes after a call's address returns from it (x86-64's longest
/// instruction; RV64's calls are 2 or 4 bytes).
pub const MAX_CALL_LEN: u64 = 15;

/// Deepest chain of calls kept apart. A call opened deeper (a runaway
/// recursion, or calls whose returns the stream never shows) counts in
/// the context at this depth, and its return closes nothing.
pub const MAX_DEPTH: usize = 4096;

/// The context of the root: no call open.
pub const ROOT: u32 = 0;

/// A calling context: a call site reached under its parent context.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Context {
    /// The context the call was made in ([`ROOT`] for the first call;
    /// the root's own parent is itself).
    pub parent: u32,
    /// The call instruction's address (0 for the root).
    pub call_site: u64,
    /// Where it went: the called function's entry (0 for the root).
    pub target: u64,
    /// Times the call was made in its parent context.
    pub calls: u64,
    /// Some(tid) for the root of thread `tid`'s contexts, when threads
    /// are kept apart ([`CallTree::separate_threads`]); its call site and
    /// target are then 0, and its parent [`ROOT`].
    pub thread: Option<u64>,
}

/// Counts the events of some classes per PC and calling context,
/// exactly, following calls and returns (see the [module](self)).
///
/// From a source that delivers runs of basic blocks it takes runs alone:
/// a call or a return ends its block, and where it went is where the next
/// run starts.
#[derive(Clone, Debug)]
pub struct CallTree {
    classes: ClassSet,
    contexts: Vec<Context>,
    /// The context a call opens, by (context it is made in, call site,
    /// target): a child, or the ancestor a recursive call goes back into.
    children: FxHashMap<(u32, u64, u64), u32>,
    /// The open calls, innermost last; the current context is the last.
    stack: Vec<u32>,
    /// Calls opened past [`MAX_DEPTH`] and not returned from yet.
    too_deep: u64,
    /// Returns that went to no open call.
    unmatched: u64,
    /// Counts per (context, PC), from events.
    counts: FxHashMap<(u32, u64), u64>,
    /// From runs: executions per (context, block), the block's last
    /// context and slot kept beside it, so that a block run again in the
    /// same context (a loop) costs an array access, not a lookup.
    runs: Option<RunCounts>,
    /// Where the last run's call or return went, once the next run says.
    pending: Option<(u64, Class)>,
    /// The thread running, when the source says, and the others' stacks.
    thread: Option<u64>,
    parked: FxHashMap<u64, ThreadState>,
    /// Whether each thread's contexts are kept under a root of its own.
    separate_threads: bool,
    /// Stacks the source gave ([`Sink::stack`]): when some, the events'
    /// calls and returns are not followed.
    stacks: u64,
    /// Whether the stream is known to be of samples with stacks
    /// ([`CallTree::of_samples`]).
    samples: bool,
}

/// A thread's shadow stack while another runs.
#[derive(Clone, Debug, Default)]
struct ThreadState {
    stack: Vec<u32>,
    too_deep: u64,
    pending: Option<(u64, Class)>,
}

/// Block executions per context.
#[derive(Clone, Debug, Default)]
struct RunCounts {
    /// The blocks seen so far, with the source's ids.
    blocks: Blocks,
    /// Per block: the [`WAYS`] contexts it last ran in, the latest
    /// first, each with its slot and its executions not yet added to the
    /// slot. A block run again in one of them (a loop's, or a helper's
    /// called from a few places in turn) touches this small array alone,
    /// not the slots, which are many more and far apart. On SQLite's 56
    /// million runs, 8.3 million looked their slot up with one way, 3.3
    /// million with two, 1.6 million with four and 0.18 million with
    /// eight.
    last: Vec<[Recent; WAYS]>,
    /// Slots of whole executions, by context (high 32 bits) and block.
    slot_of: FxHashMap<u64, u32>,
    /// Each slot's (context, block) and executions.
    slots: Vec<(u32, u32, u64)>,
    /// Executions that stopped early, by (context, block, instructions).
    partial: FxHashMap<(u32, u32, u32), u64>,
}

/// A block's last context, its slot there and its executions not yet
/// added to the slot.
#[derive(Clone, Copy, Debug)]
struct Recent {
    context: u32,
    slot: u32,
    n: u64,
}

impl Recent {
    /// A block that has not run yet.
    const NONE: Recent = Recent {
        context: ROOT,
        slot: u32::MAX,
        n: 0,
    };
}

/// Contexts kept per block in [`RunCounts::last`].
const WAYS: usize = 8;

impl RunCounts {
    /// Counts `run` in `context`; `whole` when it retired its whole block.
    #[inline]
    fn add(&mut self, context: u32, run: Run, whole: bool) {
        if !whole {
            *self
                .partial
                .entry((context, run.block, run.len))
                .or_insert(0) += 1;
            return;
        }
        let ways = &mut self.last[run.block as usize];
        if let Some(i) = ways
            .iter()
            .position(|w| w.context == context && w.slot != u32::MAX)
        {
            ways[..=i].rotate_right(1);
            ways[0].n += 1;
            return;
        }

        let recent = &mut ways[WAYS - 1];
        if recent.slot != u32::MAX {
            self.slots[recent.slot as usize].2 += recent.n;
        }
        let next = self.slots.len() as u32;
        let key = (context as u64) << 32 | run.block as u64;
        let slot = *self.slot_of.entry(key).or_insert(next);
        if slot == next {
            self.slots.push((context, run.block, 0));
        }
        *recent = Recent {
            context,
            slot,
            n: 1,
        };
        ways.rotate_right(1);
    }

    /// Adds every block's recent executions to its slot.
    fn flush(&mut self) {
        for recent in self.last.iter_mut().flatten() {
            if recent.slot != u32::MAX {
                self.slots[recent.slot as usize].2 += recent.n;
                recent.n = 0;
            }
        }
    }
}

impl CallTree {
    /// Counts the events of `classes` by context.
    pub fn new(classes: ClassSet) -> CallTree {
        CallTree {
            classes,
            contexts: vec![Context {
                parent: ROOT,
                call_site: 0,
                target: 0,
                calls: 0,
                thread: None,
            }],
            children: FxHashMap::default(),
            stack: Vec::new(),
            too_deep: 0,
            unmatched: 0,
            counts: FxHashMap::default(),
            runs: None,
            pending: None,
            thread: None,
            parked: FxHashMap::default(),
            separate_threads: false,
            stacks: 0,
            samples: false,
        }
    }

    /// Keeps each thread's counts apart, under a root context of its own
    /// ([`Context::thread`]), when the source says which thread runs:
    /// the same code run by two threads then counts in two contexts.
    pub fn separate_threads(mut self) -> CallTree {
        self.separate_threads = true;
        self
    }

    /// Counts a stream of samples, each with its stack ([`Sink::stack`]),
    /// as a native program's sampler gives them: the tree then wants the
    /// events of its classes alone, since it follows no calls or returns,
    /// so that a source unwinds the stacks of those alone.
    pub fn of_samples(mut self) -> CallTree {
        self.samples = true;
        self
    }

    /// The classes counted.
    pub fn classes(&self) -> ClassSet {
        self.classes
    }

    /// Every context, by id; [`ROOT`] first. A context's parent has a
    /// smaller id than it.
    pub fn contexts(&self) -> &[Context] {
        &self.contexts
    }

    /// Every (context, PC) with its count, once [`Sink::finish`] has been
    /// called; pairs that never counted are absent.
    pub fn counts(&self) -> &FxHashMap<(u32, u64), u64> {
        &self.counts
    }

    /// Per context, by id, the events counted in it itself and in it
    /// with every context below it, once the stream has finished:
    /// children have larger ids than their parents, so one pass from the
    /// last adds each context's inclusive total into its parent's.
    pub fn totals(&self) -> Vec<(u64, u64)> {
        let mut totals = vec![(0u64, 0u64); self.contexts.len()];
        for (&(c, _), &n) in &self.counts {
            totals[c as usize].0 += n;
            totals[c as usize].1 += n;
        }
        for id in (1..self.contexts.len()).rev() {
            let parent = self.contexts[id].parent as usize;
            totals[parent].1 += totals[id].1;
        }
        totals
    }

    /// Returns that went to no open call (signal handlers' returns, a
    /// thread's first return, returns after `MAX_DEPTH`).
    pub fn unmatched_returns(&self) -> u64 {
        self.unmatched
    }

    /// The stacks the source gave, one per sample that had one
    /// ([`Sink::stack`]); 0 for a stream whose calls were followed.
    pub fn stacks(&self) -> u64 {
        self.stacks
    }

    /// The context open now.
    fn current(&self) -> u32 {
        self.stack.last().copied().unwrap_or(ROOT)
    }

    /// A call at `pc` to `target` or a return to `target`.
    #[inline]
    fn transfer(&mut self, class: Class, pc: u64, target: u64) {
        match class {
            Class::Call => self.call(pc, target),
            Class::Return => self.ret(target),
            _ => {}
        }
    }

    fn call(&mut self, pc: u64, target: u64) {
        if let Some(id) = self.enter(pc, target) {
            self.contexts[id as usize].calls += 1;
        }
    }

    /// Opens the context of a call at `pc` to `target` in the current
    /// one, or goes back into it (recursion), without counting the call:
    /// its id, or `None` past [`MAX_DEPTH`].
    fn enter(&mut self, pc: u64, target: u64) -> Option<u32> {
        if self.stack.len() >= MAX_DEPTH {
            self.too_deep += 1;
            return None;
        }
        let parent = self.current();
        let id = match self.children.get(&(parent, pc, target)) {
            Some(&id) => id,
            None => {
                let id = self.open(parent, pc, target);
                self.children.insert((parent, pc, target), id);
                id
            }
        };
        self.stack.push(id);
        Some(id)
    }

    /// The context a call at `pc` to `target` made in `parent` opens the
    /// first time: the one in `parent`'s chain with the same call site and
    /// target (a recursive call), else a new child.
    fn open(&mut self, parent: u32, pc: u64, target: u64) -> u32 {
        let mut c = parent;
        while c != ROOT {
            let ctx = &self.contexts[c as usize];
            if ctx.call_site == pc && ctx.target == target {
                return c;
            }
            c = ctx.parent;
        }
        self.contexts.push(Context {
            parent,
            call_site: pc,
            target,
            calls: 0,
            thread: None,
        });
        self.contexts.len() as u32 - 1
    }

    /// The state of a thread not seen before: no call open, and with
    /// threads kept apart, its root context opened.
    fn new_thread(&mut self, tid: u64) -> ThreadState {
        let mut state = ThreadState::default();
        if self.separate_threads {
            self.contexts.push(Context {
                parent: ROOT,
                call_site: 0,
                target: 0,
                calls: 0,
                thread: Some(tid),
            });
            state.stack.push(self.contexts.len() as u32 - 1);
        }
        state
    }

    fn ret(&mut self, target: u64) {
        if self.too_deep > 0 {
            self.too_deep -= 1;
            return;
        }
        let returns_here = |&id: &u32| {
            let c = &self.contexts[id as usize];
            let site = c.call_site;
            c.thread.is_none() && target > site && target - site <= MAX_CALL_LEN
        };
        match self.stack.iter().rposition(returns_here) {
            Some(i) => self.stack.truncate(i),
            None => self.unmatched += 1,
        }
    }
}

impl Sink for CallTree {
    fn wants(&self) -> ClassSet {
        match self.samples {
            true => self.classes,
            false => self.classes.with(Class::Call).with(Class::Return),
        }
    }

    fn observe(&mut self, batch: &[Event]) {
        if self.runs.is_some() {
            return;
        }
        for e in batch {
            if self.classes.contains(e.class) {
                *self.counts.entry((self.current(), e.pc)).or_insert(0) += 1;
            }
            if self.stacks == 0 && !self.samples {
                self.transfer(e.class, e.pc, e.addr);
            }
        }
    }

    fn finish(&mut self) {
        if let Some(mut r) = self.runs.take() {
            r.flush();
            let mut add = |context: u32, run: Run, n: u64| {
                for (pc, class) in r.blocks.run_instructions(run) {
                    if self.classes.contains(class) {
                        *self.counts.entry((context, pc)).or_insert(0) += n;
                    }
                }
            };
            for &(context, block, n) in &r.slots {
                add(context, r.blocks.whole_run(block), n);
            }
            for (&(context, block, len), &n) in &r.partial {
                add(context, Run { block, len }, n);
            }
        }
    }

    fn wants_thread_switches(&self) -> bool {
        true
    }

    /// Parks the running thread's stack and takes up `tid`'s (empty for
    /// a thread not seen yet, or at its own root when threads are kept
    /// apart).
    fn thread_switch(&mut self, tid: u64) {
        if self.thread == Some(tid) {
            return;
        }
        let next = match self.parked.remove(&tid) {
            Some(state) => state,
            None => self.new_thread(tid),
        };
        let last = ThreadState {
            stack: std::mem::replace(&mut self.stack, next.stack),
            too_deep: std::mem::replace(&mut self.too_deep, next.too_deep),
            pending: std::mem::replace(&mut self.pending, next.pending),
        };
        if let Some(t) = self.thread.replace(tid) {
            self.parked.insert(t, last);
        }
    }

    fn wants_stacks(&self) -> bool {
        true
    }

    /// Makes `calls` the running thread's open calls, under its root, as
    /// if it had made them: a sample's context. The calls are not
    /// counted, since a stack says what is open, not how often it was
    /// entered; recursion folds as it does for calls followed.
    fn stack(&mut self, calls: &[OpenCall]) {
        self.stacks += 1;
        let root = usize::from(self.separate_threads && self.thread.is_some());
        self.stack.truncate(root);
        self.too_deep = 0;
        for c in calls {
            self.enter(c.call_site, c.target);
        }
    }

    /// A call or a return ends its block, and every PC's class is in its
    /// block, so runs alone are enough.
    fn wants_with_runs(&self) -> Option<ClassSet> {
        Some(ClassSet::NONE)
    }

    fn runs_follow(&mut self) {
        self.runs = Some(RunCounts::default());
    }

    fn observe_runs(&mut self, runs: &[Run], blocks: &Blocks) {
        let Some(mut r) = self.runs.take() else {
            return;
        };
        r.blocks.extend_from(blocks);
        r.last.resize(blocks.len(), [Recent::NONE; WAYS]);
        for &run in runs {
            let Some((first, last_pc)) = blocks.ends(run.block) else {
                continue;
            };
            if let Some((pc, class)) = self.pending.take() {
                self.transfer(class, pc, first);
            }
            let whole = blocks.is_whole(run);
            if run.len > 0 {
                r.add(self.current(), run, whole);
            }
            if whole {
                let last = blocks.last_class(run.block);
                if matches!(last, Class::Call | Class::Return) {
                    self.pending = Some((last_pc, last));
                }
            }
        }
        self.runs = Some(r);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{PcCounts, SliceSource, Source};
    use proptest::prelude::*;

    /// A program's instructions, each a PC and class, with a call's or a
    /// return's target.
    struct Trace(Vec<Event>);

    impl Trace {
        fn op(&mut self, pc: u64) {
            self.0.push(Event::new(pc, Class::IntAlu));
        }
        fn call(&mut self, pc: u64, to: u64) {
            self.0.push(Event::control(pc, Class::Call, to, true));
        }
        fn ret(&mut self, pc: u64, to: u64) {
            self.0.push(Event::control(pc, Class::Return, to, true));
        }
        fn load(&mut self, pc: u64) {
            self.0.push(Event::load(pc, 0x8000, 8, 1));
        }
    }

    /// `main` at 0x100 calls `f` (0x200) twice from two sites; `f` calls
    /// `g` (0x300) once each time, `g` loads once.
    fn program() -> Vec<Event> {
        let mut t = Trace(Vec::new());
        t.op(0x100);
        for site in [0x104, 0x10c] {
            t.call(site, 0x200);
            t.op(0x200);
            t.call(0x204, 0x300);
            t.load(0x300);
            t.ret(0x304, 0x208);
            t.ret(0x208, site + 4);
            t.op(site + 4);
        }
        t.0
    }

    fn tree_of(events: &[Event], classes: ClassSet, runs: bool) -> CallTree {
        let mut t = CallTree::new(classes);
        let mut source = SliceSource::new(events).batch_size(3);
        if runs {
            source = source.with_runs();
        }
        source.run(&mut t).unwrap();
        t
    }

    /// Each context as its chain of call sites, outermost first, with
    /// its calls and totals.
    fn chains(t: &CallTree) -> Vec<(Vec<u64>, u64, (u64, u64))> {
        let mut out: Vec<_> = (0..t.contexts().len() as u32)
            .map(|id| {
                let mut chain = Vec::new();
                let mut c = id;
                while c != ROOT {
                    chain.push(t.contexts()[c as usize].call_site);
                    c = t.contexts()[c as usize].parent;
                }
                chain.reverse();
                (
                    chain,
                    t.contexts()[id as usize].calls,
                    t.totals()[id as usize],
                )
            })
            .collect();
        out.sort();
        out
    }

    #[test]
    fn every_call_site_opens_its_own_context_and_a_context_holds_its_callees_costs() {
        for runs in [false, true] {
            let t = tree_of(&program(), ClassSet::ALL, runs);
            assert_eq!(
                chains(&t),
                vec![
                    (vec![], 0, (5, 15)),
                    (vec![0x104], 1, (3, 5)),
                    (vec![0x104, 0x204], 1, (2, 2)),
                    (vec![0x10c], 1, (3, 5)),
                    (vec![0x10c, 0x204], 1, (2, 2)),
                ],
                "from runs: {runs}"
            );
            assert_eq!(t.unmatched_returns(), 0);
            // The load in g, under each of main's two calls of f.
            let loads = tree_of(&program(), ClassSet::of(Class::Load), runs);
            let mut at: Vec<(Vec<u64>, u64)> = loads
                .counts()
                .iter()
                .map(|(&(c, pc), &n)| {
                    assert_eq!(pc, 0x300);
                    (chains_of(&loads, c), n)
                })
                .collect();
            at.sort();
            assert_eq!(at, vec![(vec![0x104, 0x204], 1), (vec![0x10c, 0x204], 1)]);
        }
    }

    /// Each (context, PC) that counted, as its chain of call sites and
    /// the PC, sorted.
    fn counted_at(t: &CallTree) -> Vec<(Vec<u64>, u64)> {
        let mut at: Vec<(Vec<u64>, u64)> = t
            .counts()
            .keys()
            .map(|&(c, pc)| (chains_of(t, c), pc))
            .collect();
        at.sort();
        at
    }

    fn chains_of(t: &CallTree, mut c: u32) -> Vec<u64> {
        let mut chain = Vec::new();
        while c != ROOT {
            chain.push(t.contexts()[c as usize].call_site);
            c = t.contexts()[c as usize].parent;
        }
        chain.reverse();
        chain
    }

    /// Each event of `events` with the calls open when it retired,
    /// outermost first, by a shadow stack of its own.
    fn with_stacks(events: &[Event]) -> Vec<(Vec<OpenCall>, Event)> {
        let mut open = Vec::new();
        let mut out = Vec::new();
        for &e in events {
            out.push((open.clone(), e));
            match e.class {
                Class::Call => open.push(OpenCall {
                    call_site: e.pc,
                    target: e.addr,
                }),
                Class::Return => {
                    open.pop();
                }
                _ => {}
            }
        }
        out
    }

    #[test]
    fn samples_with_their_stacks_count_in_the_contexts_the_calls_followed_give() {
        let followed = tree_of(&program(), ClassSet::ALL, false);
        let mut sampled = CallTree::new(ClassSet::ALL);
        assert!(sampled.wants_stacks());
        for (stack, e) in with_stacks(&program()) {
            sampled.stack(&stack);
            sampled.observe(&[e]);
        }
        sampled.finish();
        // The same contexts and costs; a stack says no call's count.
        let uncounted: Vec<_> = chains(&followed)
            .into_iter()
            .map(|(chain, _, totals)| (chain, 0, totals))
            .collect();
        assert_eq!(chains(&sampled), uncounted);
        assert_eq!(sampled.counts(), followed.counts());
    }

    #[test]
    fn a_tree_of_samples_wants_its_classes_alone() {
        let loads = ClassSet::of(Class::Load);
        assert_eq!(CallTree::new(loads).of_samples().wants(), loads);
        let followed = CallTree::new(loads).wants();
        assert!(followed.contains(Class::Call) && followed.contains(Class::Return));
    }

    #[test]
    fn a_sampled_call_or_return_is_a_sample_not_a_transfer() {
        let mut t = CallTree::new(ClassSet::ALL);
        let f = OpenCall {
            call_site: 0x104,
            target: 0x200,
        };
        t.stack(&[f]);
        t.observe(&[Event::control(0x204, Class::Call, 0x300, true)]);
        // Without its stack, the next sample would be in g.
        t.stack(&[f]);
        t.observe(&[Event::control(0x208, Class::Return, 0x108, true)]);
        t.stack(&[]);
        t.observe(&[Event::new(0x108, Class::IntAlu)]);
        t.finish();
        assert_eq!(t.contexts().len(), 2, "the root and f's");
        let at = counted_at(&t);
        assert_eq!(
            at,
            [(vec![], 0x108), (vec![0x104], 0x204), (vec![0x104], 0x208)]
        );
    }

    #[test]
    fn a_sampled_stack_opens_under_its_threads_root_when_threads_are_kept_apart() {
        let mut t = CallTree::new(ClassSet::ALL).separate_threads();
        let f = OpenCall {
            call_site: 0x104,
            target: 0x200,
        };
        for tid in [7, 8, 7] {
            t.thread_switch(tid);
            t.stack(&[f]);
            t.observe(&[Event::new(0x200, Class::IntAlu)]);
        }
        t.finish();
        // Each thread's root, and f's call under each.
        let threads: Vec<_> = t.contexts().iter().filter_map(|c| c.thread).collect();
        assert_eq!(threads, [7, 8]);
        let mut per_thread: Vec<(u64, u64)> = t
            .counts()
            .iter()
            .map(|(&(c, _), &n)| {
                let ctx = t.contexts()[c as usize];
                assert_eq!(ctx.call_site, 0x104);
                (t.contexts()[ctx.parent as usize].thread.unwrap(), n)
            })
            .collect();
        per_thread.sort();
        assert_eq!(per_thread, [(7, 2), (8, 1)]);
    }

    #[test]
    fn a_return_past_several_calls_closes_them_all_and_a_stray_one_changes_nothing() {
        let mut t = Trace(Vec::new());
        t.call(0x100, 0x200); // main → f
        t.call(0x204, 0x300); // f → g
        t.call(0x304, 0x400); // g → h, which longjmps back into main
        t.ret(0x400, 0x104);
        t.op(0x104);
        t.ret(0x108, 0x9000); // goes to no open call
        t.op(0x10c);
        let tree = tree_of(&t.0, ClassSet::ALL, false);
        assert_eq!(tree.unmatched_returns(), 1);
        // Both ops after the long return count at the root.
        let root: u64 = tree
            .counts()
            .iter()
            .filter(|(&(c, _), _)| c == ROOT)
            .map(|(_, &n)| n)
            .sum();
        assert_eq!(root, 4, "main's call, the two ops and the stray return");
    }

    #[test]
    fn each_thread_has_its_own_stack_when_the_source_says_which_runs() {
        // Thread 1 calls f (0x1000) and is switched out inside it; thread
        // 2 calls g (0x2000); thread 1 goes on in f, then returns.
        let mut t = CallTree::new(ClassSet::ALL);
        let call = |pc, to| Event::control(pc, Class::Call, to, true);
        let ret = |pc, to| Event::control(pc, Class::Return, to, true);
        t.thread_switch(1);
        t.observe(&[call(0x100, 0x1000), Event::new(0x1000, Class::IntAlu)]);
        t.thread_switch(2);
        t.observe(&[call(0x200, 0x2000), Event::new(0x2000, Class::IntAlu)]);
        t.thread_switch(1);
        t.observe(&[Event::new(0x1004, Class::IntAlu), ret(0x1008, 0x104)]);
        t.thread_switch(2);
        t.observe(&[Event::new(0x2004, Class::IntAlu)]);
        t.finish();
        let at = counted_at(&t);
        assert_eq!(
            at,
            [
                (vec![], 0x100),
                (vec![], 0x200),
                (vec![0x100], 0x1000),
                (vec![0x100], 0x1004),
                (vec![0x100], 0x1008),
                (vec![0x200], 0x2000),
                (vec![0x200], 0x2004),
            ]
        );
        assert_eq!(t.unmatched_returns(), 0);
    }

    #[test]
    fn threads_kept_apart_count_the_same_code_under_roots_of_their_own() {
        // Threads 1 and 2 both call f (0x1000) from the same site, in
        // turns; f returns in thread 2 while thread 1 is still in it.
        let call = |pc, to| Event::control(pc, Class::Call, to, true);
        let ret = |pc, to| Event::control(pc, Class::Return, to, true);
        let run = |t: &mut CallTree| {
            t.thread_switch(1);
            t.observe(&[call(0x100, 0x1000), Event::new(0x1000, Class::IntAlu)]);
            t.thread_switch(2);
            t.observe(&[call(0x100, 0x1000), Event::new(0x1000, Class::IntAlu)]);
            t.observe(&[Event::new(0x1004, Class::IntAlu), ret(0x1008, 0x104)]);
            t.thread_switch(1);
            t.observe(&[Event::new(0x1004, Class::IntAlu)]);
            t.finish();
        };
        let mut shared = CallTree::new(ClassSet::ALL);
        run(&mut shared);
        let mut apart = CallTree::new(ClassSet::ALL).separate_threads();
        run(&mut apart);
        // Shared: one context for f, with both threads' counts.
        assert_eq!(shared.contexts().len(), 2);
        assert_eq!(shared.counts()[&(1, 0x1000)], 2);
        // Apart: each thread's root, and f's context under each.
        let roots: Vec<(u32, Option<u64>)> = apart
            .contexts()
            .iter()
            .enumerate()
            .filter(|(_, c)| c.thread.is_some())
            .map(|(i, c)| (i as u32, c.thread))
            .collect();
        assert_eq!(roots, [(1, Some(1)), (3, Some(2))]);
        let thread_of = |mut c: u32| loop {
            match apart.contexts()[c as usize] {
                Context {
                    thread: Some(t), ..
                } => return t,
                Context { parent, .. } => c = parent,
            }
        };
        let mut per_thread: Vec<(u64, u64, u64)> = apart
            .counts()
            .iter()
            .map(|(&(c, pc), &n)| (thread_of(c), pc, n))
            .collect();
        per_thread.sort();
        assert_eq!(
            per_thread,
            [
                (1, 0x100, 1),
                (1, 0x1000, 1),
                (1, 0x1004, 1),
                (2, 0x100, 1),
                (2, 0x1000, 1),
                (2, 0x1004, 1),
                (2, 0x1008, 1),
            ]
        );
        // Summed over threads, the counts per PC are the shared tree's.
        let per_pc = |t: &CallTree| {
            let mut m: Vec<(u64, u64)> = Vec::new();
            for (&(_, pc), &n) in t.counts() {
                match m.iter_mut().find(|(p, _)| *p == pc) {
                    Some(x) => x.1 += n,
                    None => m.push((pc, n)),
                }
            }
            m.sort();
            m
        };
        assert_eq!(per_pc(&apart), per_pc(&shared));
        assert_eq!(apart.unmatched_returns(), 0);
    }

    #[test]
    fn calls_deeper_than_the_limit_count_in_the_deepest_context_and_their_returns_match() {
        let mut t = Trace(Vec::new());
        let depth = MAX_DEPTH as u64 + 10;
        for d in 0..depth {
            t.call(0x1000 + 8 * d, 0x1000 + 8 * (d + 1));
        }
        t.op(0x10_0000);
        for d in (0..depth).rev() {
            t.ret(0x10_0004, 0x1000 + 8 * d + 4);
        }
        t.op(0x10_0008);
        let tree = tree_of(&t.0, ClassSet::ALL, false);
        assert_eq!(tree.contexts().len(), MAX_DEPTH + 1);
        assert_eq!(tree.unmatched_returns(), 0);
        assert_eq!(tree.counts()[&(ROOT, 0x10_0008)], 1);
        assert_eq!(tree.counts()[&(MAX_DEPTH as u32, 0x10_0000)], 1);
    }

    #[test]
    fn a_recursive_call_goes_back_into_its_context_and_its_cost_counts_once() {
        // main calls f from 0x100; f calls itself from 0x200 and 0x210,
        // as fib does, four levels deep.
        fn f(t: &mut Trace, depth: u32, back: u64) {
            t.op(0x1000);
            if depth > 0 {
                for site in [0x200, 0x210] {
                    t.call(site, 0x1000);
                    f(t, depth - 1, site + 4);
                    t.op(site + 4);
                }
            }
            t.ret(0x1008, back);
        }
        let mut t = Trace(Vec::new());
        t.call(0x100, 0x1000);
        f(&mut t, 4, 0x104);
        t.op(0x104);
        for runs in [false, true] {
            let tree = tree_of(&t.0, ClassSet::ALL, runs);
            // main's call, then f from each site, then each site under
            // the other: 0x200 under 0x204 and 0x204 under 0x200.
            let got: Vec<Vec<u64>> = chains(&tree).into_iter().map(|c| c.0).collect();
            assert_eq!(
                got,
                [
                    vec![],
                    vec![0x100],
                    vec![0x100, 0x200],
                    vec![0x100, 0x200, 0x210],
                    vec![0x100, 0x210],
                    vec![0x100, 0x210, 0x200],
                ]
            );
            assert_eq!(tree.totals()[ROOT as usize].1, t.0.len() as u64);
            assert_eq!(
                tree.totals()[1].1,
                t.0.len() as u64 - 2,
                "all but main's two"
            );
            assert_eq!(tree.contexts()[1].calls, 1);
            assert_eq!(tree.unmatched_returns(), 0);
        }
    }

    /// A random program: nested calls and returns (some returning past
    /// several calls) with plain instructions between, and the context
    /// of every instruction as the program knows it. Every transfer goes
    /// where the next instruction is (a call site is reached by a jump),
    /// and a PC has one class, as in a real program: plain instructions
    /// at multiples of 4, returns 1 above one and jumps 3 above.
    fn random_program(steps: Vec<(u8, u8)>) -> (Vec<Event>, Vec<Vec<u64>>) {
        let mut events = Vec::new();
        let mut truth = Vec::new();
        let mut stack: Vec<(u64, u64)> = Vec::new();
        let mut pc = 0x100_0000u64;
        for (what, arg) in steps {
            match what % 4 {
                0 if stack.len() < 30 => {
                    let site = 0x1_0000 * (1 + arg as u64 % 8);
                    truth.push(folded(&stack));
                    events.push(Event::control(pc | 3, Class::Jump, site, true));
                    truth.push(folded(&stack));
                    pc = 0x100_0000 * (1 + arg as u64 % 4);
                    events.push(Event::control(site, Class::Call, pc, true));
                    stack.push((site, pc));
                    // The called function's first instruction.
                    truth.push(folded(&stack));
                    events.push(Event::new(pc, Class::IntAlu));
                    pc += 4;
                }
                1 if !stack.is_empty() => {
                    // Back past 1 to 3 calls (a longjmp past more than
                    // one), unless the call returned to is open again
                    // inside: from the transfer alone that is the
                    // innermost's return.
                    let mut back = 1 + (arg as usize % 3).min(stack.len() - 1);
                    let n = stack.len();
                    let site = stack[n - back].0;
                    if stack[n - back + 1..].iter().any(|f| f.0 == site) {
                        back = 1;
                    }
                    truth.push(folded(&stack));
                    let site = stack[n - back].0;
                    stack.truncate(n - back);
                    events.push(Event::control(pc | 1, Class::Return, site + 4, true));
                    pc = site + 4;
                }
                _ => {
                    truth.push(folded(&stack));
                    events.push(Event::new(pc, Class::IntAlu));
                    pc += 4;
                }
            }
        }
        (events, truth)
    }

    /// The chain of call sites of the context a stack of (call site,
    /// target) calls counts in: a call already in the chain goes back to
    /// it.
    fn folded(stack: &[(u64, u64)]) -> Vec<u64> {
        let mut chain: Vec<(u64, u64)> = Vec::new();
        for &call in stack {
            match chain.iter().position(|&c| c == call) {
                Some(i) => chain.truncate(i + 1),
                None => chain.push(call),
            }
        }
        chain.into_iter().map(|c| c.0).collect()
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(64))]

        /// Every event counts under the calls the program had open, from
        /// events and from runs alike, and summed over contexts the
        /// counts are the flat profile's.
        #[test]
        fn every_event_counts_in_the_context_the_program_had_open(
            steps in proptest::collection::vec((any::<u8>(), any::<u8>()), 1..400),
        ) {
            let (events, truth) = random_program(steps);
            let mut want: FxHashMap<(Vec<u64>, u64), u64> = FxHashMap::default();
            for (e, chain) in events.iter().zip(&truth) {
                *want.entry((chain.clone(), e.pc)).or_insert(0) += 1;
            }
            let mut flat = PcCounts::new(ClassSet::ALL);
            SliceSource::new(&events).run(&mut flat).unwrap();
            for runs in [false, true] {
                let t = tree_of(&events, ClassSet::ALL, runs);
                let mut got: FxHashMap<(Vec<u64>, u64), u64> = FxHashMap::default();
                let mut per_pc: FxHashMap<u64, u64> = FxHashMap::default();
                for (&(c, pc), &n) in t.counts() {
                    *got.entry((chains_of(&t, c), pc)).or_insert(0) += n;
                    *per_pc.entry(pc).or_insert(0) += n;
                }
                prop_assert_eq!(&got, &want);
                prop_assert_eq!(&per_pc, flat.counts());
                prop_assert_eq!(t.totals()[ROOT as usize].1, events.len() as u64);
            }
        }
    }
}
