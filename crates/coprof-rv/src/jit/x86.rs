//! Translation of a block's ops to x86-64 code, built with iced-x86's
//! code assembler and encoded by [`encode`](super::encode).
//!
//! Six guest registers live in host registers while translations run
//! ([`regs`]); the others stay in [`Cpu::x`](crate::cpu::Cpu::x), where
//! each op loads its sources and stores its result, with rax, rcx and rdx
//! as scratch. Five callee-saved host registers hold what every op
//! needs: rbx the guest registers, r12 the guest memory's host base, r13
//! its table of page permissions, r14 the next free event slot and r15
//! the [`Ctx`]. A load or store checks its address as
//! [`Memory::load`](crate::mem::Memory::load) does, on the fast path
//! only: the address in the guest range, on one page, the page readable
//! (writable and not executable, for a store). Anything else, a fault, an
//! access across a page boundary, a store to code or to a page without
//! permission, leaves the translation before the op, which the
//! interpreter then runs, so that every fault, signal and event comes
//! from one place.

use super::regs::{self, get, get32, on_x, put, with_x, with_x32};
use super::{atomic, bits, float, Ctx, Jump, HEADER, JUMPS, NOT_ENTERED};
use crate::cpu::{exec_float, Cpu};
use crate::mem::{perm, LIMIT, PAGE};
use crate::op::{bit_manip, float_compute, Kind, Op};
use coprof_core::{flags, Class, ClassSet, Event, Run};
use iced_x86::code_asm::asm_traits::CodeAsmJmp;
use iced_x86::code_asm::*;
use iced_x86::IcedError;
use std::mem::offset_of;

const CTX_X: i32 = offset_of!(Ctx, x) as i32;
const CTX_BASE: i32 = offset_of!(Ctx, base) as i32;
const CTX_PERMS: i32 = offset_of!(Ctx, perms) as i32;
const CTX_EV: i32 = offset_of!(Ctx, ev) as i32;
const CTX_PC: i32 = offset_of!(Ctx, pc) as i32;
const CTX_BUDGET: i32 = offset_of!(Ctx, budget) as i32;
const CTX_BI: i32 = offset_of!(Ctx, bi) as i32;
const CTX_RUNS: i32 = offset_of!(Ctx, runs) as i32;
const CTX_RUNS_LEN: i32 = offset_of!(Ctx, runs_len) as i32;
const CTX_RUNS_CAP: i32 = offset_of!(Ctx, runs_cap) as i32;
const CTX_EV_END: i32 = offset_of!(Ctx, ev_end) as i32;
const CTX_CPU: i32 = offset_of!(Ctx, cpu) as i32;

/// Where [`Cpu::f`] is from [`Cpu::x`], which rbx holds.
pub(super) const F_FROM_X: i32 = offset_of!(Cpu, f) as i32 - offset_of!(Cpu, x) as i32;

const EV_PC: i32 = offset_of!(Event, pc) as i32;
const EV_ADDR: i32 = offset_of!(Event, addr) as i32;
const EV_VALUE: i32 = offset_of!(Event, value) as i32;
const EV_CLASS: i32 = offset_of!(Event, class) as i32;
const EV_SIZE: usize = std::mem::size_of::<Event>();

// The last word of an event (class, size, flags) is written as one u32.
const _: () = assert!(offset_of!(Event, size) == offset_of!(Event, class) + 1);
const _: () = assert!(offset_of!(Event, flags) == offset_of!(Event, class) + 2);
const _: () = assert!(EV_SIZE == offset_of!(Event, class) + 8); // 4 of padding

// A run is written as one u64: the block's id, then its length.
const _: () = assert!(offset_of!(Run, block) == 0 && offset_of!(Run, len) == 4);
const _: () = assert!(std::mem::size_of::<Run>() == 8);

/// What a translation knows of its block besides the ops, to be entered
/// from another translation in place of the simulator's loop: the block's
/// index, the address of its count, and its run of blocks when the run
/// takes runs ([`Block::run_id`](crate::code::Block::run_id), with all
/// its instructions).
pub(super) struct Chain {
    pub idx: u32,
    pub count: *mut u64,
    pub run: Option<Run>,
    /// Whether the run builds events: a block entered from another must
    /// leave room for its own before the batch is full.
    pub events: bool,
    /// The jump cache, where a `jalr` to a target other than the one it
    /// was linked for looks for the target's translation.
    pub jumps: *const Jump,
}

/// A translation: its bytes, with the header's three words filled in as
/// offsets from its start (the arena adds its address): per way out, the
/// exit that returns to the simulator's loop (0 for a way that cannot
/// be linked), and the entry from another translation.
pub(super) struct Translation {
    pub bytes: Vec<u8>,
    pub exits: [u64; 2],
    pub chained_entry: u64,
}

