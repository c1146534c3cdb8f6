//! The interpreter: executes one pre-decoded block of instructions.
//!
//! Semantics follow the RISC-V Unprivileged ISA 20191213: integer
//! computation §2.4 and §5.2, control transfer §2.5, loads and stores §2.6
//! and §5.3 (misaligned accesses are performed, as Linux does for user
//! code), M §7, A §8 (a single hart: LR/SC use one reservation; AMOs must
//! be naturally aligned, §8.4; in memory shared with other processes AMOs
//! are the host's atomic operations and SC a compare-and-swap), Zicsr §9 with the user CSRs `fflags`, `frm`,
//! `fcsr`, `cycle`, `time`, `instret` (§10.1), F §11 and D §12 via
//! [`crate::fp`].
//!
//! The block function is generic over `EV`: with `EV = false` no event
//! code is compiled into the loop at all, so a run with nothing attached
//! pays nothing for the profiling interface; with `EV = true` each
//! instruction tests its class against the sink's class set (the
//! co-processor paper's decode-time filter, Zilles & Sohi, HPCA 2001, §3.1).

use crate::bitmanip::bit_op;
use crate::events::Events;
use crate::fp::{self, Arith, Cmp, D, S};
use crate::mem::{Fault, Memory};
use crate::op::{bit_manip, float_compute, Emit, Kind, Op, ZERO_SINK};
use coprof_core::{flags, Class, Event};

/// Architectural state of the hart.
#[derive(Clone)]
pub struct Cpu {
    /// Integer registers; index 32 is the write-only scratch slot that
    /// stands for x0 as a destination. Sized 256, one for every value of
    /// an op's 8-bit register field, so that indexing by a field needs
    /// neither a bounds check nor a mask: two instructions fewer in each
    /// of the interpreter's few-instruction ops.
    pub x: [u64; 256],
    /// Floating-point registers (raw bits; singles NaN-boxed).
    pub f: [u64; 32],
    /// Program counter.
    pub pc: u64,
    /// Accrued exception flags (`fflags`, Table 11.2).
    pub fflags: u32,
    /// Dynamic rounding mode (`frm`).
    pub frm: u32,
    /// Instructions retired before the current block.
    pub instret: u64,
    /// Address reserved by the last LR, or [`Cpu::NO_RESERVATION`]: a
    /// plain word rather than an `Option`, so that translated code reads
    /// and writes it.
    pub reservation: u64,
    /// The value the last LR loaded: in shared memory, which another
    /// process may write at any time, the SC succeeds only if the word
    /// still holds it (a host compare-and-swap).
    pub reserved_value: u64,
    /// Host time at start, for the `time` CSR.
    pub started: std::time::Instant,
}

impl Cpu {
    /// [`reservation`](Cpu::reservation) when no LR holds one: no LR
    /// reserves it, as no aligned word starts there.
    pub const NO_RESERVATION: u64 = u64::MAX;

    /// A hart with every register zero, starting at `pc`.
    pub fn new(pc: u64) -> Cpu {
        Cpu {
            x: [0; 256],
            f: [0; 32],
            pc,
            fflags: 0,
            frm: 0,
            instret: 0,
            reservation: Cpu::NO_RESERVATION,
            reserved_value: 0,
            started: std::time::Instant::now(),
        }
    }
}

/// Why a block stopped.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Stop {
    /// Finished normally; `pc` holds the next instruction.
    Next,
    /// An `ecall` at op index `at` (it retired); `pc` is its address.
    Ecall,
    /// An `ebreak` (SIGTRAP); `pc` is its address.
    Ebreak,
    /// A `fence.i` retired, or code was written: drop pre-decoded code.
    Flush,
    /// The op at index `at` is an illegal instruction (SIGILL).
    Illegal {
        /// Index of the op within the block.
        at: usize,
    },
    /// The op at index `at` faulted on a memory access (SIGSEGV).
    Fault {
        /// Index of the op within the block.
        at: usize,
        /// The failed access.
        fault: Fault,
    },
    /// The op at index `at` is an atomic at a misaligned address (SIGBUS).
    Misaligned {
        /// Index of the op within the block.
        at: usize,
        /// The address.
        addr: u64,
    },
}

impl Stop {
    /// This stop of the ops from index `k` of a block, as a stop of the
    /// whole block.
    pub fn after(self, k: usize) -> Stop {
        match self {
            Stop::Illegal { at } => Stop::Illegal { at: at + k },
            Stop::Fault { at, fault } => Stop::Fault { at: at + k, fault },
            Stop::Misaligned { at, addr } => Stop::Misaligned { at: at + k, addr },
            other => other,
        }
    }

