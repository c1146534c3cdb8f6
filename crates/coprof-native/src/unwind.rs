//! Each sample's call stack, unwound from the call frame information
//! (CFI) in the `.eh_frame` of the files the process runs: the tables
//! that C++'s exception unwinder reads, which gcc and clang write for C
//! too on x86-64 (`-fasynchronous-unwind-tables` is the default there).
//! This is how `perf record --call-graph dwarf` and gdb unwind code built
//! without frame pointers, and it needs none. A file without `.eh_frame`
//! is read for its `.debug_frame`, the same tables in DWARF's own
//! section: Go's linker writes only that one (compressed).
//!
//! At a sample the thread is stopped, so its registers and stack can be
//! read as they are. For each frame, from the interrupted PC out, the CFI
//! row of its PC says where its caller's frame begins (the canonical frame
//! address, CFA: a register plus an offset), where the return address
//! and the callee-saved registers were saved, and where its function
//! starts (the FDE's first address: the called function's entry). The
//! return address then gives the caller's PC and, decoded back over the
//! bytes before it, its call instruction. A frame after the first is
//! looked up at its return address less one, which is inside the call,
//! since a call to a function that does not return may be the last
//! instruction of its function.
//!
//! Code no CFI covers (code made at run time, a JIT's; a file without
//! either section) is unwound as a frame that keeps a frame pointer, as
//! most JITs' do: the caller's return address just above the saved
//! `rbp`. That guess is kept only while it leads to code.
//!
//! The unwinding ends at a frame whose CFI says its return address is
//! undefined: a thread's first frame (`_start`, glibc's `clone3`). It
//! stops early (a stack that starts where it stopped, as perf's do)
//! where neither CFI nor a frame pointer leads on, at memory that cannot
//! be read, at a DWARF expression that asks for more than registers and
//! memory, and after [`MAX_FRAMES`] frames. Rules given by DWARF
//! expressions (the PLT's, and those of functions that realign their
//! stack, whose CFA is read from their frame) are evaluated with the
//! frame's registers.
//!
//! A signal handler returns to a trampoline (glibc's `__restore_rt`)
//! whose CFI, marked as a signal frame, restores every register of the
//! interrupted code from the signal's context on the stack. The
//! unwinding goes on through it: the interrupted PC is where the code
//! stopped, not after a call, so it is looked up as it is, and stands
//! for its own call site; a stack unwound in a handler holds the
//! trampoline's frame between the handler and the code it interrupted,
//! as gdb's `<signal handler called>`.
//!
//! The CFI of a file is indexed once per run and shared by the processes
//! that map it; each row is worked out once per PC a process samples,
//! and kept.

use crate::modules::Mapping;
use crate::seen_maps::SeenMaps;
use coprof_core::OpenCall;
use gimli::{
    BaseAddresses, CfaRule, CieOrFde, DebugFrame, EhFrame, Encoding, EndianSlice, EvaluationResult,
    Expression, Format, LittleEndian, Location, Piece, Register, RegisterRule, UnwindContext,
    UnwindOffset, UnwindSection, Value, X86_64,
};
use iced_x86::{Decoder, DecoderOptions, FlowControl};
use object::read::elf::{ElfFile64, ProgramHeader};
use object::{Endianness, Object, ObjectSection};
use rustc_hash::FxHashMap;
use std::collections::HashMap;
use std::path::PathBuf;
use std::rc::Rc;

/// Frames unwound at most: perf's default (`kernel.perf_event_max_stack`
/// is 127).
pub const MAX_FRAMES: usize = 127;

/// The DWARF numbers of x86-64's registers that a callee saves, which
/// are all a caller's frame is known by besides its stack pointer and PC:
/// rbx, rbp, r12 to r15.
const CALLEE_SAVED: [u16; 6] = [3, 6, 12, 13, 14, 15];
/// Registers tracked: the sixteen general ones and the return address.
const REGS: usize = 17;
const RBP: usize = 6;
const RSP: usize = 7;
const RA: usize = 16;

/// The registers of a frame, by DWARF number; `None` where unknown.
type Frame = [Option<u64>; REGS];

/// The frames below a sample's innermost frame pointer
/// ([`Unwinder::below_frame_pointer`]).
struct Below {
    /// Their return addresses, innermost first.
    returns: Vec<u64>,
    /// Whether the kernel's walk of the frame pointers goes on from
    /// them; not past a signal's trampoline.
    walk: bool,
}

/// The frame of a sample whose registers are `regs`.
fn frame_of(regs: &libc::user_regs_struct) -> Frame {
    [
        Some(regs.rax),
        Some(regs.rdx),
        Some(regs.rcx),
        Some(regs.rbx),
        Some(regs.rsi),
        Some(regs.rdi),
        Some(regs.rbp),
        Some(regs.rsp),
        Some(regs.r8),
        Some(regs.r9),
        Some(regs.r10),
        Some(regs.r11),
        Some(regs.r12),
        Some(regs.r13),
        Some(regs.r14),
        Some(regs.r15),
        Some(regs.rip),
    ]
}

/// The CFI of every file seen, shared by the processes that map it.
#[derive(Default)]
pub(crate) struct Unwinder {
    files: HashMap<PathBuf, Option<Rc<Cfi>>>,
    ctx: Box<UnwindContext<usize>>,
    /// Pages of the stack read for the sample being unwound.
    pages: Vec<(u64, Box<[u8; PAGE]>, usize)>,
    /// Pages read for samples before, kept to be read into again rather
    /// than allocated and zeroed anew at each sample.
    spare: Vec<Box<[u8; PAGE]>>,
    /// Whether the stack being unwound is read a word at a time: a copy
    /// in this process's memory ([`Unwinder::stack_of_copy`]), which a
    /// page at a time would only copy again.
    by_word: bool,
}

