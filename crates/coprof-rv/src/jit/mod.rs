//! The block translator: hot blocks' ops turned into host code, run in
//! place of the interpreter.
//!
//! A block that has run [`HOT`] times is translated, once, as far as its
//! ops allow: integer computation (RV64I §2.4, §5.2), multiplication and
//! division (M §7), the bit manipulation of Zba, Zbb, Zbc and Zbs (`bits`),
//! loads and stores (§2.6, and F and D's), the AMOs, LR
//! and SC (A §8, `atomic`), branches and
//! jumps (§2.5), the floating-point CSRs (§9.1, F §11.2), and the F and
//! D ops that compute
//! (§11, §12): arithmetic, compares and conversions of both precisions on
//! their fast path in place (`float`), with the interpreter's results and
//! exact flags, and everything else as calls of the interpreter's own
//! code for them (`cpu::exec_float`), so that their results, rounding
//! and flags are the interpreter's. Its translation then runs each time
//! the block does.
//! Where a block holds an op the translator does not take (the counter
//! CSRs, `ecall`), or an op whose event the run builds and
//! the translation does not (anything but a load's or a store's), the
//! translation covers the ops before it and the interpreter runs the
//! rest. A load or store whose address is not on the fast path (a fault,
//! an access across two pages, a store to code; for an atomic op also a
//! misaligned address or shared memory) also hands the rest of
//! the block to the interpreter, at that op, as does a floating-point op
//! whose rounding mode is reserved. So every fault, signal, and
//! event other than a load's or a store's comes from the interpreter, and
//! a run with translation gives the same results as one without: the same
//! instructions, registers, memory, events in the same batches, and
//! counts.
//!
//! Translations are linked to one another as qemu chains its blocks: an
//! exit with one target jumps on to the next block's translation through
//! a word of its header, written by [`Jit::link`] the first
//! time the simulator's loop sees control go that way, and the entry
//! from another translation does the loop's work between blocks: it
//! counts the block, adds its run, and keeps the instructions retired
//! below the count at which the loop must look, or goes back to the loop
//! before the block starts. A `jalr`'s exit is linked likewise for the
//! last target the loop saw it take, and looks any other up in the jump
//! cache (`Jump`) before it goes back to the loop.
//!
//! Only x86-64 hosts translate; elsewhere [`Jit::new`] gives `None` and
//! every block is interpreted.

#[cfg(target_arch = "x86_64")]
mod arena;
#[cfg(target_arch = "x86_64")]
mod atomic;
#[cfg(target_arch = "x86_64")]
mod bits;
#[cfg(target_arch = "x86_64")]
mod encode;
#[cfg(target_arch = "x86_64")]
mod float;
#[cfg(target_arch = "x86_64")]
mod regs;
#[cfg(target_arch = "x86_64")]
mod x86;

#[cfg(all(test, target_arch = "x86_64"))]
mod tests;

use crate::code::{Block, CodeCache};
use crate::cpu::{exec_block, Cpu, Stop};
use crate::events::Events;
use crate::mem::Memory;
use coprof_core::ClassSet;

/// Executions after which a block is translated: a block run fewer
/// times costs less to interpret than to translate (some 7 µs a block of
/// Python's, 15 µs before the translations were encoded without iced's
/// block encoder). On SQLite's driver over 100 rows, `coprof run` took
/// 73 ms of user time with 32, 59 with 256, 49 with 1,024 and 64
/// interpreting; over 25,000 rows 0.36 to 0.40 s with 32, 0.35 to 0.37
/// with 256 and 0.39 to 0.51 with 1,024. With the cheaper encoding, 64
/// and 128 were no faster than 256 (docs/PERFORMANCE.md).
pub const HOT: u64 = 256;

/// [`Block::jit`] of a block not translated (yet).
pub const NOT_TRANSLATED: u32 = u32::MAX;
/// [`Block::jit`] of a block whose first op cannot be translated.
pub const UNTRANSLATABLE: u32 = u32::MAX - 1;

/// Bytes of host code held before every translation is dropped.
const ARENA_BYTES: usize = 64 << 20;

/// Entries of the jump cache: 1,024, 16 KiB.
pub(crate) const JUMPS: usize = 1024;