    /// How many ops of a block of `len` retired when it stopped so.
    pub fn retired(&self, len: usize) -> usize {
        match *self {
            Stop::Illegal { at } | Stop::Fault { at, .. } | Stop::Misaligned { at, .. } => at,
            // ebreak traps instead of retiring; it is always a block's last op.
            Stop::Ebreak => len.saturating_sub(1),
            _ => len,
        }
    }
}

#[inline(always)]
fn ev_flags(op: &Op) -> u16 {
    if op.len == 2 {
        flags::COMPRESSED
    } else {
        0
    }
}

/// The event of a jump (jal, jalr, their compressed forms) to `target`:
/// taken, and with the link address as its value when it writes one (a
/// link into x0 writes nothing).
#[inline(always)]
fn jump_event(op: &Op, target: u64, link: u64) -> Event {
    let mut e = Event::control(op.pc, op.class, target, true);
    e.flags |= ev_flags(op);
    if op.rd != ZERO_SINK {
        e.value = link;
        e.flags |= flags::HAS_VALUE;
    }
    e
}

/// Executes the ops of one block, from the first, until one transfers
/// control or stops. `cpu.instret` must hold the count before the block;
/// the caller adds the retired ops afterwards.
#[inline(never)]
pub fn exec_block<const EV: bool>(
    cpu: &mut Cpu,
    mem: &mut Memory,
    ops: &[Op],
    ev: &mut Events,
) -> Stop {
    exec_ops::<EV, EV>(cpu, mem, ops, ev)
}

