//! The instruction stream as runs of basic blocks.
//!
//! A source that executes code block by block (the RV64 simulator) can
//! describe the retired instructions far more cheaply than one [`Event`]
//! each: one [`Run`] per block execution, naming the block and how many of
//! its instructions retired, with the blocks' instruction addresses kept
//! once in a [`Blocks`] table. Expanding the runs in order gives exactly the
//! PCs of the per-instruction events, in the same order, so a sink that
//! only needs the PC of every instruction (a code profile, an instruction
//! count, a sampler over all instructions) gets the same answer from runs
//! as from events, without a 32-byte record per instruction.
//!
//! This is the form a profiler that instruments basic blocks sees (a
//! counter per block rather than per instruction); [`crate::Sink`]
//! describes how a sink asks for it.
//!
//! [`Event`]: crate::Event

use crate::event::{flags, Class, ClassSet, Event};

/// One execution of a basic block: its first `len` instructions retired,
/// in order (all of them unless the execution stopped early: a fault, an
/// exit). A run of length 0 says that control reached the block but its
/// first instruction did not retire (a fault fetching or executing it):
/// it retires nothing, but tells where the previous run's transfer went.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[repr(C)]
pub struct Run {
    /// The block's id in the [`Blocks`] table.
    pub block: u32,
    /// Instructions of the block that retired, from its first (0 when
    /// none did).
    pub len: u32,
}

/// The basic blocks that runs name: for each id, the addresses of the
/// block's instructions in program order, where its first compressed
/// (2-byte) instruction is, if it has one, and the class of its last
/// instruction (a block ends at a control transfer; where it went is
/// where the next run starts).
///
/// The table only grows: an id stays valid, with the same instructions,
/// for the whole stream, so a sink may keep ids and look them up later.
#[derive(Clone, Debug, Default)]
pub struct Blocks {
    /// Every block's PCs, one block after another.
    pcs: Vec<u64>,
    /// The class of each instruction, beside `pcs`.
    classes: Vec<Class>,
    /// Per block, where its PCs are and what a sink asks of its end, in
    /// one record: a run's lookups touch one cache line.
    info: Vec<BlockInfo>,
}

/// One block of a [`Blocks`] table, with the first and last of its PCs
/// beside where they all are: a scan of runs for control transfers
/// ([`Transfers::scan`]) reads one record per run, not three places.
#[derive(Clone, Copy, Debug)]
#[repr(align(32))]
struct BlockInfo {
    /// Its first PC (0 for an empty block).
    first_pc: u64,
    /// Its last PC (0 for an empty block).
    last_pc: u64,
    /// Index of its first PC in `pcs`.
    start: u32,
    /// Its instructions.
    len: u32,
    /// The index of its first compressed instruction, or `u32::MAX`.
    first_compressed: u32,
    /// The class of its last instruction.
    last: Class,
}

impl Blocks {
    /// An empty table.
    pub fn new() -> Blocks {
        Blocks::default()
    }

    /// Adds a block of `instructions`, each a PC and its class, in
    /// program order, and returns its id. `first_compressed` is the index
    /// of its first 2-byte instruction, if any.
    pub fn push(
        &mut self,
        instructions: impl IntoIterator<Item = (u64, Class)>,
        first_compressed: Option<usize>,
    ) -> u32 {
        let id = self.info.len() as u32;
        let start = self.pcs.len();
        for (pc, class) in instructions {
            self.pcs.push(pc);
            self.classes.push(class);
        }
        let pcs = &self.pcs[start..];
        self.info.push(BlockInfo {
            first_pc: pcs.first().copied().unwrap_or(0),
            last_pc: pcs.last().copied().unwrap_or(0),
            start: start as u32,
            len: (self.pcs.len() - start) as u32,
            first_compressed: first_compressed.map_or(u32::MAX, |i| i as u32),
            last: self.classes[start..].last().copied().unwrap_or_default(),
        });
        id
    }

    /// Number of blocks.
    pub fn len(&self) -> usize {
        self.info.len()
    }

    /// Whether the table has no block.
    pub fn is_empty(&self) -> bool {
        self.info.is_empty()
    }

