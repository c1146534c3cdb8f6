//! The pre-decoded code cache: basic blocks keyed by their start address.
//!
//! Each instruction is decoded once into an [`Op`]; straight-line runs of
//! them up to a control transfer form a block, looked up by PC through a
//! small direct-mapped table in front of a hash map. Every block counts its
//! executions, which gives the exact per-PC execution counts (the ground
//! truth of every estimator) without a per-instruction counter.
//!
//! A block also remembers where control went from it, as QEMU's
//! translator chains its blocks: one successor per way out (the branch
//! taken, or falling through to the next instruction), with its start
//! address and index. Going from block to block then reads the block just
//! run, already in the processor's cache, instead of the table in front
//! of the map, a 512 KiB table whose entries mostly are not. The cache
//! is dropped on `fence.i` (Zifencei, §3), on stores to executable pages
//! and on `mprotect`/`munmap` of code; the counts survive in a table.

use crate::decode::{self, length};
use crate::isa::Isa;
use crate::mem::{Access, Memory, PAGE};
use crate::op::{Kind, Op, ZERO_SINK};
use coprof_core::Class;
use rustc_hash::{FxHashMap, FxHashSet};

/// Most instructions in one block.
pub const MAX_BLOCK: usize = 64;
const FAST_SLOTS: usize = 1 << 15;
const BLOCKS_RESERVED: usize = 1 << 16;

/// One pre-decoded block: one cache line, which going into the block
/// reads (its ops, its count, its run id) and going out of it reads
/// again (its end and its successors).
#[repr(C, align(64))]
pub struct Block {
    /// The ops, in program order; only the last may transfer control.
    pub ops: Box<[Op]>,
    /// Times the block was entered.
    pub count: u64,
    /// The block's id in the runs' block table of the current run
    /// ([`coprof_core::Blocks`]), or [`NO_RUN_ID`] before it is first
    /// delivered in a run.
    pub run_id: u32,
    /// The offset of its translation to host code ([`crate::jit`]), or
    /// [`NOT_TRANSLATED`](crate::jit::NOT_TRANSLATED) or
    /// [`UNTRANSLATABLE`](crate::jit::UNTRANSLATABLE).
    pub jit: u32,
    /// The address after the last op: where control goes when it falls
    /// through, which chooses the way in [`Block::next_pc`].
    end: u64,
    /// Per way out (0: elsewhere, 1: falling through to `end`), the start
    /// address of the block control went to the last time it left that
    /// way; [`NO_SUCCESSOR`] before it has.
    next_pc: [u64; 2],
    /// Per way out, the index of that block (apart from its address, so
    /// that the block fits a cache line).
    next_idx: [u32; 2],
}

impl Block {
    /// The addresses of the block's bytes: from its first op to the end of
    /// its last (at least one byte, for a fetch that faulted at once).
    pub fn span(&self) -> std::ops::Range<u64> {
        let start = self.ops.first().map_or(self.end, |op| op.pc);
        start..self.end.max(start + 1)
    }

    /// The way out by which control went to `pc`: 1 falling through to
    /// the address after the block, 0 elsewhere.
    #[inline(always)]
    pub fn way_to(&self, pc: u64) -> usize {
        (pc == self.end) as usize
    }
}

/// A [`Block::next_pc`] of a way not taken yet: no block starts at an
/// odd address.
const NO_SUCCESSOR: u64 = u64::MAX;

// The header fits one cache line on 64-bit hosts, where it is 64 bytes.
#[cfg(target_pointer_width = "64")]
const _: () = assert!(std::mem::size_of::<Block>() == 64);

/// [`Block::run_id`] of a block not yet in the runs' block table.
pub const NO_RUN_ID: u32 = u32::MAX;

/// log2 of [`PAGE`]: a page's number is its address shifted right by it.
const PAGE_BITS: u32 = PAGE.trailing_zeros();