/// [`exec_block`], inlined into a loop that runs block after block (the
/// simulator's chain of blocks, [`crate::Simulator`]): a call per block
/// would save and restore the interpreter's registers and stack frame
/// for every few instructions. Without `TAIL`, the instructions whose
/// events are built after they execute ([`TAIL_CLASSES`](crate::op::TAIL_CLASSES)) build none:
/// the caller passes it when the sink wants none of those classes, so
/// that a sink of loads alone does not pay a test of its classes after
/// every instruction.
#[inline(always)]
pub(crate) fn exec_ops<const EV: bool, const TAIL: bool>(
    cpu: &mut Cpu,
    mem: &mut Memory,
    ops: &[Op],
    ev: &mut Events,
) -> Stop {
    // The index of `op` in the block, for a stop that reports where it
    // happened: worked out only then, not kept in a register by the loop.
    macro_rules! i {
        ($op:expr) => {
            ($op as *const Op as usize - ops.as_ptr() as usize) / std::mem::size_of::<Op>()
        };
    }
    macro_rules! x {
        ($r:expr) => {
            cpu.x[$r as usize]
        };
    }
    macro_rules! f {
        ($r:expr) => {
            cpu.f[($r & 31) as usize]
        };
    }
    macro_rules! mem_try {
        ($e:expr, $op:expr) => {
            match $e {
                Ok(v) => v,
                Err(fault) => return Stop::Fault { at: i!($op), fault },
            }
        };
    }
    macro_rules! load {
        ($op:expr, $n:literal, $ext:expr) => {{
            let addr = x!($op.rs1).wrapping_add($op.imm as u64);
            let v = mem_try!(mem.load::<$n>(addr), $op);
            x!($op.rd) = $ext(v);
            if EV && ev.wants.contains(Class::Load) {
                let mut e = Event::load($op.pc, addr, $n, v);
                e.flags |= ev_flags($op);
                ev.push(e);
            }
        }};
    }
    macro_rules! store {
        ($op:expr, $n:literal, $v:expr) => {{
            let addr = x!($op.rs1).wrapping_add($op.imm as u64);
            let v: u64 = $v;
            mem_try!(mem.store::<$n>(addr, v), $op);
            if EV && ev.wants.contains(Class::Store) {
                let mask = if $n == 8 {
                    u64::MAX
                } else {
                    (1u64 << ($n * 8)) - 1
                };
                let mut e = Event::store($op.pc, addr, $n, v & mask);
                e.flags |= ev_flags($op);
                ev.push(e);
            }
        }};
    }
    macro_rules! branch {
        ($op:expr, $cond:expr) => {{
            let taken = $cond;
            if EV && ev.wants.contains(Class::CondBranch) {
                let mut e = Event::control($op.pc, Class::CondBranch, $op.imm as u64, taken);
                e.flags |= ev_flags($op);
                ev.push(e);
            }
            cpu.pc = if taken { $op.imm as u64 } else { $op.next_pc() };
            return Stop::Next;
        }};
    }
    macro_rules! amo {
        ($op:expr, $n:literal, $f:expr) => {{
            let addr = x!($op.rs1);
            if addr % $n != 0 {
                return Stop::Misaligned { at: i!($op), addr };
            }
            let src = x!($op.rs2);
            let old = mem_try!(mem.atomic_rmw::<$n>(addr, |old| $f(old, src)), $op);
            x!($op.rd) = if $n == 4 {
                old as u32 as i32 as i64 as u64
            } else {
                old
            };
            if EV && ev.wants.contains(Class::Load) {
                let mut e = Event::load($op.pc, addr, $n, old);
                e.flags |= ev_flags($op);
                ev.push(e);
            }
        }};
    }
    for op in ops {
        match op.kind {
            Kind::Li => x!(op.rd) = op.imm as u64,
            Kind::Jal => {
                let link = op.next_pc();
                x!(op.rd) = link;
                if EV && ev.wants.contains(op.class) {
                    ev.push(jump_event(op, op.imm as u64, link));
                }
                cpu.pc = op.imm as u64;
                return Stop::Next;
            }
            Kind::Jalr => {
                let target = x!(op.rs1).wrapping_add(op.imm as u64) & !1;
                let link = op.next_pc();
                x!(op.rd) = link;
                if EV && ev.wants.contains(op.class) {
                    ev.push(jump_event(op, target, link));
                }
                cpu.pc = target;
                return Stop::Next;
            }
            Kind::Beq => branch!(op, x!(op.rs1) == x!(op.rs2)),
            Kind::Bne => branch!(op, x!(op.rs1) != x!(op.rs2)),
            Kind::Blt => branch!(op, (x!(op.rs1) as i64) < (x!(op.rs2) as i64)),
            Kind::Bge => branch!(op, (x!(op.rs1) as i64) >= (x!(op.rs2) as i64)),
            Kind::Bltu => branch!(op, x!(op.rs1) < x!(op.rs2)),
            Kind::Bgeu => branch!(op, x!(op.rs1) >= x!(op.rs2)),
            Kind::Lb => load!(op, 1, |v: u64| v as i8 as i64 as u64),
            Kind::Lh => load!(op, 2, |v: u64| v as i16 as i64 as u64),
            Kind::Lw => load!(op, 4, |v: u64| v as i32 as i64 as u64),
            Kind::Ld => load!(op, 8, |v: u64| v),
            Kind::Lbu => load!(op, 1, |v: u64| v),
            Kind::Lhu => load!(op, 2, |v: u64| v),
            Kind::Lwu => load!(op, 4, |v: u64| v),
            Kind::Sb => store!(op, 1, x!(op.rs2)),
            Kind::Sh => store!(op, 2, x!(op.rs2)),
            Kind::Sw => store!(op, 4, x!(op.rs2)),
            Kind::Sd => store!(op, 8, x!(op.rs2)),
            Kind::Addi => x!(op.rd) = x!(op.rs1).wrapping_add(op.imm as u64),
            Kind::Slti => x!(op.rd) = ((x!(op.rs1) as i64) < op.imm) as u64,
            Kind::Sltiu => x!(op.rd) = (x!(op.rs1) < op.imm as u64) as u64,
            Kind::Xori => x!(op.rd) = x!(op.rs1) ^ op.imm as u64,
            Kind::Ori => x!(op.rd) = x!(op.rs1) | op.imm as u64,
            Kind::Andi => x!(op.rd) = x!(op.rs1) & op.imm as u64,
            Kind::Slli => x!(op.rd) = x!(op.rs1) << (op.imm & 63),
            Kind::Srli => x!(op.rd) = x!(op.rs1) >> (op.imm & 63),
            Kind::Srai => x!(op.rd) = ((x!(op.rs1) as i64) >> (op.imm & 63)) as u64,
            Kind::Add => x!(op.rd) = x!(op.rs1).wrapping_add(x!(op.rs2)),
            Kind::Sub => x!(op.rd) = x!(op.rs1).wrapping_sub(x!(op.rs2)),
            Kind::Sll => x!(op.rd) = x!(op.rs1) << (x!(op.rs2) & 63),
            Kind::Slt => x!(op.rd) = ((x!(op.rs1) as i64) < (x!(op.rs2) as i64)) as u64,
            Kind::Sltu => x!(op.rd) = (x!(op.rs1) < x!(op.rs2)) as u64,
            Kind::Xor => x!(op.rd) = x!(op.rs1) ^ x!(op.rs2),
            Kind::Srl => x!(op.rd) = x!(op.rs1) >> (x!(op.rs2) & 63),
            Kind::Sra => x!(op.rd) = ((x!(op.rs1) as i64) >> (x!(op.rs2) & 63)) as u64,
            Kind::Or => x!(op.rd) = x!(op.rs1) | x!(op.rs2),
            Kind::And => x!(op.rd) = x!(op.rs1) & x!(op.rs2),
            Kind::Addiw => {
                x!(op.rd) = (x!(op.rs1) as i32).wrapping_add(op.imm as i32) as i64 as u64
            }
            Kind::Slliw => x!(op.rd) = ((x!(op.rs1) as u32) << (op.imm & 31)) as i32 as i64 as u64,
            Kind::Srliw => x!(op.rd) = ((x!(op.rs1) as u32) >> (op.imm & 31)) as i32 as i64 as u64,
            Kind::Sraiw => x!(op.rd) = ((x!(op.rs1) as i32) >> (op.imm & 31)) as i64 as u64,
            Kind::Addw => {
                x!(op.rd) = (x!(op.rs1) as i32).wrapping_add(x!(op.rs2) as i32) as i64 as u64
            }
            Kind::Subw => {
                x!(op.rd) = (x!(op.rs1) as i32).wrapping_sub(x!(op.rs2) as i32) as i64 as u64
            }
            Kind::Sllw => {
                x!(op.rd) = ((x!(op.rs1) as u32) << (x!(op.rs2) & 31)) as i32 as i64 as u64
            }
            Kind::Srlw => {
                x!(op.rd) = ((x!(op.rs1) as u32) >> (x!(op.rs2) & 31)) as i32 as i64 as u64
            }
            Kind::Sraw => x!(op.rd) = ((x!(op.rs1) as i32) >> (x!(op.rs2) & 31)) as i64 as u64,
            bit_manip!() => x!(op.rd) = bit_op(op.kind, x!(op.rs1), x!(op.rs2), op.imm),
            Kind::Fence => {}
            Kind::FenceI => {
                if EV && ev.wants.contains(Class::System) {
                    ev.push(Event::new(op.pc, Class::System));
                }
                cpu.pc = op.next_pc();
                return Stop::Flush;
            }
            Kind::Ecall => {
                if EV && ev.wants.contains(Class::System) {
                    ev.push(Event::new(op.pc, Class::System));
                }
                cpu.pc = op.pc;
                return Stop::Ecall;
            }
            Kind::Ebreak => {
                cpu.pc = op.pc;
                return Stop::Ebreak;
            }
            Kind::Csrrw
            | Kind::Csrrs
            | Kind::Csrrc
            | Kind::Csrrwi
            | Kind::Csrrsi
            | Kind::Csrrci => {
                if !csr_op(cpu, op, i!(op)) {
                    return Stop::Illegal { at: i!(op) };
                }
            }
            Kind::Mul => x!(op.rd) = x!(op.rs1).wrapping_mul(x!(op.rs2)),
            Kind::Mulh => {
                x!(op.rd) = ((x!(op.rs1) as i64 as i128 * x!(op.rs2) as i64 as i128) >> 64) as u64
            }
            Kind::Mulhsu => {
                x!(op.rd) = ((x!(op.rs1) as i64 as i128).wrapping_mul(x!(op.rs2) as u128 as i128)
                    >> 64) as u64
            }
            Kind::Mulhu => x!(op.rd) = ((x!(op.rs1) as u128 * x!(op.rs2) as u128) >> 64) as u64,
            // Division by zero and overflow do not trap (§7.2, Table 7.1).
            Kind::Div => {
                let (a, b) = (x!(op.rs1) as i64, x!(op.rs2) as i64);
                x!(op.rd) = if b == 0 {
                    u64::MAX
                } else {
                    a.wrapping_div(b) as u64
                };
            }
            Kind::Divu => {
                let (a, b) = (x!(op.rs1), x!(op.rs2));
                x!(op.rd) = a.checked_div(b).unwrap_or(u64::MAX);
            }
            Kind::Rem => {
                let (a, b) = (x!(op.rs1) as i64, x!(op.rs2) as i64);
                x!(op.rd) = if b == 0 {
                    a as u64
                } else {
                    a.wrapping_rem(b) as u64
                };
            }
            Kind::Remu => {
                let (a, b) = (x!(op.rs1), x!(op.rs2));
                x!(op.rd) = if b == 0 { a } else { a % b };
            }
            Kind::Mulw => {
                x!(op.rd) = (x!(op.rs1) as i32).wrapping_mul(x!(op.rs2) as i32) as i64 as u64
            }
            Kind::Divw => {
                let (a, b) = (x!(op.rs1) as i32, x!(op.rs2) as i32);
                x!(op.rd) = if b == 0 {
                    u64::MAX
                } else {
                    a.wrapping_div(b) as i64 as u64
                };
            }
            Kind::Divuw => {
                let (a, b) = (x!(op.rs1) as u32, x!(op.rs2) as u32);
                x!(op.rd) = a
                    .checked_div(b)
                    .map_or(u64::MAX, |q| q as i32 as i64 as u64);
            }
            Kind::Remw => {
                let (a, b) = (x!(op.rs1) as i32, x!(op.rs2) as i32);
                x!(op.rd) = if b == 0 {
                    a as i64 as u64
                } else {
                    a.wrapping_rem(b) as i64 as u64
                };
            }
            Kind::Remuw => {
                let (a, b) = (x!(op.rs1) as u32, x!(op.rs2) as u32);
                x!(op.rd) = if b == 0 {
                    a as i32 as i64 as u64
                } else {
                    (a % b) as i32 as i64 as u64
                };
            }
            Kind::LrW | Kind::LrD => {
                let n = if op.kind == Kind::LrW { 4 } else { 8 };
                let addr = x!(op.rs1);
                if !addr.is_multiple_of(n) {
                    return Stop::Misaligned { at: i!(op), addr };
                }
                let v = if n == 4 {
                    mem_try!(mem.load::<4>(addr), op)
                } else {
                    mem_try!(mem.load::<8>(addr), op)
                };
                x!(op.rd) = if n == 4 {
                    v as u32 as i32 as i64 as u64
                } else {
                    v
                };
                cpu.reservation = addr;
                cpu.reserved_value = v;
                if EV && ev.wants.contains(Class::Load) {
                    let mut e = Event::load(op.pc, addr, n as u8, v);
                    e.flags |= ev_flags(op);
                    ev.push(e);
                }
            }
            Kind::ScW | Kind::ScD => {
                let n = if op.kind == Kind::ScW { 4 } else { 8 };
                let addr = x!(op.rs1);
                if !addr.is_multiple_of(n) {
                    return Stop::Misaligned { at: i!(op), addr };
                }
                let reserved = cpu.reservation == addr;
                cpu.reservation = Cpu::NO_RESERVATION;
                let v = x!(op.rs2);
                let expected = cpu.reserved_value;
                let ok = reserved
                    && if n == 4 {
                        mem_try!(mem.store_conditional::<4>(addr, expected, v), op)
                    } else {
                        mem_try!(mem.store_conditional::<8>(addr, expected, v), op)
                    };
                if ok {
                    if EV && ev.wants.contains(Class::Store) {
                        let v = if n == 4 { v & 0xffff_ffff } else { v };
                        let mut e = Event::store(op.pc, addr, n as u8, v);
                        e.flags |= ev_flags(op);
                        ev.push(e);
                    }
                } else if EV && ev.wants.contains(Class::Store) {
                    // A failed SC retires too: a store of no bytes.
                    let mut e = Event::store(op.pc, addr, 0, 0);
                    e.flags |= ev_flags(op);
                    ev.push(e);
                }
                x!(op.rd) = (!ok) as u64;
            }
            Kind::AmoswapW => amo!(op, 4, |_o: u64, s: u64| s),
            Kind::AmoaddW => amo!(op, 4, |o: u64, s: u64| o.wrapping_add(s)),
            Kind::AmoxorW => amo!(op, 4, |o: u64, s: u64| o ^ s),
            Kind::AmoandW => amo!(op, 4, |o: u64, s: u64| o & s),
            Kind::AmoorW => amo!(op, 4, |o: u64, s: u64| o | s),
            Kind::AmominW => amo!(op, 4, |o: u64, s: u64| (o as i32).min(s as i32) as u32
                as u64),
            Kind::AmomaxW => amo!(op, 4, |o: u64, s: u64| (o as i32).max(s as i32) as u32
                as u64),
            Kind::AmominuW => amo!(op, 4, |o: u64, s: u64| (o as u32).min(s as u32) as u64),
            Kind::AmomaxuW => amo!(op, 4, |o: u64, s: u64| (o as u32).max(s as u32) as u64),
            Kind::AmoswapD => amo!(op, 8, |_o: u64, s: u64| s),
            Kind::AmoaddD => amo!(op, 8, |o: u64, s: u64| o.wrapping_add(s)),
            Kind::AmoxorD => amo!(op, 8, |o: u64, s: u64| o ^ s),
            Kind::AmoandD => amo!(op, 8, |o: u64, s: u64| o & s),
            Kind::AmoorD => amo!(op, 8, |o: u64, s: u64| o | s),
            Kind::AmominD => amo!(op, 8, |o: u64, s: u64| (o as i64).min(s as i64) as u64),
            Kind::AmomaxD => amo!(op, 8, |o: u64, s: u64| (o as i64).max(s as i64) as u64),
            Kind::AmominuD => amo!(op, 8, |o: u64, s: u64| o.min(s)),
            Kind::AmomaxuD => amo!(op, 8, |o: u64, s: u64| o.max(s)),
            Kind::Flw => {
                let addr = x!(op.rs1).wrapping_add(op.imm as u64);
                let v = mem_try!(mem.load::<4>(addr), op);
                f!(op.rd) = fp::box_s(v);
                if EV && ev.wants.contains(Class::Load) {
                    let mut e = Event::load(op.pc, addr, 4, v);
                    e.flags |= ev_flags(op);
                    ev.push(e);
                }
            }
            Kind::Fld => {
                let addr = x!(op.rs1).wrapping_add(op.imm as u64);
                let v = mem_try!(mem.load::<8>(addr), op);
                f!(op.rd) = v;
                if EV && ev.wants.contains(Class::Load) {
                    let mut e = Event::load(op.pc, addr, 8, v);
                    e.flags |= ev_flags(op);
                    ev.push(e);
                }
            }
            Kind::Fsw => store!(op, 4, f!(op.rs2) & 0xffff_ffff),
            Kind::Fsd => store!(op, 8, f!(op.rs2)),
            float_compute!() => {
                if !exec_float(cpu, op) {
                    return Stop::Illegal { at: i!(op) };
                }
            }
            Kind::Illegal => return Stop::Illegal { at: i!(op) },
            Kind::FetchFault => {
                return Stop::Fault {
                    at: i!(op),
                    fault: Fault {
                        addr: op.imm as u64,
                        access: crate::mem::Access::Execute,
                    },
                }
            }
        }
        if EV && TAIL && ev.wants.contains(op.class) {
            match op.emit {
                Emit::Own => {}
                Emit::IntDest => {
                    let mut e = Event::with_value(op.pc, op.class, x!(op.rd));
                    e.flags |= ev_flags(op);
                    ev.push(e);
                }
                Emit::FloatDest => {
                    let mut e = Event::with_value(op.pc, op.class, f!(op.rd));
                    e.flags |= ev_flags(op);
                    ev.push(e);
                }
                Emit::NoValue => {
                    let mut e = Event::new(op.pc, op.class);
                    e.flags |= ev_flags(op);
                    ev.push(e);
                }
            }
        }
    }
    cpu.pc = ops.last().map_or(cpu.pc, |op| op.next_pc());
    Stop::Next
}