    /// The PCs of block `id`, in program order.
    ///
    /// # Panics
    /// If `id` is not a block of this table.
    #[inline]
    pub fn pcs(&self, id: u32) -> &[u64] {
        let b = self.info[id as usize];
        &self.pcs[b.start as usize..(b.start + b.len) as usize]
    }

    /// The PCs that `run` retired, in order.
    #[inline]
    pub fn run_pcs(&self, run: Run) -> &[u64] {
        self.run_pcs_at(run).1
    }

    /// [`run_pcs`](Self::run_pcs) with the position of the first PC in
    /// the table. Every instruction of every block has a position of its
    /// own, counting from 0 over the blocks in the order they were added,
    /// the next ones of the block following it; a position never changes
    /// nor names another PC, so a sink may keep something per instruction
    /// in a plain array.
    #[inline]
    pub fn run_pcs_at(&self, run: Run) -> (usize, &[u64]) {
        let b = self.info[run.block as usize];
        debug_assert!(run.len <= b.len, "a run longer than its block");
        let len = run.len.min(b.len);
        (
            b.start as usize,
            &self.pcs[b.start as usize..(b.start + len) as usize],
        )
    }

    /// The instructions `run` retired, in order, each its PC and class.
    #[inline]
    pub fn run_instructions(&self, run: Run) -> impl Iterator<Item = (u64, Class)> + '_ {
        let pcs = self.run_pcs(run);
        pcs.iter()
            .copied()
            .zip(self.classes(run.block).iter().copied())
    }

    /// The classes of the instructions of block `id`, beside
    /// [`pcs`](Self::pcs).
    #[inline]
    pub fn classes(&self, id: u32) -> &[Class] {
        let b = self.info[id as usize];
        &self.classes[b.start as usize..(b.start + b.len) as usize]
    }

    /// A run of every instruction of block `id`.
    #[inline]
    pub fn whole_run(&self, id: u32) -> Run {
        Run {
            block: id,
            len: self.info[id as usize].len,
        }
    }

    /// Whether `run` retired every instruction of its block.
    #[inline]
    pub fn is_whole(&self, run: Run) -> bool {
        self.info[run.block as usize].len == run.len
    }

    /// The class of block `id`'s last instruction.
    #[inline]
    pub fn last_class(&self, id: u32) -> Class {
        self.info[id as usize].last
    }

    /// The first and last PCs of block `id`, from the record its other
    /// facts are in (not the table of all PCs); `None` for an empty
    /// block.
    #[inline]
    pub fn ends(&self, id: u32) -> Option<(u64, u64)> {
        let b = self.info[id as usize];
        (b.len > 0).then_some((b.first_pc, b.last_pc))
    }

    /// Whether the instructions `run` retired include a compressed
    /// (2-byte) one.
    #[inline]
    pub fn run_has_compressed(&self, run: Run) -> bool {
        self.info[run.block as usize].first_compressed < run.len
    }

    /// Appends the blocks of `other` that this table does not have yet,
    /// so that a table kept as a copy of a source's has the same ids.
    pub fn extend_from(&mut self, other: &Blocks) {
        self.append_from(other, self.len());
    }

    /// Appends the blocks of `other` from id `from` on, after this
    /// table's: what a copy of `other` that holds `from` blocks lacks, or
    /// all of `other` (from 0) after a copy of the blocks before it.
    pub fn append_from(&mut self, other: &Blocks, from: usize) {
        for id in from..other.len() {
            let id = id as u32;
            let b = other.info[id as usize];
            self.push(
                other
                    .pcs(id)
                    .iter()
                    .copied()
                    .zip(other.classes(id).iter().copied()),
                (b.first_compressed != u32::MAX).then_some(b.first_compressed as usize),
            );
        }
    }

    /// Bytes the table holds.
    pub fn bytes(&self) -> usize {
        self.pcs.capacity() * 8
            + self.classes.capacity()
            + self.info.capacity() * std::mem::size_of::<BlockInfo>()
    }
}