/// Whether `op` can be translated, given the classes whose events the
/// run builds: the ops below whose events, if wanted, are loads or
/// stores.
pub(super) fn translatable(op: &Op, wants: ClassSet) -> bool {
    use Kind::*;
    let kind_ok = match op.kind {
        Li | Addi | Slti | Sltiu | Xori | Ori | Andi | Slli | Srli | Srai | Addiw | Slliw
        | Srliw | Sraiw => fits32(op.imm) || op.kind == Li,
        Add | Sub | Sll | Slt | Sltu | Xor | Srl | Sra | Or | And | Addw | Subw | Sllw | Srlw
        | Sraw | Mul | Mulh | Mulhsu | Mulhu | Mulw | Fence => true,
        Csrrw | Csrrs | Csrrc | Csrrwi | Csrrsi | Csrrci => float::is_float_csr(op),
        Div | Divu | Rem | Remu | Divw | Divuw | Remw | Remuw => true,
        Lb | Lh | Lw | Ld | Lbu | Lhu | Lwu | Sb | Sh | Sw | Sd => fits32(op.imm),
        Flw | Fld | Fsw | Fsd => fits32(op.imm),
        float_compute!() => true,
        Beq | Bne | Blt | Bge | Bltu | Bgeu | Jal | Jalr => true,
        bit_manip!() => bits::translates(op.kind),
        k => atomic::is_atomic(k),
    };
    let event_ok = accesses_memory(op.kind) || !wants.contains(op.class);
    kind_ok && event_ok && op.rd <= 32 && op.rs1 < 32 && op.rs2 < 32
}

/// Whether `k` loads or stores: a plain access or an atomic one, each of
/// which may leave the translation before it and makes its own event.
fn accesses_memory(k: Kind) -> bool {
    use Kind::*;
    matches!(
        k,
        Lb | Lh | Lw | Ld | Lbu | Lhu | Lwu | Sb | Sh | Sw | Sd | Flw | Fld | Fsw | Fsd
    ) || atomic::is_atomic(k)
}

fn is_float_compute(k: Kind) -> bool {
    matches!(k, float_compute!())
}

/// The floating-point ops translated in place rather than called: moves
/// of bits between the register files and sign injection (`fmv.d`,
/// `fneg.d`, `fabs.d`) of doubles, which neither round nor raise a flag.
fn is_float_move(k: Kind) -> bool {
    matches!(
        k,
        Kind::FmvXD | Kind::FmvDX | Kind::FsgnjD | Kind::FsgnjnD | Kind::FsgnjxD
    )
}

fn fits32(v: i64) -> bool {
    v == v as i32 as i64
}

/// Floating-point register `r` (its low five bits, as the interpreter
/// reads them).
pub(super) fn fr(r: u8) -> AsmMemoryOperand {
    qword_ptr(rbx + F_FROM_X + ((r & 31) as i32) * 8)
}

/// Runs a floating-point op for a translation: [`exec_float`] on the
/// hart, with the op's copy the translation holds.
extern "sysv64" fn float_op(cpu: *mut Cpu, op: *const Op) -> bool {
    // SAFETY: the translation passes the hart of its `Ctx`, borrowed
    // for the whole call of the translation, and an op the `Jit` keeps
    // until it drops the translation.
    unsafe { exec_float(&mut *cpu, &*op) }
}

/// The last word of an event (class, size, flags) as the interpreter
/// builds it for `op`.
pub(super) fn event_word(e: Event, op: &Op) -> u32 {
    let fl = e.flags | if op.len == 2 { flags::COMPRESSED } else { 0 };
    e.class as u32 | (e.size as u32) << 8 | (fl as u32) << 16
}

/// Assembles the longest prefix of `ops` that [`translatable`] allows,
/// for a run that builds events of `wants`; `None` when it covers none.
/// The code returns to the loop with the number of ops it ran where it
/// stops short of the block's end.
///
/// A floating-point op that computes is a call of [`exec_float`] with
/// a copy of the op, kept in `float_ops`, which must outlive the
/// translation; one with a fast path ([`float`]) runs that in place and
/// makes the call, out of line, only for what the fast path leaves.
// Boxed: the translations hold each op's address, which must stay put
// while the list grows.
#[allow(clippy::vec_box)]
pub(super) fn assemble(
    ops: &[Op],
    wants: ClassSet,
    chain: &Chain,
    float_ops: &mut Vec<Box<Op>>,
) -> Option<Translation> {
    let covered = ops.iter().take_while(|op| translatable(op, wants)).count();
    if covered == 0 {
        return None;
    }
    emit(&ops[..covered], ops.len(), wants, chain, float_ops).ok()
}

