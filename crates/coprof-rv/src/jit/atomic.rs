//! The A extension translated (RISC-V unprivileged spec, A §8): the
//! AMOs, LR and SC as host code, the interpreter's `exec_block` for one
//! hart at a time.
//!
//! Guest threads take turns on the one hart, and a turn ends between
//! blocks, so an AMO is a load and a store with nothing in between, as
//! in the interpreter. What the translation leaves to the interpreter,
//! by going back to it before the op: a misaligned address (the
//! interpreter stops with the misaligned-access exception), a page that
//! faults, a page of code (a store there drops the code decoded from
//! it), and a page of shared memory, where another process may write at
//! the same time and the interpreter uses the host's atomic operations.

use super::regs::{get, put};
use super::x86::{address, event, event_word, load_event, load_rcx, store_rcx};
use crate::cpu::Cpu;
use crate::mem::perm;
use crate::op::{Kind, Op};
use coprof_core::{Class, ClassSet, Event};
use iced_x86::code_asm::*;
use iced_x86::IcedError;
use std::mem::offset_of;

/// Where [`Cpu::reservation`] is from [`Cpu::x`], which rbx holds.
const RESERVATION_FROM_X: i32 = offset_of!(Cpu, reservation) as i32 - offset_of!(Cpu, x) as i32;
/// Where [`Cpu::reserved_value`] is from [`Cpu::x`].
const RESERVED_VALUE_FROM_X: i32 =
    offset_of!(Cpu, reserved_value) as i32 - offset_of!(Cpu, x) as i32;

/// The page permissions an AMO or SC takes (of a mask, the value they
/// must have): readable and writable, not code, not shared.
const READ_WRITE: (u32, u32) = (
    (perm::R | perm::W | perm::X | perm::SHARED) as u32,
    (perm::R | perm::W) as u32,
);
/// The page permissions an LR takes: readable and not shared. An LR of
/// shared memory reads it as any load does, but stays the interpreter's
/// with the SC it pairs with; it may read code.
const READ: (u32, u32) = ((perm::R | perm::SHARED) as u32, perm::R as u32);

/// Whether `kind` is an AMO, LR or SC.
pub(super) fn is_atomic(kind: Kind) -> bool {
    use Kind::*;
    matches!(
        kind,
        LrW | LrD
            | ScW
            | ScD
            | AmoswapW
            | AmoaddW
            | AmoxorW
            | AmoandW
            | AmoorW
            | AmominW
            | AmomaxW
            | AmominuW
            | AmomaxuW
            | AmoswapD
            | AmoaddD
            | AmoxorD
            | AmoandD
            | AmoorD
            | AmominD
            | AmomaxD
            | AmominuD
            | AmomaxuD
    )
}

/// Bytes of the word `kind` accesses: 4 or 8.
fn width(kind: Kind) -> u32 {
    use Kind::*;
    match kind {
        LrW | ScW | AmoswapW | AmoaddW | AmoxorW | AmoandW | AmoorW | AmominW | AmomaxW
        | AmominuW | AmomaxuW => 4,
        _ => 8,
    }
}

/// The address in rs1, in rax, with a jump to `bail` unless it is
/// aligned to `n` and its page's permissions, of `mask`, are `want`.
fn checked_address(
    a: &mut CodeAssembler,
    op: &Op,
    n: u32,
    (mask, want): (u32, u32),
    bail: CodeLabel,
) -> Result<(), IcedError> {
    debug_assert_eq!(op.imm, 0, "an atomic op has no offset");
    address(a, op, n, mask, want, bail)?;
    a.test(eax, n - 1)?;
    a.jne(bail)
}

/// One AMO, LR or SC ([`is_atomic`]), with the event the interpreter
/// makes for it when `wants` asks: a load of the old word for an AMO and
/// an LR, a store for an SC (of no bytes when it fails).
pub(super) fn atomic(
    a: &mut CodeAssembler,
    op: &Op,
    wants: ClassSet,
    bail: CodeLabel,
) -> Result<(), IcedError> {
    match op.kind {
        Kind::LrW | Kind::LrD => load_reserved(a, op, wants, bail),
        Kind::ScW | Kind::ScD => store_conditional(a, op, wants, bail),
        _ => amo(a, op, wants, bail),
    }
}