/// Runs `op`, an F or D op that computes (§11, §12: every op of the two
/// extensions but loads and stores): for the interpreter, and for a
/// translated block, which calls it in place of the op. Returns false,
/// with nothing changed, when the op's rounding mode is reserved (an
/// illegal instruction, Table 11.1).
///
/// On an x86-64 host with fused multiply-add instructions (FMA3), the
/// ops are compiled with them: the exact flags of [`fp`]'s fast paths
/// take one or two fused multiply-adds per op, which are otherwise
/// calls into the C library. The results are the same either way (a
/// fused multiply-add is exact by IEEE 754); `matmul`'s `fmadd.d`s ran
/// at about half the cost.
#[inline(never)]
pub(crate) fn exec_float(cpu: &mut Cpu, op: &Op) -> bool {
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("fma") {
        // SAFETY: the processor has the FMA3 instructions.
        return unsafe { exec_float_fma3(cpu, op) };
    }
    exec_float_body(cpu, op)
}

/// [`exec_float_body`] compiled with the FMA3 instructions.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "fma")]
unsafe fn exec_float_fma3(cpu: &mut Cpu, op: &Op) -> bool {
    exec_float_body(cpu, op)
}

/// [`exec_float`]'s work, inlined into each way it is compiled.
#[inline(always)]
fn exec_float_body(cpu: &mut Cpu, op: &Op) -> bool {
    macro_rules! x {
        ($r:expr) => {
            cpu.x[$r as usize]
        };
    }
    macro_rules! f {
        ($r:expr) => {
            cpu.f[($r & 31) as usize]
        };
    }
    macro_rules! rounding {
        ($op:expr) => {{
            let rm = if $op.rm == 7 { cpu.frm } else { $op.rm as u32 };
            match fp::round_of(rm) {
                Some(r) => r,
                None => return false,
            }
        }};
    }
    macro_rules! fset {
        ($op:expr, $r:expr, $boxed:expr) => {{
            let (v, fl) = $r;
            cpu.fflags |= fl;
            f!($op.rd) = if $boxed { fp::box_s(v) } else { v };
        }};
    }
    macro_rules! xset_fl {
        ($op:expr, $r:expr) => {{
            let (v, fl) = $r;
            cpu.fflags |= fl;
            x!($op.rd) = v;
        }};
    }
    let s = |v: u64| fp::unbox_s(v);
    match op.kind {
        Kind::FmaddS | Kind::FmsubS | Kind::FnmsubS | Kind::FnmaddS => {
            let rm = rounding!(op);
            let (np, na) = fma_signs(op.kind);
            fset!(
                op,
                fp::fma::<S>(s(f!(op.rs1)), s(f!(op.rs2)), s(f!(op.rs3)), np, na, rm),
                true
            )
        }
        Kind::FmaddD | Kind::FmsubD | Kind::FnmsubD | Kind::FnmaddD => {
            let rm = rounding!(op);
            let (np, na) = fma_signs(op.kind);
            fset!(
                op,
                fp::fma::<D>(f!(op.rs1), f!(op.rs2), f!(op.rs3), np, na, rm),
                false
            )
        }
        Kind::FaddS | Kind::FsubS | Kind::FmulS | Kind::FdivS => {
            let rm = rounding!(op);
            let ar = arith_of(op.kind);
            fset!(op, fp::arith_s(ar, s(f!(op.rs1)), s(f!(op.rs2)), rm), true)
        }
        Kind::FsqrtS => {
            let rm = rounding!(op);
            fset!(op, fp::sqrt::<S>(s(f!(op.rs1)), rm), true)
        }
        Kind::FaddD | Kind::FsubD | Kind::FmulD | Kind::FdivD => {
            let rm = rounding!(op);
            let ar = arith_of(op.kind);
            fset!(op, fp::arith_d(ar, f!(op.rs1), f!(op.rs2), rm), false)
        }
        Kind::FsqrtD => {
            let rm = rounding!(op);
            fset!(op, fp::sqrt::<D>(f!(op.rs1), rm), false)
        }
        Kind::FsgnjS => {
            f!(op.rd) = fp::box_s(fp::sign_inject::<S>(s(f!(op.rs1)), s(f!(op.rs2)), 0))
        }
        Kind::FsgnjnS => {
            f!(op.rd) = fp::box_s(fp::sign_inject::<S>(s(f!(op.rs1)), s(f!(op.rs2)), 1))
        }
        Kind::FsgnjxS => {
            f!(op.rd) = fp::box_s(fp::sign_inject::<S>(s(f!(op.rs1)), s(f!(op.rs2)), 2))
        }
        Kind::FsgnjD => f!(op.rd) = fp::sign_inject::<D>(f!(op.rs1), f!(op.rs2), 0),
        Kind::FsgnjnD => f!(op.rd) = fp::sign_inject::<D>(f!(op.rs1), f!(op.rs2), 1),
        Kind::FsgnjxD => f!(op.rd) = fp::sign_inject::<D>(f!(op.rs1), f!(op.rs2), 2),
        Kind::FminS => fset!(
            op,
            fp::min_max::<S>(s(f!(op.rs1)), s(f!(op.rs2)), false),
            true
        ),
        Kind::FmaxS => fset!(
            op,
            fp::min_max::<S>(s(f!(op.rs1)), s(f!(op.rs2)), true),
            true
        ),
        Kind::FminD => fset!(op, fp::min_max::<D>(f!(op.rs1), f!(op.rs2), false), false),
        Kind::FmaxD => fset!(op, fp::min_max::<D>(f!(op.rs1), f!(op.rs2), true), false),
        Kind::FcvtWS | Kind::FcvtWuS | Kind::FcvtLS | Kind::FcvtLuS => {
            let rm = rounding!(op);
            let (signed, width) = int_shape(op.kind);
            xset_fl!(op, fp::to_int::<S>(s(f!(op.rs1)), signed, width, rm))
        }
        Kind::FcvtWD | Kind::FcvtWuD | Kind::FcvtLD | Kind::FcvtLuD => {
            let rm = rounding!(op);
            let (signed, width) = int_shape(op.kind);
            xset_fl!(op, fp::to_int::<D>(f!(op.rs1), signed, width, rm))
        }
        Kind::FcvtSW | Kind::FcvtSWu | Kind::FcvtSL | Kind::FcvtSLu => {
            let rm = rounding!(op);
            let (signed, width) = int_shape(op.kind);
            fset!(op, fp::from_int::<S>(x!(op.rs1), signed, width, rm), true)
        }
        Kind::FcvtDW | Kind::FcvtDWu | Kind::FcvtDL | Kind::FcvtDLu => {
            let rm = rounding!(op);
            let (signed, width) = int_shape(op.kind);
            fset!(op, fp::from_int::<D>(x!(op.rs1), signed, width, rm), false)
        }
        Kind::FcvtSD => {
            let rm = rounding!(op);
            fset!(op, fp::d_to_s(f!(op.rs1), rm), true)
        }
        Kind::FcvtDS => {
            let _ = rounding!(op);
            fset!(op, fp::s_to_d(s(f!(op.rs1))), false)
        }
        Kind::FmvXW => x!(op.rd) = f!(op.rs1) as u32 as i32 as i64 as u64,
        Kind::FmvWX => f!(op.rd) = fp::box_s(x!(op.rs1)),
        Kind::FmvXD => x!(op.rd) = f!(op.rs1),
        Kind::FmvDX => f!(op.rd) = x!(op.rs1),
        Kind::FclassS => x!(op.rd) = fp::classify::<S>(s(f!(op.rs1))),
        Kind::FclassD => x!(op.rd) = fp::classify::<D>(f!(op.rs1)),
        Kind::FeqS => xset_fl!(op, fp::compare::<S>(s(f!(op.rs1)), s(f!(op.rs2)), Cmp::Eq)),
        Kind::FltS => xset_fl!(op, fp::compare::<S>(s(f!(op.rs1)), s(f!(op.rs2)), Cmp::Lt)),
        Kind::FleS => xset_fl!(op, fp::compare::<S>(s(f!(op.rs1)), s(f!(op.rs2)), Cmp::Le)),
        Kind::FeqD => xset_fl!(op, fp::compare::<D>(f!(op.rs1), f!(op.rs2), Cmp::Eq)),
        Kind::FltD => xset_fl!(op, fp::compare::<D>(f!(op.rs1), f!(op.rs2), Cmp::Lt)),
        Kind::FleD => xset_fl!(op, fp::compare::<D>(f!(op.rs1), f!(op.rs2), Cmp::Le)),
        _ => unreachable!("not an F or D op that computes: {:?}", op.kind),
    }
    true
}