/// The exits of a block's last op that may be linked to the block they
/// go to: way 0 to a static target (a branch taken, a `jal`) or to the
/// last target of a `jalr`, way 1 falling through. None when the
/// translation does not cover the block (the interpreter runs the rest).
fn linkable(ops: &[Op], len: usize) -> [bool; 2] {
    if ops.len() < len {
        return [false, false];
    }
    match ops[len - 1].kind {
        Kind::Beq | Kind::Bne | Kind::Blt | Kind::Bge | Kind::Bltu | Kind::Bgeu => [true, true],
        // Way 0 for the one target it was linked for (the header's
        // fourth word), checked each time.
        Kind::Jal | Kind::Jalr => [true, false],
        _ => [false, true],
    }
}

/// Leaves the block by way `way` to `target`: on to the block linked
/// there (its entry's address in the header word `slot`), if the
/// instructions retired stay below the loop's next look, with the
/// block's length in rcx; else back to the loop.
fn exit(
    a: &mut CodeAssembler,
    linked: bool,
    slot: CodeLabel,
    unlinked: &mut CodeLabel,
    target: u64,
    len: u32,
    out: CodeLabel,
) -> Result<(), IcedError> {
    if linked {
        chain_on(a, qword_ptr(slot), *unlinked, len)?;
    }
    a.set_label(unlinked)?;
    set_pc(a, target)?;
    a.mov(eax, len)?;
    a.jmp(out)
}

/// Jumps on to the entry of another block's translation at `entry` (a
/// header word, or a register holding the address), with the block's
/// length in rcx, if the instructions retired stay below the loop's
/// next look; else to `unlinked`.
fn chain_on<T>(
    a: &mut CodeAssembler,
    entry: T,
    unlinked: CodeLabel,
    len: u32,
) -> Result<(), IcedError>
where
    CodeAssembler: CodeAsmJmp<T>,
{
    a.cmp(qword_ptr(r15 + CTX_BUDGET), len as i32)?;
    a.jbe(unlinked)?;
    a.mov(ecx, len)?;
    a.jmp(entry)
}