/// Most instructions in a block that [`RunBuilder`] makes, as in the
/// simulator.
pub const MAX_BLOCK: usize = 64;

/// Turns a stream of per-instruction events into runs of blocks, for a
/// source that holds events but a sink that takes runs (and for testing
/// that a sink's answer from runs equals its answer from events).
///
/// A block ends after a control transfer, at a PC that does not follow the
/// previous instruction, or after [`MAX_BLOCK`] instructions; blocks with
/// the same instructions share an id.
#[derive(Default)]
pub struct RunBuilder {
    ids: rustc_hash::FxHashMap<Vec<u64>, u32>,
    current: Vec<u64>,
    /// The classes of the block's instructions so far.
    current_classes: Vec<Class>,
    current_compressed: Option<usize>,
    /// Where the instruction after the block's last one starts.
    next_pc: u64,
    /// The blocks that the runs name.
    pub blocks: Blocks,
}

impl RunBuilder {
    /// A builder with no blocks yet.
    pub fn new() -> RunBuilder {
        RunBuilder::default()
    }

    /// Appends to `out` the runs of `events` (every one an instruction, in
    /// order); a run still open at the end of the slice is ended there.
    pub fn runs_of(&mut self, events: &[Event], out: &mut Vec<Run>) {
        for e in events {
            if !self.current.is_empty() && e.pc != self.next_pc {
                self.end(out);
            }
            let len = if e.flags & flags::COMPRESSED != 0 {
                2
            } else {
                4
            };
            self.next_pc = e.pc.wrapping_add(len);
            if e.flags & flags::COMPRESSED != 0 && self.current_compressed.is_none() {
                self.current_compressed = Some(self.current.len());
            }
            self.current.push(e.pc);
            self.current_classes.push(e.class);
            if e.class.is_control() || self.current.len() == MAX_BLOCK {
                self.end(out);
            }
        }
        self.end(out);
    }

    fn end(&mut self, out: &mut Vec<Run>) {
        if self.current.is_empty() {
            return;
        }
        let len = self.current.len() as u32;
        let id = match self.ids.get(&self.current) {
            Some(&id) => id,
            None => {
                let id = self.blocks.push(
                    self.current
                        .iter()
                        .copied()
                        .zip(self.current_classes.iter().copied()),
                    self.current_compressed,
                );
                self.ids.insert(self.current.clone(), id);
                id
            }
        };
        out.push(Run { block: id, len });
        self.current.clear();
        self.current_classes.clear();
        self.current_compressed = None;
    }
}

/// Exact executions of every PC from runs of blocks: one increment per
/// block execution instead of one per instruction, expanded to per-PC
/// counts when asked. It keeps its own copy of the blocks it has seen, so
/// the counts can be expanded after the stream (and the source) is gone.
#[derive(Clone, Debug, Default)]
pub struct BlockCounts {
    /// Executions of each block that retired all its instructions, by id.
    whole: Vec<u64>,
    /// Executions that stopped early, by (block, instructions retired).
    partial: rustc_hash::FxHashMap<(u32, u32), u64>,
    /// The blocks seen so far, with the source's ids.
    blocks: Blocks,
    /// Instructions counted.
    instructions: u64,
}

impl BlockCounts {
    /// No executions yet.
    pub fn new() -> BlockCounts {
        BlockCounts::default()
    }

    /// Counts the executions of `runs`, whose blocks `blocks` names.
    pub fn add(&mut self, runs: &[Run], blocks: &Blocks) {
        self.blocks.extend_from(blocks);
        self.whole.resize(blocks.len(), 0);
        for run in runs {
            if blocks.is_whole(*run) {
                self.whole[run.block as usize] += 1;
            } else {
                *self.partial.entry((run.block, run.len)).or_insert(0) += 1;
            }
            self.instructions += run.len as u64;
        }
    }

    /// Instructions counted so far.
    pub fn instructions(&self) -> u64 {
        self.instructions
    }