/// What is known of one process's address space: its mappings, and for
/// the unwinder where each file with CFI lies, and each PC's row, as it
/// is worked out.
#[derive(Default)]
pub(crate) struct Space {
    /// Its mappings, as last read, and every one seen.
    pub(crate) maps: SeenMaps,
    regions: Vec<Region>,
    /// The generation of the mappings the regions were made from, to
    /// make them again only when the files change.
    regions_of: u64,
    /// Each PC's rule, shared rather than copied at each lookup.
    rules: FxHashMap<u64, Option<Rc<Rule>>>,
    /// The call before each return address, where one ends there.
    call_sites: FxHashMap<u64, Option<u64>>,
}

impl Space {
    /// Forgets what it knew: the process ran a new program (`execve`).
    pub(crate) fn clear(&mut self) {
        *self = Space::default();
    }
}

/// A file's code at the process's addresses.
struct Region {
    start: u64,
    end: u64,
    bias: u64,
    cfi: Rc<Cfi>,
}

/// One file's `.eh_frame` (or `.debug_frame`), with its FDEs by address.
struct Cfi {
    data: Vec<u8>,
    /// The section's address in the file, which its pointers are
    /// relative to.
    addr: u64,
    /// Whether it is a `.debug_frame`, whose addresses are absolute.
    debug: bool,
    /// Each FDE's first and last-plus-one address, in the file, and its
    /// offset in the section; by address.
    fdes: Vec<(u64, u64, usize)>,
}

/// A PC's CFI row, reduced to what unwinding x86-64 needs.
#[derive(Clone, Debug)]
struct Rule {
    /// The entry of the function the PC is in, at the process's address.
    entry: u64,
    /// A signal handler's return trampoline (the CIE's `S`), whose CFI
    /// restores every register of the interrupted frame from the
    /// signal's context.
    signal: bool,
    /// A frame pointer's rule, guessed where no CFI says
    /// ([`Space::frame_pointer_rule`]).
    frame_pointer: bool,
    /// The CFA: a register's value plus an offset, or an expression's
    /// value; `None` for a rule this unwinder does not follow.
    cfa: Option<Cfa>,
    ra: Saved,
    /// Registers the frame's CFI gives a rule for, and where their values
    /// are; callee-saved registers without one are the caller's, and
    /// others unknown.
    saved: Vec<(u16, Saved)>,
}

/// How a frame's CFA is found.
#[derive(Clone, Debug)]
enum Cfa {
    /// A register's value plus an offset.
    Register(u16, i64),
    /// The value of a DWARF expression (its bytes) over the frame's
    /// registers and memory.
    Expression(Vec<u8>),
}

/// Where a register's value in the caller's frame is.
#[derive(Clone, Debug)]
enum Saved {
    /// In memory at the CFA plus this.
    At(i64),
    /// The CFA plus this.
    Is(i64),
    /// In this register.
    In(u16),
    /// In memory at the address a DWARF expression gives, the CFA
    /// pushed first.
    AtExpression(Vec<u8>),
    /// The value of a DWARF expression, the CFA pushed first.
    IsExpression(Vec<u8>),
    /// Undefined: for the return address, the thread's first frame.
    Undefined,
    /// By a rule this unwinder does not follow (another register than
    /// the sixteen, an architectural rule, an expression that cannot be
    /// read).
    Unknown,
}

impl Unwinder {
    /// The calls open in process `pid` at a sample whose registers are
    /// `regs`, outermost first, reading its memory with `read` (as
    /// `process_vm_readv` does: the bytes read); `space` is what is known
    /// of its addresses. With them, whether they reach the thread's first
    /// frame.
    pub(crate) fn stack(
        &mut self,
        space: &mut Space,
        pid: i32,
        regs: &libc::user_regs_struct,
        read: &mut dyn FnMut(u64, &mut [u8]) -> usize,
    ) -> (Vec<OpenCall>, bool) {
        let spare = &mut self.spare;
        spare.extend(self.pages.drain(..).map(|(_, bytes, _)| bytes));
        // The mappings may have been read again since (a PC the sampler
        // found in no code).
        self.make_regions(space, read);
        let mut frame = frame_of(regs);
        let mut calls = Vec::new();
        let mut whole = false;
        let Some(mut rule) = self.frame_rule(space, pid, regs.rip, read) else {
            return (calls, whole);
        };
        while let Some(caller) = self.caller(&rule, &frame, read) {
            let (Some(ra), Some(sp)) = (caller[RA], caller[RSP]) else {
                // The thread's first frame.
                whole = true;
                break;
            };
            if ra == 0 {
                whole = true;
                break;
            }
            // A frame pointer's guess is kept only where it leads to code.
            if rule.frame_pointer && space.maps.mapping(ra).is_none_or(|(_, x)| !x) {
                break;
            }
            // A signal frame's return address is the interrupted
            // instruction itself, not the one after a call: it is looked
            // up there, and stands for its own call site. So does the
            // handler's, the signal frame's first instruction.
            let lookup = match rule.signal {
                true => ra,
                false => ra - 1,
            };
            let next = self.frame_rule(space, pid, lookup, read);
            let call_site = match rule.signal || next.as_ref().is_some_and(|n| n.signal) {
                true => ra,
                false => self.call_site(space, ra, read),
            };
            calls.push(OpenCall {
                call_site,
                target: rule.entry,
            });
            // The stack grows down: a caller's frame is above its
            // callee's, or the CFI has led astray; but a signal handler
            // may run on a stack of its own (`sigaltstack`).
            if calls.len() == MAX_FRAMES || (!rule.signal && sp <= frame[RSP].unwrap_or(0)) {
                break;
            }
            let Some(next) = next else {
                break;
            };
            rule = next;
            frame = caller;
        }
        calls.reverse();
        (calls, whole)
    }