/// Blocks by start address.
pub struct CodeCache {
    /// The blocks; indices are stable until the next flush.
    pub blocks: Vec<Block>,
    map: FxHashMap<u64, u32>,
    /// The pages (address / 4096) that hold a decoded block's bytes: where
    /// [`decoded_in`](Self::decoded_in) looks first.
    pages: FxHashSet<u64>,
    fast: Box<[(u64, u32)]>,
    /// Executions per PC of blocks dropped by earlier flushes.
    retired: FxHashMap<u64, u64>,
    /// Per PC, entries of its block that stopped before reaching it (a
    /// fault, or the instruction limit): counted in the block's count,
    /// not executed.
    skipped: FxHashMap<u64, u64>,
    /// Times the cache was dropped.
    pub flushes: u64,
    /// The instruction set blocks are decoded for.
    pub isa: Isa,
}

impl Default for CodeCache {
    fn default() -> Self {
        CodeCache::new()
    }
}

impl CodeCache {
    /// An empty cache.
    pub fn new() -> CodeCache {
        CodeCache {
            // Room for most programs' blocks from the start: translated
            // blocks hold their counts' addresses, and a larger table,
            // which moves them, drops every translation (the pages are
            // committed only as blocks fill them).
            blocks: Vec::with_capacity(BLOCKS_RESERVED),
            map: FxHashMap::default(),
            pages: FxHashSet::default(),
            fast: vec![(u64::MAX, 0); FAST_SLOTS].into_boxed_slice(),
            retired: FxHashMap::default(),
            skipped: FxHashMap::default(),
            flushes: 0,
            isa: Isa::default(),
        }
    }

    /// An empty cache of blocks decoded for `isa`.
    pub fn with_isa(isa: Isa) -> CodeCache {
        CodeCache {
            isa,
            ..CodeCache::new()
        }
    }

    /// The index of the block starting at `pc`, decoding it if needed.
    /// The table in front of the map is looked at inline, in the
    /// simulator's loop; the rest is a call.
    #[inline(always)]
    pub fn lookup(&mut self, pc: u64, mem: &Memory) -> usize {
        let slot = ((pc >> 1) as usize) & (FAST_SLOTS - 1);
        // SAFETY: slot < FAST_SLOTS, the length of `fast`.
        let (tag, idx) = unsafe { *self.fast.get_unchecked(slot) };
        if tag == pc {
            return idx as usize;
        }
        self.lookup_map(pc, slot, mem)
    }

    /// [`lookup`](Self::lookup) of a `pc` missing from the table in front
    /// of the map, whose slot for it is `slot`.
    #[inline(never)]
    fn lookup_map(&mut self, pc: u64, slot: usize, mem: &Memory) -> usize {
        let idx = match self.map.get(&pc) {
            Some(i) => *i,
            None => {
                let block = translate(pc, mem, self.isa);
                let span = block.span();
                self.pages
                    .extend(span.start >> PAGE_BITS..=(span.end - 1) >> PAGE_BITS);
                let i = self.blocks.len() as u32;
                self.blocks.push(block);
                self.map.insert(pc, i);
                i
            }
        };
        self.fast[slot] = (pc, idx);
        idx as usize
    }

    /// The index of the block starting at `pc`, where control went from
    /// block `from`: its remembered successor that way out when it starts
    /// there, else [`lookup`](Self::lookup), which it then remembers.
    #[inline(always)]
    pub fn follow(&mut self, from: usize, pc: u64, mem: &Memory) -> usize {
        let block = &self.blocks[from];
        let way = block.way_to(pc);
        if block.next_pc[way] == pc {
            return block.next_idx[way] as usize;
        }
        let idx = self.lookup(pc, mem);
        let block = &mut self.blocks[from];
        block.next_pc[way] = pc;
        block.next_idx[way] = idx as u32;
        idx
    }

    /// Whether any block was decoded from an address in `range`, so that
    /// a change of what is mapped there (an `munmap`, `mprotect`, an
    /// `mmap` over it) may leave it stale.
    pub fn decoded_in(&self, range: &std::ops::Range<u64>) -> bool {
        if range.start >= range.end {
            return false;
        }
        // Most changes are of pages where nothing was decoded (a library
        // mapped by the loader): the pages say so without a look at
        // every block.
        let (first, last) = (range.start >> PAGE_BITS, (range.end - 1) >> PAGE_BITS);
        let on_a_page = if last - first < self.pages.len() as u64 {
            (first..=last).any(|p| self.pages.contains(&p))
        } else {
            self.pages.iter().any(|p| (first..=last).contains(p))
        };
        on_a_page
            && self.blocks.iter().any(|b| {
                let span = b.span();
                span.start < range.end && range.start < span.end
            })
    }