#[allow(clippy::vec_box)]
fn emit(
    ops: &[Op],
    len: usize,
    wants: ClassSet,
    chain: &Chain,
    float_ops: &mut Vec<Box<Op>>,
) -> Result<Translation, super::encode::EncodeError> {
    let mut a = CodeAssembler::new(64)?;
    let mut out = a.create_label();
    // Per op that may leave early, its label: returns its index.
    let mut bails: Vec<(CodeLabel, u32)> = Vec::new();
    // Per floating-point op with a fast path: the call's label, the
    // label after the op, the op's copy and its bail.
    let mut slows: Vec<(CodeLabel, CodeLabel, *const Op, CodeLabel)> = Vec::new();
    let fast_floats = float::host_has_fast_paths();
    let links = linkable(ops, len);
    let mut slots = [a.create_label(), a.create_label()];
    let mut target = a.create_label();
    let mut unlinked = [a.create_label(), a.create_label()];
    let mut chained = a.create_label();
    let mut body = a.create_label();
    let mut not_entered = a.create_label();

    // The header: filled in by the arena.
    a.set_label(&mut slots[0])?;
    a.dq(&[0])?;
    a.set_label(&mut slots[1])?;
    a.dq(&[0])?;
    a.dq(&[0])?;
    a.set_label(&mut target)?;
    a.dq(&[0])?;
    debug_assert_eq!(HEADER, 32);

    // The entry from the simulator's loop, which has counted the block
    // and added its run.
    a.push(rbx)?;
    a.push(r12)?;
    a.push(r13)?;
    a.push(r14)?;
    a.push(r15)?;
    a.mov(r15, rdi)?;
    a.mov(rbx, qword_ptr(r15 + CTX_X))?;
    a.mov(r12, qword_ptr(r15 + CTX_BASE))?;
    a.mov(r13, qword_ptr(r15 + CTX_PERMS))?;
    a.mov(r14, qword_ptr(r15 + CTX_EV))?;
    a.mov(dword_ptr(r15 + CTX_BI), chain.idx)?;
    regs::load_all(&mut a)?;
    a.jmp(body)?;

    // The entry from another translation, whose block's length is in
    // rcx: room for this block's run and events, or back to the loop
    // before it starts; then what the loop does for a block.
    a.set_label(&mut chained)?;
    if chain.run.is_some() {
        a.mov(rax, qword_ptr(r15 + CTX_RUNS_LEN))?;
        a.cmp(rax, qword_ptr(r15 + CTX_RUNS_CAP))?;
        a.jae(not_entered)?;
    }
    if chain.events {
        let n = ops
            .iter()
            .filter(|op| accesses_memory(op.kind) && wants.contains(op.class))
            .count()
            .max(1);
        a.lea(rax, qword_ptr(r14 + (n * EV_SIZE) as i32))?;
        a.cmp(rax, qword_ptr(r15 + CTX_EV_END))?;
        a.ja(not_entered)?;
    }
    a.sub(qword_ptr(r15 + CTX_BUDGET), rcx)?;
    a.mov(dword_ptr(r15 + CTX_BI), chain.idx)?;
    a.mov(rax, chain.count as u64)?;
    a.inc(qword_ptr(rax))?;
    if let Some(run) = chain.run {
        a.mov(rax, qword_ptr(r15 + CTX_RUNS_LEN))?;
        a.mov(rdx, qword_ptr(r15 + CTX_RUNS))?;
        a.mov(rcx, run.block as u64 | (run.len as u64) << 32)?;
        a.mov(qword_ptr(rdx + rax * 8), rcx)?;
        a.inc(qword_ptr(r15 + CTX_RUNS_LEN))?;
    }

    a.set_label(&mut body)?;
    let mut ended = false;
    for (i, op) in ops.iter().enumerate() {
        // Only a load, a store, an atomic op or a floating-point op
        // leaves before its op.
        let bail = a.create_label();
        let called = is_float_compute(op.kind) && !is_float_move(op.kind);
        if accesses_memory(op.kind) || called {
            bails.push((bail, i as u32));
        }
        if called {
            float_ops.push(Box::new(*op));
            // The box's address, which stays put while the list grows.
            let copy: *const Op = &**float_ops.last().expect("just pushed");
            if fast_floats && float::has_fast_path(op) {
                // The call out of line, for what the fast path leaves.
                let slow = a.create_label();
                let mut done = a.create_label();
                float::fast_path(&mut a, op, slow, done)?;
                a.set_label(&mut done)?;
                slows.push((slow, done, copy, bail));
            } else {
                float_call(&mut a, copy, bail)?;
            }
            continue;
        }
        let ways = Ways {
            links,
            slots,
            target,
            jumps: chain.jumps,
            unlinked: &mut unlinked,
            len: len as u32,
            out,
        };
        ended = op_code(&mut a, op, wants, bail, ways)?;
    }
    if !ended {
        // The ops covered end before the block does (the interpreter
        // runs the rest), or the block ends without a transfer.
        let covered = ops.len();
        if covered == len {
            let next = ops[covered - 1].next_pc();
            exit(
                &mut a,
                links[1],
                slots[1],
                &mut unlinked[1],
                next,
                len as u32,
                out,
            )?;
        } else {
            a.mov(eax, covered as u32)?;
            a.jmp(out)?;
        }
    }
    a.set_label(&mut not_entered)?;
    set_pc(&mut a, ops[0].pc)?;
    a.mov(eax, NOT_ENTERED)?;
    a.jmp(out)?;
    for (mut slow, done, op, bail) in slows {
        a.set_label(&mut slow)?;
        float_call(&mut a, op, bail)?;
        a.jmp(done)?;
    }
    for (mut l, i) in bails {
        a.set_label(&mut l)?;
        a.mov(eax, i)?;
        a.jmp(out)?;
    }
    a.set_label(&mut out)?;
    regs::store_all(&mut a)?;
    a.mov(qword_ptr(r15 + CTX_EV), r14)?;
    a.pop(r15)?;
    a.pop(r14)?;
    a.pop(r13)?;
    a.pop(r12)?;
    a.pop(rbx)?;
    a.ret()?;
    let r = super::encode::encode(a.instructions())?;
    // The unit tests check every translation they make against iced's
    // own block encoder.
    #[cfg(test)]
    super::encode::check_against_block_encoder(&mut a, &r);
    let mut exits = [0u64; 2];
    for w in 0..2 {
        if links[w] {
            exits[w] = r.label_offset(&unlinked[w])?;
        }
    }
    Ok(Translation {
        chained_entry: r.label_offset(&chained)?,
        bytes: r.bytes,
        exits,
    })
}

/// What an op that leaves the block needs: per way out, whether it may
/// be linked, its header word and its exit to the loop; the block's
/// length; the epilogue.
struct Ways<'a> {
    links: [bool; 2],
    slots: [CodeLabel; 2],
    /// The header word of the target a `jalr`'s way 0 was linked for.
    target: CodeLabel,
    /// The jump cache ([`Chain::jumps`]).
    jumps: *const Jump,
    unlinked: &'a mut [CodeLabel; 2],
    len: u32,
    out: CodeLabel,
}