/// rd gets the word in rcx (a word sign-extended), by way of rdx.
fn put_loaded(a: &mut CodeAssembler, op: &Op, n: u32) -> Result<(), IcedError> {
    if n == 4 {
        a.movsxd(rdx, ecx)?;
    } else {
        a.mov(rdx, rcx)?;
    }
    put(a, op.rd, rdx)
}

/// An AMO (A §8.4): rd gets the old word, the word gets the op of the
/// old word and rs2.
fn amo(a: &mut CodeAssembler, op: &Op, wants: ClassSet, bail: CodeLabel) -> Result<(), IcedError> {
    use Kind::*;
    let n = width(op.kind);
    checked_address(a, op, n, READ_WRITE, bail)?;
    load_rcx(a, n)?;
    get(a, rdx, op.rs2)?;
    // The new word in rdx, from the old in rcx and rs2 in rdx.
    let word = n == 4;
    match op.kind {
        AmoswapW | AmoswapD => {}
        AmoaddW | AmoaddD => a.add(rdx, rcx)?,
        AmoxorW | AmoxorD => a.xor(rdx, rcx)?,
        AmoandW | AmoandD => a.and(rdx, rcx)?,
        AmoorW | AmoorD => a.or(rdx, rcx)?,
        _ => {
            // min and max, signed or not: the old word where it wins.
            if word {
                a.cmp(ecx, edx)?;
            } else {
                a.cmp(rcx, rdx)?;
            }
            match op.kind {
                AmominW | AmominD => a.cmovl(rdx, rcx)?,
                AmomaxW | AmomaxD => a.cmovg(rdx, rcx)?,
                AmominuW | AmominuD => a.cmovb(rdx, rcx)?,
                _ => a.cmova(rdx, rcx)?,
            }
        }
    }
    if word {
        a.mov(dword_ptr(r12 + rax), edx)?;
    } else {
        a.mov(qword_ptr(r12 + rax), rdx)?;
    }
    put_loaded(a, op, n)?;
    load_event(a, op, n, wants)
}

/// An LR (A §8.2): rd gets the word, and the hart reserves its address
/// and remembers the word (for an SC to shared memory, which is the
/// interpreter's).
fn load_reserved(
    a: &mut CodeAssembler,
    op: &Op,
    wants: ClassSet,
    bail: CodeLabel,
) -> Result<(), IcedError> {
    let n = width(op.kind);
    checked_address(a, op, n, READ, bail)?;
    load_rcx(a, n)?;
    put_loaded(a, op, n)?;
    a.mov(qword_ptr(rbx + RESERVATION_FROM_X), rax)?;
    a.mov(qword_ptr(rbx + RESERVED_VALUE_FROM_X), rcx)?;
    load_event(a, op, n, wants)
}

/// An SC (A §8.2): if the hart holds a reservation of the address, the
/// word gets rs2 and rd 0; else nothing is stored and rd gets 1. Either
/// way the reservation is gone.
fn store_conditional(
    a: &mut CodeAssembler,
    op: &Op,
    wants: ClassSet,
    bail: CodeLabel,
) -> Result<(), IcedError> {
    let n = width(op.kind);
    let mut failed = a.create_label();
    let mut done = a.create_label();
    // A misaligned address is the interpreter's, reserved or not; so is
    // one on a page that is not plain writable memory, where the
    // interpreter fails the SC without a reservation as this code would.
    checked_address(a, op, n, READ_WRITE, bail)?;
    a.cmp(rax, qword_ptr(rbx + RESERVATION_FROM_X))?;
    a.jne(failed)?;
    get(a, rcx, op.rs2)?;
    store_rcx(a, op, n, wants)?;
    a.xor(edx, edx)?;
    a.jmp(done)?;
    a.set_label(&mut failed)?;
    if wants.contains(Class::Store) {
        // A failed SC retires too: a store of no bytes.
        a.xor(ecx, ecx)?;
        event(a, op.pc, event_word(Event::store(op.pc, 0, 0, 0), op))?;
    }
    a.mov(edx, 1)?;
    // The code after a label must not be empty: the reservation is
    // cleared last.
    a.set_label(&mut done)?;
    put(a, op.rd, rdx)?;
    a.mov(rcx, Cpu::NO_RESERVATION)?;
    a.mov(qword_ptr(rbx + RESERVATION_FROM_X), rcx)
}