    /// The calls open in process `pid` at a sample whose frame pointers
    /// the kernel walked (`PERF_SAMPLE_CALLCHAIN`, as for `perf record
    /// --call-graph fp`), outermost first: `chain` holds the sample's PC,
    /// then the return address the kernel read above each frame pointer,
    /// innermost first. `read` reads the process's code, and the top of
    /// the stack the sample copied, from `regs` (the sample's registers,
    /// where the kernel had them) up; `space` is what is known of its
    /// addresses. With them, whether they reach the thread's first frame:
    /// one whose CFI leaves its return address undefined (`_start`'s, a
    /// thread's start's).
    ///
    /// The walk starts at the frame pointer, so the frames below it
    /// have no place in it: a function sampled before it has set its
    /// frame pointer up or after it has let it go, or that keeps none
    /// (most leaves GCC builds, even with `-fno-omit-frame-pointer`),
    /// would hide its caller, whose return address is the walk's first.
    /// Those frames are unwound by their CFI from the copy of the stack's
    /// top, up to the first frame found by its frame pointer, and put
    /// before the walk ([`Unwinder::below_frame_pointer`]); where the copy
    /// does not reach that far, the walk is taken as it is, as perf
    /// takes it.
    ///
    /// A return address is kept only where a call ends just before it:
    /// in code that keeps no frame pointer the register holds anything,
    /// and what the kernel read through it is no return address, so the
    /// stack stops there. The kernel's walk does not go through a signal
    /// handler's frame into the code it interrupted (the trampoline's
    /// frame keeps no frame pointer of that code's), so the stack stops
    /// at a trampoline too.
    pub(crate) fn stack_of_chain(
        &mut self,
        space: &mut Space,
        pid: i32,
        regs: Option<&libc::user_regs_struct>,
        chain: &[u64],
        read: &mut dyn FnMut(u64, &mut [u8]) -> usize,
    ) -> (Vec<OpenCall>, bool) {
        /// Outermost first.
        fn finish(mut calls: Vec<OpenCall>) -> Vec<OpenCall> {
            calls.reverse();
            calls
        }
        self.make_regions(space, read);
        let mut calls = Vec::new();
        let Some((&pc, walk)) = chain.split_first() else {
            return (calls, false);
        };
        // The frames below the frame pointer's, then the kernel's walk
        // from it, where it goes on from them.
        let below = regs
            .and_then(|regs| self.by_word(|this| this.below_frame_pointer(space, pid, regs, read)));
        let (below, walk) = match below {
            Some(Below {
                returns,
                walk: true,
            }) => (returns, walk),
            Some(Below {
                returns,
                walk: false,
            }) => (returns, &[][..]),
            None => (Vec::new(), walk),
        };
        let Some(mut rule) = self.frame_rule(space, pid, pc, read) else {
            return (calls, false);
        };
        for &ra in below.iter().chain(walk) {
            let Some(call_site) = Self::call_ending_at(space, ra, read) else {
                return (finish(calls), false);
            };
            let next = self.frame_rule(space, pid, ra - 1, read);
            let Some(next) = next.filter(|n| !n.signal && !rule.signal) else {
                return (finish(calls), false);
            };
            calls.push(OpenCall {
                call_site,
                target: rule.entry,
            });
            rule = next;
        }
        let whole = matches!(rule.ra, Saved::Undefined) && !rule.frame_pointer;
        (finish(calls), whole)
    }

    /// The frames of a sample whose registers are `regs` that lie below
    /// its innermost frame pointer's, unwound by their CFI: none where the
    /// sampled function's frame is the frame pointer's; `None` where the
    /// frames cannot be unwound as far as it. The frame pointer's frame
    /// is the one whose CFI saves its caller's frame pointer where `rbp`
    /// points, as the kernel's walk takes it, whether its CFA lies just
    /// above (the return address and the caller's frame pointer pushed in
    /// turn) or elsewhere (a frame that realigns its stack). A signal's
    /// trampoline below it ends the stack: `rbp` is then the interrupted
    /// code's, and the walk from it leads past that code's own frame.
    fn below_frame_pointer(
        &mut self,
        space: &mut Space,
        pid: i32,
        regs: &libc::user_regs_struct,
        read: &mut dyn FnMut(u64, &mut [u8]) -> usize,
    ) -> Option<Below> {
        /// Frames a function that keeps no frame pointer may be called
        /// through, at most, before the one found is taken as no frame's.
        const MOST: usize = 8;
        let mut frame = frame_of(regs);
        let mut rule = self.frame_rule(space, pid, regs.rip, read)?;
        let mut below = Vec::new();
        loop {
            let cfa = self.cfa(&rule, &frame, read)?;
            let rbp_at = rule.saved.iter().find(|(r, _)| *r as usize == RBP);
            let rbp_at = match rbp_at.map(|(_, saved)| saved) {
                Some(Saved::At(n)) => Some(cfa.wrapping_add_signed(*n)),
                Some(Saved::AtExpression(expr)) => self.evaluate(expr, &frame, Some(cfa), read),
                _ => None,
            };
            if rbp_at == Some(regs.rbp) {
                break;
            }
            if rule.signal {
                return Some(Below {
                    returns: below,
                    walk: false,
                });
            }
            if below.len() == MOST {
                return None;
            }
            let caller = self.caller(&rule, &frame, read)?;
            // A function's frame pointer is the caller's until it sets
            // its own: a frame below it leaves it as it was.
            let ra = caller[RA].filter(|&ra| ra != 0 && caller[RBP] == Some(regs.rbp))?;
            below.push(ra);
            rule = self.frame_rule(space, pid, ra - 1, read)?;
            frame = caller;
        }
        Some(Below {
            returns: below,
            walk: true,
        })
    }