fn set_pc(a: &mut CodeAssembler, pc: u64) -> Result<(), IcedError> {
    if fits32(pc as i64) {
        a.mov(qword_ptr(r15 + CTX_PC), pc as i64 as i32)
    } else {
        a.mov(rcx, pc)?;
        a.mov(qword_ptr(r15 + CTX_PC), rcx)
    }
}

/// The address `x[rs1] + imm` into rax, and a leave to `bail` unless it
/// is in the guest range, its `n` bytes on one page, and the page's
/// permissions masked by `mask` are `want`.
pub(super) fn address(
    a: &mut CodeAssembler,
    op: &Op,
    n: u32,
    mask: u32,
    want: u32,
    bail: CodeLabel,
) -> Result<(), IcedError> {
    get(a, rax, op.rs1)?;
    if op.imm != 0 {
        a.add(rax, op.imm as i32)?;
    }
    a.mov(rdx, rax)?;
    a.shr(rdx, PAGE.trailing_zeros())?;
    a.cmp(rdx, (LIMIT / PAGE) as i32)?;
    a.jae(bail)?;
    a.movzx(edx, byte_ptr(r13 + rdx))?;
    a.and(edx, mask)?;
    a.cmp(edx, want)?;
    a.jne(bail)?;
    if n > 1 {
        a.mov(edx, eax)?;
        a.and(edx, (PAGE - 1) as u32)?;
        a.cmp(edx, PAGE as u32 - n)?;
        a.ja(bail)?;
    }
    Ok(())
}

/// A division or remainder (M §7.2), which never traps: by zero the
/// quotient is all ones and the remainder the dividend; the signed
/// overflow (the most negative value by −1) gives the dividend and 0
/// (Table 7.1). x86's `div` and `idiv` trap on both, so both are taken
/// apart first (a division by −1 is a negation). The `*w` forms work on
/// the low words and sign-extend the result.
fn division(a: &mut CodeAssembler, op: &Op) -> Result<(), IcedError> {
    use Kind::*;
    let word = matches!(op.kind, Divw | Divuw | Remw | Remuw);
    let signed = matches!(op.kind, Div | Rem | Divw | Remw);
    let remainder = matches!(op.kind, Rem | Remu | Remw | Remuw);
    let mut by_zero = a.create_label();
    let mut divide = a.create_label();
    let mut done = a.create_label();
    if word {
        get32(a, eax, op.rs1)?;
        get32(a, ecx, op.rs2)?;
        a.test(ecx, ecx)?;
    } else {
        get(a, rax, op.rs1)?;
        get(a, rcx, op.rs2)?;
        a.test(rcx, rcx)?;
    }
    // A remainder by zero is the dividend, already in rax (eax).
    a.je(if remainder { done } else { by_zero })?;
    if signed {
        if word {
            a.cmp(ecx, -1)?;
        } else {
            a.cmp(rcx, -1)?;
        }
        a.jne(divide)?;
        match (remainder, word) {
            (true, _) => a.xor(eax, eax)?,
            (false, true) => a.neg(eax)?,
            (false, false) => a.neg(rax)?,
        }
        a.jmp(done)?;
    }
    a.set_label(&mut divide)?;
    match (signed, word) {
        (true, true) => {
            a.cdq()?;
            a.idiv(ecx)?;
        }
        (true, false) => {
            a.cqo()?;
            a.idiv(rcx)?;
        }
        (false, true) => {
            a.xor(edx, edx)?;
            a.div(ecx)?;
        }
        (false, false) => {
            a.xor(edx, edx)?;
            a.div(rcx)?;
        }
    }
    if remainder {
        a.mov(rax, rdx)?;
    }
    if !remainder {
        a.jmp(done)?;
        a.set_label(&mut by_zero)?;
        a.mov(rax, -1i64)?;
    }
    a.set_label(&mut done)?;
    if word {
        a.movsxd(rax, eax)?;
    }
    put(a, op.rd, rax)
}

/// A call of [`exec_float`] for `op` (F §11, D §12), which leaves to
/// `bail` when the op's rounding mode is reserved: the interpreter then
/// raises the illegal instruction. The stack is 16-byte aligned here
/// (the entry's return address and five pushes); the held guest
/// registers go home before the call and come back after it, and no
/// other value lives in a register the call may change.
fn float_call(a: &mut CodeAssembler, op: *const Op, bail: CodeLabel) -> Result<(), IcedError> {
    regs::store_all(a)?;
    a.mov(rdi, qword_ptr(r15 + CTX_CPU))?;
    a.mov(rsi, op as u64)?;
    a.mov(
        rax,
        float_op as extern "sysv64" fn(*mut Cpu, *const Op) -> bool as usize as u64,
    )?;
    a.call(rax)?;
    regs::load_all(a)?;
    a.test(al, al)?;
    a.je(bail)
}