/// One entry of the jump cache: a target of `jalr`s and where its
/// block's translation is entered from another (0 when empty).
///
/// A `jalr` is linked for one target, the last one the loop saw it
/// take (a return from a function, for the call site that called last);
/// a translation that finds another target looks in this table, shared
/// by all of them and keyed by the target's address, before it goes
/// back to the loop, as qemu's `lookup_and_goto_ptr` looks up its
/// per-CPU table of jump targets. The loop fills an entry each time it
/// links a `jalr`; dropping the translations empties the table.
#[derive(Clone, Copy, Debug)]
#[repr(C)]
pub(crate) struct Jump {
    pc: u64,
    entry: u64,
}

// The translations find an entry's slot by a shift of the target.
const _: () = assert!(std::mem::size_of::<Jump>().is_power_of_two());

impl Jump {
    /// An empty entry: its odd address is no target (a `jalr` clears
    /// the lowest bit of its target).
    const EMPTY: Jump = Jump {
        pc: u64::MAX,
        entry: 0,
    };
}

/// The slot of `pc` in the jump cache: its low bits above the first
/// (every instruction is at an even address). The translations compute
/// it again in their code (`x86`).
#[inline(always)]
fn jump_slot(pc: u64) -> usize {
    (pc >> 1) as usize & (JUMPS - 1)
}

/// What a translation reads and writes besides the guest registers:
/// passed by pointer, its layout known to the code ([`x86`]).
#[repr(C)]
pub(crate) struct Ctx {
    /// The guest's integer registers ([`Cpu::x`]).
    x: *mut u64,
    /// Host address of guest address 0.
    base: *mut u8,
    /// Permissions per guest page.
    perms: *const u8,
    /// The next free event slot.
    ev: *mut coprof_core::Event,
    /// Where control goes after the block, when the translation ran it
    /// to its end.
    pc: u64,
    /// Instructions that may retire in blocks entered from other
    /// translations before the loop must look at the count (timers,
    /// threads, progress, the limit): less each time one is entered.
    budget: u64,
    /// The index of the block run last.
    bi: u32,
    _pad: u32,
    /// The runs of blocks: the buffer, its length and the batch size
    /// (null and 0 when the run takes none).
    runs: *mut coprof_core::Run,
    runs_len: u64,
    runs_cap: u64,
    /// The end of the room for events ([`Events::room_for`]).
    ev_end: *mut coprof_core::Event,
    /// The hart, for the ops a translation hands to
    /// [`exec_float`](crate::cpu::exec_float).
    cpu: *mut Cpu,
}

/// Bytes before a translation's entry from the loop: per way out of the
/// block, the address its exit jumps to (its own return to the loop, or
/// the entry of the block linked to it), the address of its entry from
/// another translation, and, for a block that ends in a `jalr`, the
/// target its way 0 was linked for (an odd address, which no target is,
/// until then).
pub(crate) const HEADER: usize = 32;

/// What a translation returns when it was entered from another and
/// found no room for its block's run or events: the block before it ran
/// to its end, and this one has not started.
pub(crate) const NOT_ENTERED: u32 = u32::MAX;

/// Translations of the simulator's blocks.
pub struct Jit {
    #[cfg(target_arch = "x86_64")]
    arena: arena::Arena,
    /// Copies of the ops the translations hand to
    /// [`exec_float`](crate::cpu::exec_float), whose addresses they
    /// hold: dropped with them.
    /// Boxed: each op's address must stay put while the list grows.
    #[cfg(target_arch = "x86_64")]
    #[allow(clippy::vec_box)]
    float_ops: Vec<Box<crate::op::Op>>,
    /// The jump cache (see [`Jump`]): boxed, since translations hold its
    /// address.
    #[cfg(target_arch = "x86_64")]
    jumps: Box<[Jump; JUMPS]>,
    /// The classes whose events the translations build: the run's.
    wants: ClassSet,
    /// Whether the translations add runs of blocks: the run's.
    runs: bool,
    /// Where the code cache's blocks were when the translations were
    /// made, which hold the addresses of their counts.
    blocks: *const Block,
    /// The code cache's flush count when the translations were made:
    /// after a flush no block holds one.
    flushes: u64,
}