    /// Calls `f(pc, class, n)` for every instruction of every block
    /// executed, `n` times each; a PC in several blocks comes once per
    /// block.
    pub fn for_each(&self, mut f: impl FnMut(u64, Class, u64)) {
        for (id, &n) in self.whole.iter().enumerate() {
            if n > 0 {
                for (pc, class) in self
                    .blocks
                    .run_instructions(self.blocks.whole_run(id as u32))
                {
                    f(pc, class, n);
                }
            }
        }
        for (&(block, len), &n) in &self.partial {
            for (pc, class) in self.blocks.run_instructions(Run { block, len }) {
                f(pc, class, n);
            }
        }
    }
}

/// Where control went at the end of runs: a run that retired its whole
/// block, ending in a control transfer of the chosen classes, is followed
/// by the run of wherever the transfer went (a taken branch's target, or
/// the next instruction if it fell through). The last run of a batch waits
/// for the first run of the next.
#[derive(Clone, Copy, Debug, Default)]
pub struct Transfers {
    classes: ClassSet,
    /// The PC of the transfer that ended the last run, if it is one.
    pending: Option<u64>,
}

impl Transfers {
    /// Follows the transfers of `classes`.
    pub fn new(classes: ClassSet) -> Transfers {
        Transfers {
            classes,
            pending: None,
        }
    }

    /// Calls `f(pc, to)` for every transfer of the chosen classes in
    /// `runs` whose destination is known by now, in order: `pc` is the
    /// transfer's address and `to` where the next instruction was.
    #[inline]
    pub fn scan(&mut self, runs: &[Run], blocks: &Blocks, mut f: impl FnMut(u64, u64)) {
        for r in runs {
            let b = blocks.info[r.block as usize];
            let pending = self.pending.take();
            if b.len == 0 {
                continue;
            }
            if let Some(pc) = pending {
                f(pc, b.first_pc);
            }
            if b.len == r.len && self.classes.contains(b.last) {
                self.pending = Some(b.last_pc);
            }
        }
    }
}

/// Calls `f` with the PC of every instruction of `runs`, in order.
#[inline]
pub fn for_each_pc(runs: &[Run], blocks: &Blocks, mut f: impl FnMut(u64)) {
    for r in runs {
        for &pc in blocks.run_pcs(*r) {
            f(pc);
        }
    }
}