/// Sets `x[rd]` to 1 if the compare before found its first operand less than
/// the second (`signed` or not), else 0.
fn set_less(a: &mut CodeAssembler, signed: bool, rd: u8) -> Result<(), IcedError> {
    if signed {
        a.setl(al)?;
    } else {
        a.setb(al)?;
    }
    a.movzx(eax, al)?;
    put(a, rd, rax)
}

/// The `n` bytes at guest address rax into rcx, zero-extended.
pub(super) fn load_rcx(a: &mut CodeAssembler, n: u32) -> Result<(), IcedError> {
    match n {
        1 => a.movzx(ecx, byte_ptr(r12 + rax)),
        2 => a.movzx(ecx, word_ptr(r12 + rax)),
        4 => a.mov(ecx, dword_ptr(r12 + rax)),
        _ => a.mov(rcx, qword_ptr(r12 + rax)),
    }
}

/// The load event of `op`, of `n` bytes at rax whose value is in rcx,
/// when `wants` asks for loads.
pub(super) fn load_event(
    a: &mut CodeAssembler,
    op: &Op,
    n: u32,
    wants: ClassSet,
) -> Result<(), IcedError> {
    if wants.contains(Class::Load) {
        event(a, op.pc, event_word(Event::load(op.pc, 0, n as u8, 0), op))?;
    }
    Ok(())
}

/// Stores the low `n` bytes of rcx at guest address rax, with `op`'s
/// store event of them (zero-extended) when `wants` asks for stores.
pub(super) fn store_rcx(
    a: &mut CodeAssembler,
    op: &Op,
    n: u32,
    wants: ClassSet,
) -> Result<(), IcedError> {
    match n {
        1 => a.mov(byte_ptr(r12 + rax), cl)?,
        2 => a.mov(word_ptr(r12 + rax), cx)?,
        4 => a.mov(dword_ptr(r12 + rax), ecx)?,
        _ => a.mov(qword_ptr(r12 + rax), rcx)?,
    }
    if wants.contains(Class::Store) {
        match n {
            1 => a.movzx(ecx, cl)?,
            2 => a.movzx(ecx, cx)?,
            4 => a.mov(ecx, ecx)?,
            _ => {}
        }
        event(a, op.pc, event_word(Event::store(op.pc, 0, n as u8, 0), op))?;
    }
    Ok(())
}

/// Writes an event at r14 and moves r14 on: `pc`, the address in rax, the
/// value in rcx, and `word`.
pub(super) fn event(a: &mut CodeAssembler, pc: u64, word: u32) -> Result<(), IcedError> {
    if fits32(pc as i64) {
        a.mov(qword_ptr(r14 + EV_PC), pc as i64 as i32)?;
    } else {
        a.mov(rdx, pc)?;
        a.mov(qword_ptr(r14 + EV_PC), rdx)?;
    }
    a.mov(qword_ptr(r14 + EV_ADDR), rax)?;
    a.mov(qword_ptr(r14 + EV_VALUE), rcx)?;
    a.mov(dword_ptr(r14 + EV_CLASS), word)?;
    a.add(r14, EV_SIZE as i32)
}