    /// As [`stack`](Self::stack), for a stack `read` reads from a copy in
    /// this process's memory, a word at a time.
    pub(crate) fn stack_of_copy(
        &mut self,
        space: &mut Space,
        pid: i32,
        regs: &libc::user_regs_struct,
        read: &mut dyn FnMut(u64, &mut [u8]) -> usize,
    ) -> (Vec<OpenCall>, bool) {
        self.by_word(|this| this.stack(space, pid, regs, read))
    }

    /// `unwind` with the stack read a word at a time (the `by_word`
    /// field): for a stack copied into this process's memory.
    fn by_word<T>(&mut self, unwind: impl FnOnce(&mut Self) -> T) -> T {
        self.by_word = true;
        let unwound = unwind(self);
        self.by_word = false;
        unwound
    }

    /// The caller's registers, by `rule` from the callee's `frame`: its
    /// stack pointer is the CFA, its PC the return address; `None` when
    /// they cannot be known. A frame whose return address is undefined
    /// gives registers without one.
    fn caller(
        &mut self,
        rule: &Rule,
        frame: &Frame,
        read: &mut dyn FnMut(u64, &mut [u8]) -> usize,
    ) -> Option<Frame> {
        let cfa = self.cfa(rule, frame, read)?;
        let mut caller: Frame = [None; REGS];
        for r in CALLEE_SAVED {
            caller[r as usize] = frame[r as usize];
        }
        let mut value = |saved: &Saved| -> Option<Option<u64>> {
            Some(match *saved {
                Saved::At(n) => Some(self.word(cfa.wrapping_add_signed(n), read)?),
                Saved::Is(n) => Some(cfa.wrapping_add_signed(n)),
                Saved::In(r) => frame.get(r as usize).copied().flatten(),
                Saved::AtExpression(ref expr) => {
                    let at = self.evaluate(expr, frame, Some(cfa), read)?;
                    Some(self.word(at, read)?)
                }
                Saved::IsExpression(ref expr) => {
                    Some(self.evaluate(expr, frame, Some(cfa), read)?)
                }
                Saved::Undefined | Saved::Unknown => None,
            })
        };
        for (r, saved) in &rule.saved {
            caller[*r as usize] = value(saved).flatten();
        }
        caller[RSP] = Some(cfa);
        caller[RA] = match &rule.ra {
            Saved::Undefined => None,
            Saved::Unknown => return None,
            ra => Some(value(ra)??),
        };
        Some(caller)
    }

    /// The CFA of `frame`, by `rule`: the stack pointer of its caller.
    fn cfa(
        &mut self,
        rule: &Rule,
        frame: &Frame,
        read: &mut dyn FnMut(u64, &mut [u8]) -> usize,
    ) -> Option<u64> {
        Some(match rule.cfa.as_ref()? {
            &Cfa::Register(reg, offset) => frame
                .get(reg as usize)
                .copied()
                .flatten()?
                .wrapping_add_signed(offset),
            Cfa::Expression(expr) => self.evaluate(expr, frame, None, read)?,
        })
    }

    /// The value of the DWARF expression `expr` over `frame`'s registers
    /// and memory, with `initial` pushed first if given; `None` when it
    /// needs a register the frame does not know, memory that cannot be
    /// read, or anything else.
    fn evaluate(
        &mut self,
        expr: &[u8],
        frame: &Frame,
        initial: Option<u64>,
        read: &mut dyn FnMut(u64, &mut [u8]) -> usize,
    ) -> Option<u64> {
        let encoding = Encoding {
            address_size: 8,
            format: Format::Dwarf32,
            version: 4,
        };
        let mut eval = Expression(EndianSlice::new(expr, LittleEndian)).evaluation(encoding);
        if let Some(v) = initial {
            eval.set_initial_value(v);
        }
        let mut step = eval.evaluate().ok()?;
        // A bound on the questions one expression may ask.
        for _ in 0..64 {
            step = match step {
                EvaluationResult::Complete => {
                    return match eval.as_result() {
                        [Piece {
                            location: Location::Address { address },
                            ..
                        }] => Some(*address),
                        [Piece {
                            location: Location::Value { value },
                            ..
                        }] => value.to_u64(!0).ok(),
                        _ => None,
                    };
                }
                EvaluationResult::RequiresRegister { register, .. } => {
                    let v = frame.get(register.0 as usize).copied().flatten()?;
                    eval.resume_with_register(Value::Generic(v)).ok()?
                }
                EvaluationResult::RequiresMemory { address, size, .. } => {
                    let size = usize::from(size).min(8);
                    let v = if size == 8 {
                        self.word(address, read)?
                    } else {
                        let mut bytes = [0u8; 8];
                        (read(address, &mut bytes[..size]) == size).then_some(())?;
                        u64::from_le_bytes(bytes)
                    };
                    eval.resume_with_memory(Value::Generic(v)).ok()?
                }
                _ => return None,
            };
        }
        None
    }