/// Instructions that `runs` retired.
pub fn instructions(runs: &[Run]) -> u64 {
    runs.iter().map(|r| r.len as u64).sum()
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// A block of integer instructions at `pcs` ending in one of `last`.
    pub(crate) fn block(pcs: &[u64], last: Class) -> Vec<(u64, Class)> {
        let n = pcs.len();
        pcs.iter()
            .enumerate()
            .map(|(i, &pc)| (pc, if i + 1 == n { last } else { Class::IntAlu }))
            .collect()
    }

    #[test]
    fn runs_expand_to_their_blocks_prefixes() {
        let mut b = Blocks::new();
        let a = b.push(block(&[0x100, 0x104, 0x106], Class::CondBranch), Some(2));
        let c = b.push(block(&[0x200], Class::Jump), None);
        assert_eq!((a, c, b.len()), (0, 1, 2));
        assert_eq!(b.pcs(a), &[0x100, 0x104, 0x106]);
        assert!(b.run_has_compressed(Run { block: a, len: 3 }));
        assert!(!b.run_has_compressed(Run { block: a, len: 2 }));
        assert!(!b.run_has_compressed(Run { block: c, len: 1 }));
        assert_eq!(b.last_class(a), Class::CondBranch);
        assert_eq!(b.ends(a), Some((0x100, 0x106)));
        assert_eq!(b.ends(c), Some((0x200, 0x200)));
        let empty = b.push(Vec::new(), None);
        assert_eq!(b.ends(empty), None);
        let runs = [
            Run { block: a, len: 3 },
            Run { block: c, len: 1 },
            Run { block: a, len: 2 },
        ];
        let mut seen = Vec::new();
        for_each_pc(&runs, &b, |pc| seen.push(pc));
        assert_eq!(seen, [0x100, 0x104, 0x106, 0x200, 0x100, 0x104]);
        assert_eq!(instructions(&runs), 6);
        assert!(b.bytes() >= 4 * 8);
    }

    #[test]
    fn block_counts_expand_to_the_per_pc_counts() {
        let mut b = Blocks::new();
        let a = b.push(block(&[0x100, 0x104, 0x108], Class::Return), None);
        let c = b.push(block(&[0x104, 0x108], Class::Return), None);
        let runs = [
            Run { block: a, len: 3 },
            Run { block: a, len: 3 },
            Run { block: a, len: 1 },
            Run { block: c, len: 2 },
        ];
        let mut counts = BlockCounts::new();
        counts.add(&runs[..2], &b);
        counts.add(&runs[2..], &b);
        let mut per_pc = std::collections::BTreeMap::new();
        counts.for_each(|pc, _, n| *per_pc.entry(pc).or_insert(0) += n);
        let expected: std::collections::BTreeMap<u64, u64> =
            [(0x100, 3), (0x104, 3), (0x108, 3)].into_iter().collect();
        assert_eq!(per_pc, expected);
        assert_eq!(counts.instructions(), instructions(&runs));
    }

    #[test]
    fn transfers_are_where_the_next_run_starts() {
        let mut b = Blocks::new();
        let body = b.push(block(&[0x100, 0x104], Class::CondBranch), None);
        let exit = b.push(block(&[0x108], Class::Return), None);
        let runs = [
            Run {
                block: body,
                len: 2,
            },
            Run {
                block: body,
                len: 2,
            },
            Run {
                block: body,
                len: 1,
            }, // stopped before its branch
            Run {
                block: exit,
                len: 1,
            },
        ];
        let mut t = Transfers::new(ClassSet::of(Class::CondBranch));
        let mut seen = Vec::new();
        // Split across two batches: the pending branch waits.
        t.scan(&runs[..1], &b, |pc, to| seen.push((pc, to)));
        t.scan(&runs[1..], &b, |pc, to| seen.push((pc, to)));
        assert_eq!(seen, [(0x104, 0x100), (0x104, 0x100)]);
    }

    #[test]
    fn a_default_table_takes_blocks_too() {
        let mut b = Blocks::default();
        assert!(b.is_empty());
        let id = b.push(block(&[8, 12], Class::Call), None);
        assert_eq!(b.pcs(id), &[8, 12]);
    }

    #[test]
    fn a_built_run_stream_expands_to_the_events_pcs() {
        use crate::synth::{generate, GenConfig, Workload};
        let events = generate(&GenConfig::new(Workload::Mixed, 20_000).seed(5)).unwrap();
        let mut b = RunBuilder::new();
        let mut runs = Vec::new();
        // A copy kept as a thread beside the source keeps it: the blocks
        // new since the last look, appended to a table of their own, then
        // that table appended to the copy.
        let mut pieced = Blocks::new();
        for chunk in events.chunks(1000) {
            b.runs_of(chunk, &mut runs);
            let mut new = Blocks::new();
            new.append_from(&b.blocks, pieced.len());
            pieced.append_from(&new, 0);
        }
        let mut pcs = Vec::new();
        let mut copy = Blocks::new();
        copy.extend_from(&b.blocks);
        for_each_pc(&runs, &copy, |pc| pcs.push(pc));
        let expected: Vec<u64> = events.iter().map(|e| e.pc).collect();
        assert_eq!(pcs, expected);
        // The pieced copy is the same table: ids, PCs, classes and
        // compressed marks.
        assert_eq!(pieced.len(), b.blocks.len());
        for id in 0..b.blocks.len() as u32 {
            assert_eq!(pieced.pcs(id), b.blocks.pcs(id));
            assert_eq!(pieced.classes(id), b.blocks.classes(id));
            assert_eq!(
                pieced.info[id as usize].first_compressed,
                b.blocks.info[id as usize].first_compressed
            );
        }
        let mut nothing = Blocks::new();
        nothing.append_from(&b.blocks, b.blocks.len());
        assert!(nothing.is_empty());
        assert!(runs.iter().all(|r| r.len as usize <= MAX_BLOCK));
        assert!(b.blocks.len() < runs.len(), "repeated blocks share an id");
    }
}