impl Jit {
    /// A translator, or `None` on a host that does not translate or
    /// where executable memory cannot be had.
    pub fn new() -> Option<Jit> {
        #[cfg(target_arch = "x86_64")]
        {
            Some(Jit {
                arena: arena::Arena::new(ARENA_BYTES).ok()?,
                float_ops: Vec::new(),
                jumps: Box::new([Jump::EMPTY; JUMPS]),
                wants: ClassSet::NONE,
                runs: false,
                blocks: std::ptr::null(),
                flushes: 0,
            })
        }
        #[cfg(not(target_arch = "x86_64"))]
        None
    }

    /// Called as a run of blocks begins, with the classes whose events it
    /// builds (nothing when it builds none) and whether it takes runs of
    /// blocks: the translations made before are dropped. A forked child
    /// that runs unobserved goes on with its parent's blocks, whose
    /// translations wrote the parent's events and runs.
    pub fn begin_run(&mut self, code: &mut CodeCache, wants: ClassSet, runs: bool) {
        // Every run starts a new table of blocks for its runs, whose ids
        // the translations hold.
        self.forget(code);
        self.wants = wants;
        self.runs = runs;
    }

    /// Translates block `bi` of `code` for a run that builds events of
    /// `wants` (nothing when the run builds none), setting its
    /// [`Block::jit`].
    #[cold]
    #[inline(never)]
    pub fn translate(&mut self, code: &mut CodeCache, bi: usize, wants: ClassSet) {
        #[cfg(target_arch = "x86_64")]
        {
            debug_assert_eq!(self.wants, wants, "Jit::begin_run first");
            if self.flushes != code.flushes {
                // No block holds a translation after a flush.
                self.clear();
                self.flushes = code.flushes;
            }
            if !self.fits(code) {
                self.forget(code);
            }
            let block = &mut code.blocks[bi];
            let chain = x86::Chain {
                idx: bi as u32,
                count: &mut block.count,
                run: (self.runs && block.run_id != crate::code::NO_RUN_ID).then_some(
                    coprof_core::Run {
                        block: block.run_id,
                        len: block.ops.len() as u32,
                    },
                ),
                events: !wants.is_empty(),
                jumps: self.jumps.as_ptr(),
            };
            if self.runs && chain.run.is_none() {
                // Not in the run's table yet: translated once it is.
                return;
            }
            let Some(t) = x86::assemble(&block.ops, wants, &chain, &mut self.float_ops) else {
                block.jit = UNTRANSLATABLE;
                return;
            };
            let at = match self.arena.add(&t) {
                Some(at) => at,
                None => {
                    // The arena is full.
                    self.forget(code);
                    match self.arena.add(&t) {
                        Some(at) => at,
                        None => {
                            code.blocks[bi].jit = UNTRANSLATABLE;
                            return;
                        }
                    }
                }
            };
            code.blocks[bi].jit = at;
        }
        #[cfg(not(target_arch = "x86_64"))]
        {
            let _ = wants;
            code.blocks[bi].jit = UNTRANSLATABLE;
        }
    }

    /// Drops every translation: a run begins, `code`'s blocks moved, or
    /// the arena is full.
    #[cold]
    pub fn forget(&mut self, code: &mut CodeCache) {
        for b in code.blocks.iter_mut() {
            b.jit = NOT_TRANSLATED;
        }
        #[cfg(target_arch = "x86_64")]
        self.clear();
        self.blocks = code.blocks.as_ptr();
    }

    /// Empties the arena, and drops what only its translations used.
    #[cfg(target_arch = "x86_64")]
    fn clear(&mut self) {
        self.arena.clear();
        self.float_ops.clear();
        self.jumps.fill(Jump::EMPTY);
    }

    /// Whether the translations are still good for `code`'s blocks: not
    /// when the blocks moved (a larger table), since translations hold
    /// the addresses of their counts.
    #[inline(always)]
    pub fn fits(&self, code: &CodeCache) -> bool {
        self.blocks == code.blocks.as_ptr()
    }