    /// The 8 bytes at `addr` of the stack, read a page at a time (a word
    /// at a time from a copy).
    fn word(&mut self, addr: u64, read: &mut dyn FnMut(u64, &mut [u8]) -> usize) -> Option<u64> {
        let page = addr & !(PAGE as u64 - 1);
        let at = (addr - page) as usize;
        if at + 8 > PAGE || self.by_word {
            let mut bytes = [0u8; 8];
            return (read(addr, &mut bytes) == 8).then(|| u64::from_le_bytes(bytes));
        }
        let i = match self.pages.iter().position(|p| p.0 == page) {
            Some(i) => i,
            None => {
                // What a spare page held before is past `got`, never read.
                let mut bytes = self.spare.pop().unwrap_or_else(|| Box::new([0u8; PAGE]));
                let got = read(page, &mut bytes[..]);
                self.pages.push((page, bytes, got));
                self.pages.len() - 1
            }
        };
        let (_, bytes, got) = &self.pages[i];
        (at + 8 <= *got).then(|| u64::from_le_bytes(bytes[at..at + 8].try_into().unwrap()))
    }

    /// How the frame of `pc` is unwound: by its CFI, else as a frame that
    /// keeps a frame pointer ([`Space::frame_pointer_rule`]).
    fn frame_rule(
        &mut self,
        space: &mut Space,
        pid: i32,
        pc: u64,
        read: &mut dyn FnMut(u64, &mut [u8]) -> usize,
    ) -> Option<Rc<Rule>> {
        let rule = self.rule(space, pid, pc, read);
        rule.or_else(|| space.frame_pointer_rule(pc).map(Rc::new))
    }

    /// The row of `pc` in process `pid`, worked out once.
    fn rule(
        &mut self,
        space: &mut Space,
        pid: i32,
        pc: u64,
        read: &mut dyn FnMut(u64, &mut [u8]) -> usize,
    ) -> Option<Rc<Rule>> {
        if let Some(rule) = space.rules.get(&pc) {
            return rule.clone();
        }
        let mut region = space.region(pc);
        // A PC is code: where the mappings as last read do not say so, the
        // memory was mapped since (a library, code made at run time, even
        // in a gap of a file's range or where other memory was), and
        // they are read again at once. Where they say so but no file
        // holds it, now and then.
        let stale = space
            .maps
            .mapping(pc)
            .is_none_or(|(_, executable)| !executable);
        if stale || (region.is_none() && !space.maps.read_lately()) {
            space.maps.read(pid);
            self.make_regions(space, read);
            region = space.region(pc);
        }
        // A PC in no file known yet is looked up again later: its file
        // may be mapped since.
        let r = &space.regions[region?];
        let rule = (r.cfi.rule(&mut self.ctx, pc.wrapping_sub(r.bias), r.bias)).map(Rc::new);
        space.rules.insert(pc, rule.clone());
        rule
    }

    /// The process's regions, made again when its files have changed
    /// since they were made: each file with code and its CFI, and the
    /// vDSO's from its memory.
    fn make_regions(&mut self, space: &mut Space, read: &mut dyn FnMut(u64, &mut [u8]) -> usize) {
        if space.regions_of == space.maps.generation() {
            return;
        }
        space.regions_of = space.maps.generation();
        let mut regions = Vec::new();
        for m in space.maps.current() {
            let cfi = self
                .files
                .entry(m.path.clone())
                .or_insert_with(|| Cfi::of_file(&m.path).map(Rc::new));
            if let Some(cfi) = cfi {
                regions.push(Region {
                    start: m.start,
                    end: m.end,
                    bias: m.bias,
                    cfi: cfi.clone(),
                });
            }
        }
        if let Some(vdso) = space.maps.vdso() {
            regions.extend(vdso_region(vdso, read));
        }
        regions.sort_by_key(|r| r.start);
        space.regions = regions;
    }

    /// The call instruction that returns to `ra`: decoded back over the
    /// bytes before it, the longest call's length at most; `ra - 1`,
    /// inside it, when none ends there.
    fn call_site(
        &mut self,
        space: &mut Space,
        ra: u64,
        read: &mut dyn FnMut(u64, &mut [u8]) -> usize,
    ) -> u64 {
        Self::call_ending_at(space, ra, read).unwrap_or(ra - 1)
    }

    /// The call instruction that ends just before `ra`, if one does,
    /// found once for each `ra`.
    fn call_ending_at(
        space: &mut Space,
        ra: u64,
        read: &mut dyn FnMut(u64, &mut [u8]) -> usize,
    ) -> Option<u64> {
        *space
            .call_sites
            .entry(ra)
            .or_insert_with(|| call_before(ra, read))
    }
}

const PAGE: usize = 4096;

impl Space {
    /// For a PC in executable memory no CFI covers (code made at run
    /// time, a JIT's), the rule of a frame that keeps a frame pointer, as
    /// most JITs' frames do: the caller's frame begins 16 bytes above
    /// `rbp`, the return address below it and the caller's `rbp` at it.
    /// Its function is known by nothing, so it is the mapping's start.
    fn frame_pointer_rule(&self, pc: u64) -> Option<Rule> {
        let (start, executable) = self.maps.mapping(pc)?;
        executable.then(|| Rule {
            entry: start,
            signal: false,
            frame_pointer: true,
            cfa: Some(Cfa::Register(RBP as u16, 16)),
            ra: Saved::At(-8),
            saved: vec![(RBP as u16, Saved::At(-16))],
        })
    }