/// One op's code. Returns whether it left the translation (a transfer of
/// control, which ends the block).
fn op_code(
    a: &mut CodeAssembler,
    op: &Op,
    wants: ClassSet,
    bail: CodeLabel,
    w: Ways<'_>,
) -> Result<bool, IcedError> {
    let (len, out) = (w.len, w.out);
    use Kind::*;
    let (rd, rs1, rs2) = (op.rd, op.rs1, op.rs2);
    let imm = op.imm as i32;
    match op.kind {
        Li => {
            a.mov(rax, op.imm as u64)?;
            put(a, rd, rax)?;
        }
        Addi | Xori | Ori | Andi => {
            get(a, rax, rs1)?;
            match op.kind {
                Addi => a.add(rax, imm)?,
                Xori => a.xor(rax, imm)?,
                Ori => a.or(rax, imm)?,
                _ => a.and(rax, imm)?,
            }
            put(a, rd, rax)?;
        }
        Slti | Sltiu => {
            get(a, rax, rs1)?;
            a.cmp(rax, imm)?;
            set_less(a, op.kind == Slti, rd)?;
        }
        Slli | Srli | Srai => {
            let s = (op.imm & 63) as u32;
            get(a, rax, rs1)?;
            match op.kind {
                Slli => a.shl(rax, s)?,
                Srli => a.shr(rax, s)?,
                _ => a.sar(rax, s)?,
            }
            put(a, rd, rax)?;
        }
        Addiw | Slliw | Srliw | Sraiw => {
            get32(a, eax, rs1)?;
            let s = (op.imm & 31) as u32;
            match op.kind {
                Addiw => a.add(eax, imm)?,
                Slliw => a.shl(eax, s)?,
                Srliw => a.shr(eax, s)?,
                _ => a.sar(eax, s)?,
            }
            a.movsxd(rax, eax)?;
            put(a, rd, rax)?;
        }
        Add | Sub | Xor | Or | And | Mul => {
            get(a, rax, rs1)?;
            match op.kind {
                Add => with_x!(a, add, rax, rs2)?,
                Sub => with_x!(a, sub, rax, rs2)?,
                Xor => with_x!(a, xor, rax, rs2)?,
                Or => with_x!(a, or, rax, rs2)?,
                And => with_x!(a, and, rax, rs2)?,
                _ => with_x!(a, imul_2, rax, rs2)?,
            }
            put(a, rd, rax)?;
        }
        Sll | Srl | Sra => {
            // x86 masks a 64-bit shift's count to 6 bits, as RV64 does.
            get(a, rax, rs1)?;
            get(a, rcx, rs2)?;
            match op.kind {
                Sll => a.shl(rax, cl)?,
                Srl => a.shr(rax, cl)?,
                _ => a.sar(rax, cl)?,
            }
            put(a, rd, rax)?;
        }
        Slt | Sltu => {
            get(a, rax, rs1)?;
            with_x!(a, cmp, rax, rs2)?;
            set_less(a, op.kind == Slt, rd)?;
        }
        Addw | Subw | Mulw => {
            get32(a, eax, rs1)?;
            match op.kind {
                Addw => with_x32!(a, add, eax, rs2)?,
                Subw => with_x32!(a, sub, eax, rs2)?,
                _ => with_x32!(a, imul_2, eax, rs2)?,
            }
            a.movsxd(rax, eax)?;
            put(a, rd, rax)?;
        }
        Sllw | Srlw | Sraw => {
            // A 32-bit shift's count is masked to 5 bits, as RV64's *w.
            get32(a, eax, rs1)?;
            get(a, rcx, rs2)?;
            match op.kind {
                Sllw => a.shl(eax, cl)?,
                Srlw => a.shr(eax, cl)?,
                _ => a.sar(eax, cl)?,
            }
            a.movsxd(rax, eax)?;
            put(a, rd, rax)?;
        }
        Mulh | Mulhu | Mulhsu => {
            get(a, rax, rs1)?;
            if op.kind == Mulh {
                on_x!(a, imul, rs2)?;
            } else {
                on_x!(a, mul, rs2)?;
            }
            if op.kind == Mulhsu {
                // Signed times unsigned: the unsigned product's high half,
                // less rs2 when rs1 is negative.
                get(a, rcx, rs1)?;
                a.sar(rcx, 63)?;
                with_x!(a, and, rcx, rs2)?;
                a.sub(rdx, rcx)?;
            }
            put(a, rd, rdx)?;
        }
        Csrrw | Csrrs | Csrrc | Csrrwi | Csrrsi | Csrrci => float::csr(a, op)?,
        Div | Divu | Rem | Remu | Divw | Divuw | Remw | Remuw => division(a, op)?,
        bit_manip!() => bits::code(a, op)?,
        Fence => {}
        FmvXD => {
            a.mov(rax, fr(rs1))?;
            put(a, rd, rax)?;
        }
        FmvDX => {
            get(a, rax, rs1)?;
            a.mov(fr(rd), rax)?;
        }
        FsgnjD | FsgnjnD | FsgnjxD => {
            // The sign from rs2 (negated, or xored with rs1's), the rest
            // from rs1 (D §12.5 via F §11.6).
            const SIGN: u64 = 1 << 63;
            a.mov(rax, fr(rs1))?;
            a.mov(rcx, fr(rs2))?;
            if op.kind == FsgnjnD {
                a.not(rcx)?;
            }
            a.mov(rdx, SIGN)?;
            a.and(rcx, rdx)?;
            if op.kind != FsgnjxD {
                a.btr(rax, 63)?;
                a.or(rax, rcx)?;
            } else {
                a.xor(rax, rcx)?;
            }
            a.mov(fr(rd), rax)?;
        }
        Lb | Lh | Lw | Ld | Lbu | Lhu | Lwu | Flw | Fld => {
            let n = match op.kind {
                Lb | Lbu => 1,
                Lh | Lhu => 2,
                Lw | Lwu | Flw => 4,
                _ => 8,
            };
            address(a, op, n, perm::R as u32, perm::R as u32, bail)?;
            load_rcx(a, n)?;
            match op.kind {
                Lb => a.movsx(rdx, cl)?,
                Lh => a.movsx(rdx, cx)?,
                Lw => a.movsxd(rdx, ecx)?,
                // NaN-boxed (§12.2).
                Flw => {
                    a.mov(rdx, 0xffff_ffff_0000_0000u64)?;
                    a.or(rdx, rcx)?;
                }
                _ => a.mov(rdx, rcx)?,
            }
            if matches!(op.kind, Flw | Fld) {
                a.mov(fr(rd), rdx)?;
            } else {
                put(a, rd, rdx)?;
            }
            load_event(a, op, n, wants)?;
        }
        Sb | Sh | Sw | Sd | Fsw | Fsd => {
            let n = match op.kind {
                Sb => 1,
                Sh => 2,
                Sw | Fsw => 4,
                _ => 8,
            };
            // Writable and not code: a store to code is the
            // interpreter's, which drops the code it decoded.
            address(a, op, n, (perm::W | perm::X) as u32, perm::W as u32, bail)?;
            if matches!(op.kind, Fsw | Fsd) {
                a.mov(rcx, fr(rs2))?;
            } else {
                get(a, rcx, rs2)?;
            }
            store_rcx(a, op, n, wants)?;
        }
        k if atomic::is_atomic(k) => atomic::atomic(a, op, wants, bail)?,
        Beq | Bne | Blt | Bge | Bltu | Bgeu => {
            let mut taken = a.create_label();
            get(a, rax, rs1)?;
            with_x!(a, cmp, rax, rs2)?;
            match op.kind {
                Beq => a.je(taken)?,
                Bne => a.jne(taken)?,
                Blt => a.jl(taken)?,
                Bge => a.jge(taken)?,
                Bltu => a.jb(taken)?,
                _ => a.jae(taken)?,
            }
            let [u0, u1] = w.unlinked;
            exit(a, w.links[1], w.slots[1], u1, op.next_pc(), len, out)?;
            a.set_label(&mut taken)?;
            exit(a, w.links[0], w.slots[0], u0, op.imm as u64, len, out)?;
            return Ok(true);
        }
        Jal => {
            a.mov(rax, op.next_pc())?;
            put(a, rd, rax)?;
            exit(
                a,
                w.links[0],
                w.slots[0],
                &mut w.unlinked[0],
                op.imm as u64,
                len,
                out,
            )?;
            return Ok(true);
        }
        Jalr => {
            // The target before the link: rd may be rs1.
            get(a, rdx, rs1)?;
            a.mov(rcx, op.imm as u64)?;
            a.add(rdx, rcx)?;
            a.and(rdx, -2)?;
            a.mov(qword_ptr(r15 + CTX_PC), rdx)?;
            a.mov(rax, op.next_pc())?;
            put(a, rd, rax)?;
            // On to the block linked for this target, if it is the one;
            // else to the one the jump cache holds for it, if any; else
            // back to the loop, which may link it instead.
            let unlinked = &mut w.unlinked[0];
            if w.links[0] {
                a.cmp(rdx, qword_ptr(w.target))?;
                a.jne(*unlinked)?;
                chain_on(a, qword_ptr(w.slots[0]), *unlinked, len)?;
            }
            a.set_label(unlinked)?;
            if w.links[0] {
                // The target's slot in the jump cache, as `jump_slot`
                // finds it.
                let mut back = a.create_label();
                a.mov(rax, rdx)?;
                a.shr(rax, 1)?;
                a.and(eax, (JUMPS - 1) as u32)?;
                a.shl(eax, std::mem::size_of::<Jump>().trailing_zeros())?;
                a.mov(rcx, w.jumps as u64)?;
                a.add(rax, rcx)?;
                a.cmp(rdx, qword_ptr(rax + std::mem::offset_of!(Jump, pc) as i32))?;
                a.jne(back)?;
                a.mov(
                    rax,
                    qword_ptr(rax + std::mem::offset_of!(Jump, entry) as i32),
                )?;
                chain_on(a, rax, back, len)?;
                a.set_label(&mut back)?;
            }
            a.mov(eax, len)?;
            a.jmp(out)?;
            return Ok(true);
        }
        _ => unreachable!("not translatable: {:?}", op.kind),
    }
    Ok(false)
}