    /// Drops every block, as [`flush`](Self::flush), if one was decoded
    /// from an address in `range` ([`decoded_in`](Self::decoded_in)):
    /// after a store there or a change of its mapping. A library mapped
    /// where nothing ran yet, or a JIT writing into a fresh page, leaves
    /// every block and translation of the code that did run.
    pub fn flush_if_decoded_in(&mut self, range: &std::ops::Range<u64>) {
        if self.decoded_in(range) {
            self.flush();
        }
    }

    /// Drops every block (keeping their execution counts).
    pub fn flush(&mut self) {
        for b in self.blocks.drain(..) {
            if b.count > 0 {
                for op in b.ops.iter() {
                    *self.retired.entry(op.pc).or_insert(0) += b.count;
                }
            }
        }
        self.map.clear();
        self.pages.clear();
        self.fast.fill((u64::MAX, 0));
        self.flushes += 1;
    }

    /// Records that the last entry of block `bi` stopped after `done`
    /// of its ops: the rest were counted with the block but not executed.
    pub fn stopped_early(&mut self, bi: usize, done: usize) {
        for op in &self.blocks[bi].ops[done..] {
            *self.skipped.entry(op.pc).or_insert(0) += 1;
        }
    }

    /// Exact executions per PC so far, sorted by PC.
    pub fn pc_counts(&self) -> Vec<(u64, u64)> {
        let mut counts = self.retired.clone();
        for b in self.blocks.iter().filter(|b| b.count > 0) {
            for op in b.ops.iter() {
                *counts.entry(op.pc).or_insert(0) += b.count;
            }
        }
        for (pc, n) in &self.skipped {
            if let Some(c) = counts.get_mut(pc) {
                *c -= n;
            }
        }
        let mut v: Vec<_> = counts.into_iter().filter(|(_, n)| *n > 0).collect();
        v.sort_unstable();
        v
    }
}

fn fetch_fault(pc: u64, addr: u64) -> Op {
    Op {
        pc,
        imm: addr as i64,
        kind: Kind::FetchFault,
        rd: ZERO_SINK,
        rs1: 0,
        rs2: 0,
        rs3: 0,
        rm: 0,
        len: 2,
        class: Class::Other,
        emit: crate::op::Emit::NoValue,
    }
}