    /// The region holding `pc`, by position.
    fn region(&self, pc: u64) -> Option<usize> {
        let i = self.regions.partition_point(|r| r.start <= pc);
        (i > 0 && pc < self.regions[i - 1].end).then(|| i - 1)
    }
}

/// The vDSO's region, its CFI read from the process's memory (the kernel
/// maps the same image into every process, but its address is each's).
fn vdso_region(m: &Mapping, read: &mut dyn FnMut(u64, &mut [u8]) -> usize) -> Option<Region> {
    let len = usize::try_from(m.end - m.start)
        .ok()
        .filter(|&n| n <= 1 << 20)?;
    let mut image = vec![0u8; len];
    if read(m.start, &mut image) != len {
        return None;
    }
    let elf = ElfFile64::<Endianness>::parse(&*image).ok()?;
    let e = elf.endian();
    let first = (elf.elf_program_headers().iter())
        .find(|h| h.p_type(e) == object::elf::PT_LOAD && h.p_offset(e) == 0)?;
    let bias = m.start.wrapping_sub(first.p_vaddr(e));
    Some(Region {
        start: m.start,
        end: m.end,
        bias,
        cfi: Rc::new(Cfi::of_elf(&image)?),
    })
}

/// The call instruction that ends just before `ra`, if one does: tried
/// at each length a call can have, the commonest (a 5-byte direct call)
/// first.
fn call_before(ra: u64, read: &mut dyn FnMut(u64, &mut [u8]) -> usize) -> Option<u64> {
    const LONGEST: usize = 15;
    let mut code = [0u8; LONGEST];
    let start = ra.checked_sub(LONGEST as u64)?;
    if read(start, &mut code) != LONGEST {
        return None;
    }
    [5, 2, 3, 6, 7, 4, 8, 9, 10, 11, 12, 13, 14, 15]
        .into_iter()
        .find(|&len| {
            let at = ra - len as u64;
            let mut d = Decoder::with_ip(64, &code[LONGEST - len..], at, DecoderOptions::NONE);
            let i = d.decode();
            !i.is_invalid()
                && i.len() == len
                && matches!(
                    i.flow_control(),
                    FlowControl::Call | FlowControl::IndirectCall
                )
        })
        .map(|len| ra - len as u64)
}

impl Cfi {
    /// The CFI of the ELF file at `path`, if it has any.
    fn of_file(path: &std::path::Path) -> Option<Cfi> {
        Cfi::of_elf(&std::fs::read(path).ok()?)
    }

    /// The CFI of the ELF image `data`, indexed: its `.eh_frame`, else its
    /// `.debug_frame` (Go's linker writes only that one).
    fn of_elf(data: &[u8]) -> Option<Cfi> {
        let elf = ElfFile64::<Endianness>::parse(data).ok()?;
        let (section, debug) = match elf.section_by_name(".eh_frame") {
            Some(s) => (s, false),
            None => (elf.section_by_name(".debug_frame")?, true),
        };
        let mut cfi = Cfi {
            data: section.uncompressed_data().ok()?.into_owned(),
            addr: section.address(),
            debug,
            fdes: Vec::new(),
        };
        cfi.fdes = match debug {
            false => fdes(&EhFrame::new(&cfi.data, LittleEndian), &cfi.bases()),
            true => fdes(&cfi.debug_frame(), &cfi.bases()),
        };
        Some(cfi)
    }

    fn bases(&self) -> BaseAddresses {
        BaseAddresses::default().set_eh_frame(self.addr)
    }

    fn debug_frame(&self) -> DebugFrame<EndianSlice<'_, LittleEndian>> {
        let mut section = DebugFrame::new(&self.data, LittleEndian);
        section.set_address_size(8);
        section
    }

    /// The row of the file's address `pc`, with the function's entry at
    /// the process's address (the file's plus `bias`).
    fn rule(&self, ctx: &mut UnwindContext<usize>, pc: u64, bias: u64) -> Option<Rule> {
        let i = self.fdes.partition_point(|f| f.0 <= pc);
        let &(start, end, offset) = self.fdes.get(i.checked_sub(1)?)?;
        if pc >= end {
            return None;
        }
        let mut rule = match self.debug {
            false => row(
                &EhFrame::new(&self.data, LittleEndian),
                &self.bases(),
                ctx,
                offset,
                pc,
            ),
            true => row(&self.debug_frame(), &self.bases(), ctx, offset, pc),
        }?;
        rule.entry = start.wrapping_add(bias);
        Some(rule)
    }
}

/// Each FDE of `section`: its first and last-plus-one address, and its
/// offset; by address. Entries past one that does not parse are left
/// out.
fn fdes<'a, S>(section: &S, bases: &BaseAddresses) -> Vec<(u64, u64, usize)>
where
    S: UnwindSection<EndianSlice<'a, LittleEndian>>,
    S::Offset: UnwindOffset<usize>,
{
    let mut out = Vec::new();
    let mut entries = section.entries(bases);
    while let Ok(Some(entry)) = entries.next() {
        let CieOrFde::Fde(partial) = entry else {
            continue;
        };
        if let Ok(fde) = partial.parse(|s, b, o| s.cie_from_offset(b, o)) {
            let start = fde.initial_address();
            out.push((start, start.saturating_add(fde.len()), fde.offset()));
        }
    }
    out.sort_unstable();
    out
}

