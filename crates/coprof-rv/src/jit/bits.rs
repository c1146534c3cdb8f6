//! Translation of the bit-manipulation ops of Zba, Zbb, Zbc and Zbs
//! (RISC-V Bit-Manipulation ISA-extensions 1.0.0, §1.4) to x86-64 code.
//!
//! Each op is a few host instructions on the scratch registers, from
//! the x86-64 baseline where one exists: shifts and adds for the address
//! ops, `bsr` and `bsf` under a conditional move for the counts of zeros
//! (a zero source leaves their destination undefined, and the move puts
//! the register's width there instead), conditional moves for minimum and
//! maximum, `bswap`, the rotations, and `bt*` for single bits, whose
//! register index x86 takes modulo 64 as RV64 does. `cpop` needs
//! `popcnt`, which the x86-64 baseline lacks, and Zbc's carry-less
//! products `pclmulqdq` (with AVX): on a host without them those ops are
//! left to the interpreter.

use super::regs::{get, get32, put, with_x};
use crate::op::{bit_manip, Kind, Op};
use iced_x86::code_asm::*;
use iced_x86::IcedError;

/// Whether the translator takes `kind`, one of Zba's, Zbb's, Zbc's or
/// Zbs's ops, on this host.
pub(super) fn translates(kind: Kind) -> bool {
    use std::arch::is_x86_feature_detected as has;
    match kind {
        Kind::Cpop | Kind::Cpopw => has!("popcnt"),
        Kind::Clmul | Kind::Clmulh | Kind::Clmulr => has!("pclmulqdq") && has!("avx"),
        k => matches!(k, bit_manip!()),
    }
}