/// The operation of an `fadd`, `fsub`, `fmul` or `fdiv`.
fn arith_of(kind: Kind) -> Arith {
    use Kind::*;
    match kind {
        FaddS | FaddD => Arith::Add,
        FsubS | FsubD => Arith::Sub,
        FmulS | FmulD => Arith::Mul,
        _ => Arith::Div,
    }
}

fn fma_signs(kind: Kind) -> (bool, bool) {
    use Kind::*;
    match kind {
        FmaddS | FmaddD => (false, false),
        FmsubS | FmsubD => (false, true),
        FnmsubS | FnmsubD => (true, false),
        _ => (true, true),
    }
}

fn int_shape(kind: Kind) -> (bool, u32) {
    use Kind::*;
    match kind {
        FcvtWS | FcvtWD | FcvtSW | FcvtDW => (true, 32),
        FcvtWuS | FcvtWuD | FcvtSWu | FcvtDWu => (false, 32),
        FcvtLS | FcvtLD | FcvtSL | FcvtDL => (true, 64),
        _ => (false, 64),
    }
}

/// CSR numbers of the user-level CSRs (§9, §10.1, §11.2).
pub mod csr {
    /// Accrued FP exception flags.
    pub const FFLAGS: u32 = 0x001;
    /// FP dynamic rounding mode.
    pub const FRM: u32 = 0x002;
    /// Both, as one register.
    pub const FCSR: u32 = 0x003;
    /// Cycle counter (read-only).
    pub const CYCLE: u32 = 0xc00;
    /// Real-time counter (read-only).
    pub const TIME: u32 = 0xc01;
    /// Instructions-retired counter (read-only).
    pub const INSTRET: u32 = 0xc02;
}