    /// Runs block `bi`, translated, and the translated blocks linked
    /// after it, as [`exec_block`] would one after the other: the
    /// translations first, then the interpreter from the op where the
    /// last one stopped, if it did not reach its end. Returns the index
    /// of the block run last and how it stopped; `cpu.instret` counts
    /// the blocks before it. With `EV`, events go to `ev`, in the
    /// batches the interpreter would give (a block that might fill the
    /// batch is interpreted), and with `RUNS` each linked block's run;
    /// `check` is the count at which the loop must look.
    #[inline(always)]
    pub(crate) fn run<const EV: bool, const RUNS: bool>(
        &self,
        code: &mut CodeCache,
        bi: usize,
        cpu: &mut Cpu,
        mem: &mut Memory,
        ev: &mut Events,
        check: u64,
    ) -> (usize, Stop) {
        let block = &code.blocks[bi];
        let (slot, ev_end) = if EV {
            match ev.room_for(block.ops.len()) {
                Some(room) => room,
                None => return (bi, exec_block::<EV>(cpu, mem, &block.ops, ev)),
            }
        } else {
            (std::ptr::null_mut(), std::ptr::null_mut())
        };
        let (runs, runs_len, runs_cap) = if RUNS {
            ev.runs_raw()
        } else {
            (std::ptr::null_mut(), 0, 0)
        };
        let (base, perms) = mem.raw_parts();
        let budget = check.saturating_sub(cpu.instret);
        let hart: *mut Cpu = &mut *cpu;
        let mut ctx = Ctx {
            // SAFETY: `cpu` is a live, unique borrow; the translation and
            // the ops it hands on use it only while this call lasts.
            x: unsafe { std::ptr::addr_of_mut!((*hart).x) }.cast::<u64>(),
            base,
            perms,
            ev: slot,
            pc: 0,
            budget,
            bi: bi as u32,
            _pad: 0,
            runs,
            runs_len,
            runs_cap,
            ev_end,
            cpu: hart,
        };
        let ret = self.call(block.jit, &mut ctx);
        if EV {
            // SAFETY: the translations wrote events from `slot` up to
            // `ctx.ev`, within the room `room_for` gave.
            unsafe { ev.filled_to(ctx.ev) };
        }
        if RUNS {
            // SAFETY: the translations added whole runs within the batch.
            unsafe { ev.set_runs_len(ctx.runs_len as usize) };
        }
        // The blocks before the last ran whole.
        cpu.instret += budget - ctx.budget;
        let last = ctx.bi as usize;
        let ops = &code.blocks[last].ops;
        let done = if ret == NOT_ENTERED as usize {
            ops.len()
        } else {
            ret
        };
        if done == ops.len() {
            cpu.pc = ctx.pc;
            return (last, Stop::Next);
        }
        // The interpreter from op `done`: a CSR read of `instret` there
        // must count the ops before it.
        cpu.instret += done as u64;
        let stop = exec_block::<EV>(cpu, mem, &ops[done..], ev);
        cpu.instret -= done as u64;
        (last, stop.after(done))
    }

    /// Links the exit of block `from` that went to block `to`, at `pc`,
    /// both translated, to `to`'s translation: way 0 (a branch taken or
    /// a `jal`) or 1 (falling through) by `pc`, or, for a block that ends
    /// in a `jalr`, its one way for that target, checked each time
    /// (another target goes back to the loop, which links it instead).
    #[inline]
    pub fn link(&mut self, code: &CodeCache, from: usize, to: usize, pc: u64) {
        #[cfg(target_arch = "x86_64")]
        {
            let block = &code.blocks[from];
            let (from, to) = (block.jit, code.blocks[to].jit);
            if block
                .ops
                .last()
                .is_some_and(|op| op.kind == crate::op::Kind::Jalr)
            {
                self.arena.link_target(from, to, pc);
                self.jumps[jump_slot(pc)] = Jump {
                    pc,
                    entry: self.arena.entry(to),
                };
            } else {
                self.arena.link(from, block.way_to(pc), to);
            }
        }
        #[cfg(not(target_arch = "x86_64"))]
        let _ = (code, from, to, pc);
    }

    #[cfg(target_arch = "x86_64")]
    #[inline(always)]
    fn call(&self, at: u32, ctx: &mut Ctx) -> usize {
        type Entry = unsafe extern "sysv64" fn(*mut Ctx) -> u32;
        // SAFETY: `at` is the offset of a translation `x86::assemble`
        // made, for this arena (offsets are dropped with it), which
        // follows the System V calling convention; `ctx` points at live
        // registers, memory and event room.
        unsafe {
            let entry: Entry = std::mem::transmute(self.arena.at(at).add(HEADER));
            entry(ctx) as usize
        }
    }

    #[cfg(not(target_arch = "x86_64"))]
    fn call(&self, _at: u32, _ctx: &mut Ctx) -> usize {
        unreachable!("no translations on this host")
    }
}