/// The code of `op`, one of Zba's, Zbb's, Zbc's or Zbs's ops that
/// [`translates`] takes: its result in rax, then in rd.
pub(super) fn code(a: &mut CodeAssembler, op: &Op) -> Result<(), IcedError> {
    use Kind::*;
    let (rs1, rs2) = (op.rs1, op.rs2);
    let shamt = (op.imm & 63) as u32;
    match op.kind {
        Sh1add | Sh2add | Sh3add | AddUw | Sh1addUw | Sh2addUw | Sh3addUw => {
            let scale = match op.kind {
                Sh1add | Sh1addUw => 1,
                Sh2add | Sh2addUw => 2,
                Sh3add | Sh3addUw => 3,
                _ => 0,
            };
            if matches!(op.kind, Sh1add | Sh2add | Sh3add) {
                get(a, rax, rs1)?;
            } else {
                // The low word, zero-extended by the 32-bit move.
                get32(a, eax, rs1)?;
            }
            if scale != 0 {
                a.shl(rax, scale)?;
            }
            with_x!(a, add, rax, rs2)?;
        }
        SlliUw => {
            get32(a, eax, rs1)?;
            a.shl(rax, shamt)?;
        }
        Andn | Orn => {
            get(a, rax, rs2)?;
            a.not(rax)?;
            if op.kind == Andn {
                with_x!(a, and, rax, rs1)?;
            } else {
                with_x!(a, or, rax, rs1)?;
            }
        }
        Xnor => {
            get(a, rax, rs1)?;
            with_x!(a, xor, rax, rs2)?;
            a.not(rax)?;
        }
        // The highest set bit's index i gives 63 - i = i ^ 63 leading
        // zeros; 127 ^ 63 is the 64 of a zero register. A word likewise.
        Clz => {
            get(a, rax, rs1)?;
            a.mov(ecx, 127)?;
            a.bsr(rax, rax)?;
            a.cmove(rax, rcx)?;
            a.xor(eax, 63)?;
        }
        Clzw => {
            get32(a, eax, rs1)?;
            a.mov(ecx, 63)?;
            a.bsr(eax, eax)?;
            a.cmove(eax, ecx)?;
            a.xor(eax, 31)?;
        }
        Ctz => {
            get(a, rax, rs1)?;
            a.mov(ecx, 64)?;
            a.bsf(rax, rax)?;
            a.cmove(rax, rcx)?;
        }
        Ctzw => {
            get32(a, eax, rs1)?;
            a.mov(ecx, 32)?;
            a.bsf(eax, eax)?;
            a.cmove(eax, ecx)?;
        }
        Cpop => {
            get(a, rax, rs1)?;
            a.popcnt(rax, rax)?;
        }
        Cpopw => {
            get32(a, eax, rs1)?;
            a.popcnt(eax, eax)?;
        }
        Max | Maxu | Min | Minu => {
            get(a, rax, rs1)?;
            get(a, rcx, rs2)?;
            a.cmp(rax, rcx)?;
            match op.kind {
                Max => a.cmovl(rax, rcx)?,
                Maxu => a.cmovb(rax, rcx)?,
                Min => a.cmovg(rax, rcx)?,
                _ => a.cmova(rax, rcx)?,
            }
        }
        SextB | SextH | ZextH => {
            get(a, rax, rs1)?;
            match op.kind {
                SextB => a.movsx(rax, al)?,
                SextH => a.movsx(rax, ax)?,
                _ => a.movzx(eax, ax)?,
            }
        }
        // x86 takes a 64-bit rotation's count modulo 64 and a 32-bit
        // one's modulo 32, as RV64's rotations do.
        Rol | Ror => {
            get(a, rax, rs1)?;
            get(a, rcx, rs2)?;
            if op.kind == Rol {
                a.rol(rax, cl)?;
            } else {
                a.ror(rax, cl)?;
            }
        }
        Rori => {
            get(a, rax, rs1)?;
            a.ror(rax, shamt)?;
        }
        Rolw | Rorw => {
            get32(a, eax, rs1)?;
            get(a, rcx, rs2)?;
            if op.kind == Rolw {
                a.rol(eax, cl)?;
            } else {
                a.ror(eax, cl)?;
            }
            a.movsxd(rax, eax)?;
        }
        Roriw => {
            get32(a, eax, rs1)?;
            a.ror(eax, shamt & 31)?;
            a.movsxd(rax, eax)?;
        }
        OrcB => {
            // Per byte: its low seven bits plus 0x7f carry into its top
            // bit when any is set, and never into the next byte; or'd
            // with the byte's own top bit, that bit says the byte is
            // not zero, and times 0xff fills the byte.
            get(a, rax, rs1)?;
            a.mov(rdx, rax)?;
            a.mov(rcx, 0x7f7f_7f7f_7f7f_7f7fu64)?;
            a.and(rax, rcx)?;
            a.add(rax, rcx)?;
            a.or(rax, rdx)?;
            a.not(rcx)?;
            a.and(rax, rcx)?;
            a.shr(rax, 7)?;
            a.imul_3(rax, rax, 0xff)?;
        }
        Rev8 => {
            get(a, rax, rs1)?;
            a.bswap(rax)?;
        }
        // The 128-bit product in xmm0 (VEX forms, as the floating-point
        // translations use): its low half, its high half, or the bits
        // from 63 up.
        Clmul | Clmulh | Clmulr => {
            get(a, rax, rs1)?;
            a.vmovq(xmm0, rax)?;
            get(a, rax, rs2)?;
            a.vmovq(xmm1, rax)?;
            a.vpclmulqdq(xmm0, xmm0, xmm1, 0)?;
            match op.kind {
                Clmul => a.vmovq(rax, xmm0)?,
                Clmulh => a.vpextrq(rax, xmm0, 1)?,
                _ => {
                    a.vmovq(rax, xmm0)?;
                    a.vpextrq(rcx, xmm0, 1)?;
                    a.shr(rax, 63)?;
                    a.shl(rcx, 1)?;
                    a.or(rax, rcx)?;
                }
            }
        }
        Bclr | Bset | Binv => {
            get(a, rax, rs1)?;
            get(a, rcx, rs2)?;
            match op.kind {
                Bclr => a.btr(rax, rcx)?,
                Bset => a.bts(rax, rcx)?,
                _ => a.btc(rax, rcx)?,
            }
        }
        Bclri | Bseti | Binvi => {
            get(a, rax, rs1)?;
            match op.kind {
                Bclri => a.btr(rax, shamt)?,
                Bseti => a.bts(rax, shamt)?,
                _ => a.btc(rax, shamt)?,
            }
        }
        Bext | Bexti => {
            get(a, rax, rs1)?;
            if op.kind == Bext {
                get(a, rcx, rs2)?;
                a.shr(rax, cl)?;
            } else {
                a.shr(rax, shamt)?;
            }
            a.and(eax, 1)?;
        }
        _ => unreachable!("{:?} is not a bit-manipulation op", op.kind),
    }
    put(a, op.rd, rax)
}