/// The row of `pc` in the FDE at `offset` of `section`, reduced to a
/// [`Rule`] (its entry left for the caller to set).
fn row<'a, S>(
    section: &S,
    bases: &BaseAddresses,
    ctx: &mut UnwindContext<usize>,
    offset: usize,
    pc: u64,
) -> Option<Rule>
where
    S: UnwindSection<EndianSlice<'a, LittleEndian>>,
    S::Offset: UnwindOffset<usize>,
{
    let fde = section
        .fde_from_offset(bases, S::Offset::from(offset), |s, b, o| {
            s.cie_from_offset(b, o)
        })
        .ok()?;
    let row = fde.unwind_info_for_address(section, bases, ctx, pc).ok()?;
    let bytes = |e: &gimli::UnwindExpression<usize>| -> Option<Vec<u8>> {
        Some(e.get(section).ok()?.0.to_vec())
    };
    let cfa = match row.cfa() {
        &CfaRule::RegisterAndOffset { register, offset } => {
            Some(Cfa::Register(register.0, offset)).filter(|_| (register.0 as usize) < REGS)
        }
        CfaRule::Expression(e) => bytes(e).map(Cfa::Expression),
    };
    let saved_by = |rule: RegisterRule<usize>| match rule {
        RegisterRule::Offset(n) => Saved::At(n),
        RegisterRule::ValOffset(n) => Saved::Is(n),
        RegisterRule::Register(Register(r)) if (r as usize) < REGS => Saved::In(r),
        RegisterRule::Expression(e) => bytes(&e).map_or(Saved::Unknown, Saved::AtExpression),
        RegisterRule::ValExpression(e) => bytes(&e).map_or(Saved::Unknown, Saved::IsExpression),
        RegisterRule::Undefined => Saved::Undefined,
        _ => Saved::Unknown,
    };
    let saved = (0..RSP as u16)
        .chain(RSP as u16 + 1..RA as u16)
        .filter_map(|r| match row.register(Register(r)) {
            // Not in the row, or said unchanged: the caller's own.
            RegisterRule::Undefined | RegisterRule::SameValue => None,
            rule => Some((r, saved_by(rule))),
        })
        .collect();
    Some(Rule {
        entry: 0,
        signal: fde.is_signal_trampoline(),
        frame_pointer: false,
        cfa,
        ra: saved_by(row.register(X86_64::RA)),
        saved,
    })
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use std::ffi::c_void;

    #[test]
    fn a_call_is_found_before_its_return_address_at_each_length() {
        // At 0x1000: a 5-byte direct call, a 2-byte `call rax`, a 6-byte
        // `call [rip+0]`, and then `add eax, 1`, which is not a call.
        let code: [u8; 16] = [
            0xe8, 0x10, 0, 0, 0, // call rel32
            0xff, 0xd0, // call rax
            0xff, 0x15, 0, 0, 0, 0, // call [rip]
            0x83, 0xc0, 0x01, // add eax, 1
        ];
        let mut read = |addr: u64, out: &mut [u8]| {
            // Code at 0x1000, zeros (`add [rax], al`) before it.
            for (i, b) in out.iter_mut().enumerate() {
                let a = addr + i as u64;
                *b = match a.checked_sub(0x1000) {
                    Some(o) if (o as usize) < code.len() => code[o as usize],
                    _ => 0,
                };
            }
            out.len()
        };
        assert_eq!(call_before(0x1005, &mut read), Some(0x1000));
        assert_eq!(call_before(0x1007, &mut read), Some(0x1005));
        assert_eq!(call_before(0x100d, &mut read), Some(0x1007));
        assert_eq!(call_before(0x1010, &mut read), None, "after an add");
        // Memory that cannot be read gives none either.
        assert_eq!(call_before(0x1005, &mut |_, _: &mut [u8]| 0), None);
    }

    // libgcc's unwinder, which Rust's standard library links: an
    // unwinder written apart from this one, over the same CFI.
    extern "C" {
        fn _Unwind_Backtrace(
            trace: extern "C" fn(*mut c_void, *mut c_void) -> i32,
            arg: *mut c_void,
        ) -> i32;
        fn _Unwind_GetIP(ctx: *mut c_void) -> usize;
        fn _Unwind_FindEnclosingFunction(pc: *mut c_void) -> *mut c_void;
    }

    extern "C" fn each_frame(ctx: *mut c_void, arg: *mut c_void) -> i32 {
        // SAFETY: the context libgcc passes, and the Vec `arg` points to.
        let (ip, frames) = unsafe { (_Unwind_GetIP(ctx), &mut *(arg as *mut Vec<u64>)) };
        if ip == 0 {
            // Past the thread's first frame: the end (_URC_END_OF_STACK).
            return 5;
        }
        // Each frame's IP is where it goes on: its function's is one
        // byte back.
        let entry = unsafe { _Unwind_FindEnclosingFunction((ip - 1) as *mut c_void) };
        frames.push(entry as u64);
        0
    }

    /// The entries of the functions on this thread's stack, innermost
    /// (the caller of this one) first, by libgcc.
    #[inline(never)]
    fn libgcc_entries() -> Vec<u64> {
        let mut frames: Vec<u64> = Vec::new();
        // SAFETY: the callback writes into `frames` alone.
        unsafe { _Unwind_Backtrace(each_frame, &mut frames as *mut Vec<u64> as *mut c_void) };
        frames.remove(0);
        frames
    }

    /// This thread's registers here, as a sample would read them.
    #[inline(always)]
    pub(crate) fn registers() -> libc::user_regs_struct {
        // SAFETY: a plain struct of integers.
        let mut r: libc::user_regs_struct = unsafe { std::mem::zeroed() };
        // SAFETY: reads registers into locals, writes nothing else.
        unsafe {
            std::arch::asm!(
                "lea {rip}, [rip]",
                "mov {rsp}, rsp",
                "mov {rbp}, rbp",
                "mov {rbx}, rbx",
                "mov {r12}, r12",
                "mov {r13}, r13",
                "mov {r14}, r14",
                "mov {r15}, r15",
                rip = out(reg) r.rip,
                rsp = out(reg) r.rsp,
                rbp = out(reg) r.rbp,
                rbx = out(reg) r.rbx,
                r12 = out(reg) r.r12,
                r13 = out(reg) r.r13,
                r14 = out(reg) r.r14,
                r15 = out(reg) r.r15,
            );
        }
        r
    }

    #[inline(never)]
    fn innermost(depth: u32) -> (Vec<OpenCall>, bool, Vec<u64>) {
        if depth > 0 {
            let got = innermost(std::hint::black_box(depth - 1));
            return std::hint::black_box(got);
        }
        let regs = registers();
        let pid = std::process::id() as i32;
        let mut read = |addr, out: &mut [u8]| crate::tracer::read_memory(pid, addr, out);
        let (calls, whole) =
            Unwinder::default().stack(&mut Space::default(), pid, &regs, &mut read);
        (calls, whole, libgcc_entries())
    }

    #[test]
    fn a_threads_stack_unwinds_as_libgccs_unwinder_finds_it() {
        let (calls, whole, libgcc) = innermost(3);
        assert!(whole, "to the thread's first frame: {calls:x?}");
        // Each call's target, innermost first, is a frame's function,
        // as libgcc finds them; libgcc's outermost frame, the thread's
        // first, was called by none.
        let targets: Vec<u64> = calls.iter().rev().map(|c| c.target).collect();
        assert_eq!(targets, libgcc[..libgcc.len() - 1], "{calls:x?}");
        // The four frames of `innermost`, each called from the next.
        let here = innermost as *const () as u64;
        assert!(targets[..4].iter().all(|&t| t == here), "{targets:x?}");
        let sites: Vec<u64> = calls.iter().rev().map(|c| c.call_site).collect();
        assert_eq!(sites[0], sites[1], "the recursive call's site");
        assert!(sites[0] > here && sites[0] - here < 4096);
    }

    extern "C" fn each_ip(ctx: *mut c_void, arg: *mut c_void) -> i32 {
        // SAFETY: the context libgcc passes, and the Vec `arg` points to.
        let (ip, ips) = unsafe { (_Unwind_GetIP(ctx), &mut *(arg as *mut Vec<u64>)) };
        match ip {
            0 => 5,
            ip => {
                ips.push(ip as u64);
                0
            }
        }
    }

    /// This thread's registers in the fourth call of `chained` down, its
    /// stack as the unwinder finds it from them, and as a walk of frame
    /// pointers would give it: the PC and each frame's return address,
    /// as libgcc finds them.
    #[inline(never)]
    fn chained(depth: u32) -> (Vec<OpenCall>, bool, Vec<u64>) {
        if depth > 0 {
            return std::hint::black_box(chained(std::hint::black_box(depth - 1)));
        }
        let regs = registers();
        let pid = std::process::id() as i32;
        let mut read = |addr, out: &mut [u8]| crate::tracer::read_memory(pid, addr, out);
        let (calls, whole) =
            Unwinder::default().stack(&mut Space::default(), pid, &regs, &mut read);
        let mut ips: Vec<u64> = Vec::new();
        // SAFETY: the callback writes into `ips` alone.
        unsafe { _Unwind_Backtrace(each_ip, &mut ips as *mut Vec<u64> as *mut c_void) };
        // Its first: in this function, where `_Unwind_Backtrace` returns
        // to; in its place, the PC the registers were read at.
        ips[0] = regs.rip;
        (calls, whole, ips)
    }

    /// The frame pointers' walk of the stack, as the kernel gives it,
    /// names the same calls as the stack's CFI does, to the thread's
    /// first frame; a return address that follows no call (what a walk
    /// through code without frame pointers reads) ends it there.
    #[test]
    fn a_chain_of_return_addresses_gives_the_calls_the_cfi_does() {
        let (calls, whole, chain) = chained(3);
        assert!(whole, "{calls:x?}");
        let pid = std::process::id() as i32;
        let mut read = |addr, out: &mut [u8]| crate::tracer::read_memory(pid, addr, out);
        let mut unwinder = Unwinder::default();
        let mut space = Space::default();
        let got = unwinder.stack_of_chain(&mut space, pid, None, &chain, &mut read);
        assert_eq!(got, (calls.clone(), true), "{chain:x?}");
        // The chain cut after the three calls of `chained`: those three,
        // the outermost of them first, not whole.
        let three = calls[calls.len() - 3..].to_vec();
        let cut = unwinder.stack_of_chain(&mut space, pid, None, &chain[..4], &mut read);
        assert_eq!(cut, (three.clone(), false));
        // A word that is no return address in the fifth's place: the
        // same, whether it is a function's entry (after no call), an
        // address on the stack, or none.
        let entry = chained as *const () as u64;
        for bad in [entry, &chain as *const _ as u64, 0, 8, u64::MAX] {
            let mut astray = chain.clone();
            astray[4] = bad;
            let got = unwinder.stack_of_chain(&mut space, pid, None, &astray, &mut read);
            assert_eq!(got, (three.clone(), false), "{bad:x}");
        }
        // No chain at all (the kernel had no user frames): no calls.
        assert_eq!(
            unwinder.stack_of_chain(&mut space, pid, None, &[], &mut read),
            (Vec::new(), false)
        );
    }
}