/// Decodes the block starting at `pc` for `isa`: up to the first
/// instruction that ends a block, an instruction that cannot be fetched,
/// or [`MAX_BLOCK`]. An instruction of an extension `isa` leaves out is
/// illegal.
pub fn translate(start: u64, mem: &Memory, isa: Isa) -> Block {
    let mut ops = Vec::with_capacity(8);
    let mut pc = start;
    loop {
        let low = match mem.fetch16(pc) {
            Ok(v) => v,
            Err(f) => {
                debug_assert_eq!(f.access, Access::Execute);
                ops.push(fetch_fault(pc, f.addr));
                break;
            }
        };
        let raw = if length(low) == 4 {
            match mem.fetch16(pc.wrapping_add(2)) {
                Ok(high) => (low as u32) | ((high as u32) << 16),
                Err(f) => {
                    ops.push(fetch_fault(pc, f.addr));
                    break;
                }
            }
        } else {
            low as u32
        };
        let mut op = decode::decode(raw, pc);
        if !isa.has(op.kind) {
            op = decode::illegal(raw, pc, op.len);
        }
        let end = op.ends_block();
        pc = op.next_pc();
        ops.push(op);
        if end || ops.len() >= MAX_BLOCK {
            break;
        }
    }
    Block {
        ops: ops.into_boxed_slice(),
        count: 0,
        run_id: NO_RUN_ID,
        jit: crate::jit::NOT_TRANSLATED,
        end: pc,
        next_pc: [NO_SUCCESSOR; 2],
        next_idx: [0; 2],
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::encode::{b_type, i_type};
    use crate::mem::perm;

    const CODE: u64 = 0x10000;

    /// Memory holding `words` at [`CODE`].
    fn code(words: &[u32]) -> Memory {
        let mut mem = Memory::new().unwrap();
        mem.map(CODE, 0x1000, perm::R | perm::X).unwrap();
        let bytes: Vec<u8> = words.iter().flat_map(|w| w.to_le_bytes()).collect();
        mem.poke(CODE, &bytes).unwrap();
        mem
    }

    /// Per way out of `block`, the start address and index of the block
    /// it is linked to.
    fn links(block: &Block) -> [(u64, u32); 2] {
        [0, 1].map(|way| (block.next_pc[way], block.next_idx[way]))
    }

    #[test]
    fn a_block_links_each_way_out_to_the_block_there() {
        // CODE: beq a0, a1, +12; CODE+4: addi a0, a0, 1; CODE+8: jalr
        // zero, 0(ra); CODE+12: addi a0, a0, 2; CODE+16: jalr zero, 0(ra).
        let mem = code(&[
            b_type(0, 10, 11, 12),
            i_type(0x13, 10, 0, 10, 1),
            i_type(0x67, 0, 0, 1, 0),
            i_type(0x13, 10, 0, 10, 2),
            i_type(0x67, 0, 0, 1, 0),
        ]);
        let mut cache = CodeCache::new();
        let branch = cache.lookup(CODE, &mem);
        let taken = cache.follow(branch, CODE + 12, &mem);
        let through = cache.follow(branch, CODE + 4, &mem);
        assert_eq!(cache.blocks[taken].ops[0].pc, CODE + 12);
        assert_eq!(cache.blocks[through].ops[0].pc, CODE + 4);
        assert_ne!(taken, through);
        // Both ways stay linked, each to its own block.
        assert_eq!(links(&cache.blocks[branch])[0], (CODE + 12, taken as u32));
        assert_eq!(links(&cache.blocks[branch])[1], (CODE + 4, through as u32));
        assert_eq!(cache.follow(branch, CODE + 12, &mem), taken);
        assert_eq!(cache.follow(branch, CODE + 4, &mem), through);
        // An indirect jump's way goes where the jump goes this time: the
        // link is replaced, and the block is the one a lookup finds.
        let there = cache.follow(taken, CODE + 4, &mem);
        assert_eq!(there, through);
        let elsewhere = cache.follow(taken, CODE + 8, &mem);
        assert_eq!(cache.blocks[elsewhere].ops[0].pc, CODE + 8);
        assert_eq!(elsewhere, cache.lookup(CODE + 8, &mem));
        assert_eq!(links(&cache.blocks[taken])[0], (CODE + 8, elsewhere as u32));
    }

    #[test]
    fn decoded_code_is_found_by_any_range_that_overlaps_it() {
        // CODE: addi; addi; jalr (12 bytes), and a fetch that faults
        // outside the mapping, kept as a block there.
        let mem = code(&[
            i_type(0x13, 10, 0, 10, 1),
            i_type(0x13, 10, 0, 10, 2),
            i_type(0x67, 0, 0, 1, 0),
        ]);
        let mut cache = CodeCache::new();
        assert!(!cache.decoded_in(&(0..u64::MAX)));
        cache.lookup(CODE, &mem);
        let fault = CODE + 0x3000;
        cache.lookup(fault, &mem);
        for (range, decoded) in [
            (CODE..CODE + 1, true),
            (CODE + 8..CODE + 0x1000, true),
            (CODE + 12..CODE + 0x1000, false),
            (CODE - 0x1000..CODE, false),
            (fault..fault + 0x1000, true),
            (fault + 0x1000..fault + 0x2000, false),
            (0..u64::MAX, true),
        ] {
            assert_eq!(cache.decoded_in(&range), decoded, "{range:x?}");
        }
    }

    #[test]
    fn a_flush_drops_the_links_with_the_blocks() {
        let mem = code(&[
            b_type(0, 10, 11, 8),
            i_type(0x67, 0, 0, 1, 0),
            i_type(0x67, 0, 0, 1, 0),
        ]);
        let mut cache = CodeCache::new();
        let first = cache.lookup(CODE, &mem);
        cache.follow(first, CODE + 8, &mem);
        cache.flush();
        assert!(cache.blocks.is_empty());
        let again = cache.lookup(CODE, &mem);
        assert_eq!(cache.blocks[again].next_pc, [NO_SUCCESSOR; 2]);
        let next = cache.follow(again, CODE + 8, &mem);
        assert_eq!(cache.blocks[next].ops[0].pc, CODE + 8);
    }
}