/// Executes a Zicsr instruction (§9.1). Returns false when it is illegal:
/// an unknown CSR, or a write to a read-only counter.
fn csr_op(cpu: &mut Cpu, op: &Op, index: usize) -> bool {
    let num = op.imm as u32;
    let src = match op.kind {
        Kind::Csrrwi | Kind::Csrrsi | Kind::Csrrci => op.rs1 as u64,
        _ => cpu.x[(op.rs1 & 63) as usize],
    };
    // csrrs/csrrc with x0 (or uimm 0) do not write (§9.1).
    let writes = match op.kind {
        Kind::Csrrw | Kind::Csrrwi => true,
        _ => op.rs1 != 0,
    };
    let old = match num {
        csr::FFLAGS => cpu.fflags as u64,
        csr::FRM => cpu.frm as u64,
        csr::FCSR => ((cpu.frm << 5) | cpu.fflags) as u64,
        // One instruction per cycle: cycle equals instret in this model.
        csr::CYCLE | csr::INSTRET => cpu.instret + index as u64,
        // A 10 MHz timebase, as on common RV64 Linux boards.
        csr::TIME => (cpu.started.elapsed().as_nanos() / 100) as u64,
        _ => return false,
    };
    if writes {
        let new = match op.kind {
            Kind::Csrrw | Kind::Csrrwi => src,
            Kind::Csrrs | Kind::Csrrsi => old | src,
            _ => old & !src,
        };
        match num {
            csr::FFLAGS => cpu.fflags = (new & 0x1f) as u32,
            csr::FRM => cpu.frm = (new & 7) as u32,
            csr::FCSR => {
                cpu.fflags = (new & 0x1f) as u32;
                cpu.frm = ((new >> 5) & 7) as u32;
            }
            _ => return false,
        }
    }
    cpu.x[(op.rd & 63) as usize] = old;
    true
}

#[cfg(test)]
#[path = "cpu_tests.rs"]
mod tests;
