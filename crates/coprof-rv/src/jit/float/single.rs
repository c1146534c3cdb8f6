//! The single-precision fast paths (F §11): see [`super`]. An operand is
//! read only if it is NaN-boxed (D §12.2: its upper 32 bits all ones);
//! one that is not is the canonical NaN to the op, which the call gives.
//! Results are written NaN-boxed.

use super::both::Precision;
use super::Format::{Double as D, Single as S};
use super::{
    fma_signs, inexact_if_mask, inexact_unless_equal, inexact_unless_zero, known_inexact, negate,
    range, range_unless_zero, BIG2, INF2,
};
use crate::jit::regs::{get32, put};
use crate::jit::x86::{fr, F_FROM_X};
use crate::op::{Kind, Op};
use iced_x86::code_asm::*;
use iced_x86::IcedError;

/// The single-precision instructions of the shared fast paths.
pub(super) const SINGLE: Precision = Precision {
    load,
    store,
    truncate64: |a, r, v| a.vcvttss2si(r, v),
    round64: |a, r, v| a.vcvtss2si(r, v),
    convert: |a, v, r| a.vcvtsi2ss(v, v, r),
    compare: |a, x, y| a.vucomiss(x, y),
    subtract: |a, r, x, y| a.vsubss(r, x, y),
    half: 0x3f00_0000,
    minus_half: 0xbf00_0000,
    min: |a, r, x, y| a.vminss(r, x, y),
    max: |a, r, x, y| a.vmaxss(r, x, y),
    sign_bit: 31,
    exp_bits: 8,
    holds_32_bit_integers: false,
};

const SIGN_S: u32 = 1 << 31;
/// Twice the bits of +∞ in single precision (see [`super::INF2`]).
const INF_S2: u64 = 0x7f80_0000 << 1;
/// The interpreter's bounds for singles (`fp::SAFE_S`, and 1e37 for the
/// fused multiply-add), as bits shifted left by one.
const SAFE_S2: u64 = (1.0e-30f32.to_bits() as u64) << 1;
const BIG_S2: u64 = (1.0e37f32.to_bits() as u64) << 1;
/// The bounds of a fused multiply-add's product, in double precision.
const PRODUCT_LO2: u64 = 1.0e-30f64.to_bits() << 1;
const PRODUCT_HI2: u64 = 1.0e37f64.to_bits() << 1;
const _: () = assert!(PRODUCT_HI2 < BIG2 && PRODUCT_HI2 < INF2);

/// The low word of floating-point register `r`, where a single is.
fn fr_low(r: u8) -> AsmMemoryOperand {
    dword_ptr(rbx + F_FROM_X + ((r & 31) as i32) * 8)
}

/// The high word of floating-point register `r`: all ones if it holds a
/// NaN-boxed single.
fn fr_high(r: u8) -> AsmMemoryOperand {
    dword_ptr(rbx + F_FROM_X + ((r & 31) as i32) * 8 + 4)
}

/// The single in register `r` into `v`, or a jump to `slow` if it is not
/// NaN-boxed.
fn load(a: &mut CodeAssembler, v: AsmRegisterXmm, r: u8, slow: CodeLabel) -> Result<(), IcedError> {
    a.cmp(fr_high(r), -1)?;
    a.jne(slow)?;
    a.vmovss(v, fr_low(r))
}

/// The single in `v` into register `rd`, NaN-boxed. Uses rax and rcx.
fn store(a: &mut CodeAssembler, v: AsmRegisterXmm, rd: u8) -> Result<(), IcedError> {
    a.vmovd(eax, v)?;
    boxed_eax_to(a, rd)
}

/// eax's single into register `rd`, NaN-boxed. Uses rax and rcx.
fn boxed_eax_to(a: &mut CodeAssembler, rd: u8) -> Result<(), IcedError> {
    a.mov(rcx, 0xffff_ffff_0000_0000u64)?;
    a.or(rax, rcx)?;
    a.mov(fr(rd), rax)
}

/// `v` widened to a double in `d` (exact).
fn widen(a: &mut CodeAssembler, d: AsmRegisterXmm, v: AsmRegisterXmm) -> Result<(), IcedError> {
    a.vcvtss2sd(d, d, v)
}

/// `fadd.s`, `fsub.s` (`fp::arith_s`): a finite sum, NX from TwoSum in
/// single precision.
pub(super) fn add(
    a: &mut CodeAssembler,
    op: &Op,
    slow: CodeLabel,
    done: CodeLabel,
) -> Result<(), IcedError> {
    load(a, xmm0, op.rs1, slow)?;
    load(a, xmm1, op.rs2, slow)?;
    if op.kind == Kind::FsubS {
        negate(a, S, xmm1, xmm7)?;
    }
    a.vaddss(xmm2, xmm0, xmm1)?;
    range(a, S, xmm2, 0, INF_S2, slow)?;
    store(a, xmm2, op.rd)?;
    known_inexact(a, done)?;
    a.vsubss(xmm3, xmm2, xmm0)?; // bb = r - x
    a.vsubss(xmm4, xmm2, xmm3)?; // r - bb
    a.vsubss(xmm4, xmm0, xmm4)?; // x - (r - bb)
    a.vsubss(xmm3, xmm1, xmm3)?; // y - bb
    a.vaddss(xmm3, xmm4, xmm3)?; // the error
    widen(a, xmm3, xmm3)?;
    inexact_unless_zero(a, xmm3)
}

/// `fmul.s`, `fdiv.s` (`fp::arith_s`): a finite result not near the
/// subnormals (so a finite, non-zero divisor), NX unless the product,
/// exact in double precision, is the result, or the quotient times the
/// divisor, exact too, is the dividend.
pub(super) fn mul_div(
    a: &mut CodeAssembler,
    op: &Op,
    slow: CodeLabel,
    done: CodeLabel,
) -> Result<(), IcedError> {
    let div = op.kind == Kind::FdivS;
    load(a, xmm0, op.rs1, slow)?;
    load(a, xmm1, op.rs2, slow)?;
    if div {
        a.vdivss(xmm2, xmm0, xmm1)?;
    } else {
        a.vmulss(xmm2, xmm0, xmm1)?;
    }
    range(a, S, xmm2, SAFE_S2, INF_S2, slow)?;
    store(a, xmm2, op.rd)?;
    known_inexact(a, done)?;
    // x·y against r, or r·y against x.
    let (p, q, other) = if div {
        (xmm2, xmm1, xmm0)
    } else {
        (xmm0, xmm1, xmm2)
    };
    widen(a, xmm3, p)?;
    widen(a, xmm4, q)?;
    a.vmulsd(xmm3, xmm3, xmm4)?;
    widen(a, xmm5, other)?;
    inexact_unless_equal(a, xmm3, xmm5)
}

/// The fused multiply-adds (`fp::fma_host_s`): the result and a non-zero
/// addend between the bounds, the product (exact in double precision)
/// too; NX unless TwoSum of the product and the addend in double
/// precision is the result with no error.
pub(super) fn fused(
    a: &mut CodeAssembler,
    op: &Op,
    slow: CodeLabel,
    done: CodeLabel,
) -> Result<(), IcedError> {
    let (neg_prod, neg_add) = fma_signs(op.kind);
    let (x, y, z, r) = (xmm0, xmm1, xmm2, xmm3);
    load(a, x, op.rs1, slow)?;
    load(a, y, op.rs2, slow)?;
    load(a, z, op.rs3, slow)?;
    if neg_prod {
        negate(a, S, x, xmm7)?;
    }
    if neg_add {
        negate(a, S, z, xmm7)?;
    }
    a.vmovaps(r, x)?;
    a.vfmadd213ss(r, y, z)?; // x·y + z, rounded once
    range(a, S, r, SAFE_S2, BIG_S2 + 2, slow)?;
    range_unless_zero(a, S, z, SAFE_S2, BIG_S2 + 2, slow)?;
    // The product, exact in double precision.
    let (p, zd, s, e) = (xmm4, xmm5, xmm6, xmm8);
    widen(a, p, x)?;
    widen(a, xmm9, y)?;
    a.vmulsd(p, p, xmm9)?;
    range(a, D, p, PRODUCT_LO2, PRODUCT_HI2 + 2, slow)?;
    store(a, r, op.rd)?;
    known_inexact(a, done)?;
    widen(a, zd, z)?;
    a.vaddsd(s, p, zd)?;
    super::two_sum_error(a, [p, zd, s], [e, xmm10, xmm11])?;
    // Inexact unless s is the result and e is zero.
    widen(a, xmm12, r)?;
    a.vcmpsd(s, s, xmm12, 4)?; // s ≠ r
    a.vxorpd(xmm13, xmm13, xmm13)?;
    a.vcmpsd(e, e, xmm13, 4)?; // e ≠ 0
    a.vorpd(s, s, e)?;
    inexact_if_mask(a, s)
}

/// `fcvt.s.d` (`fp::d_to_s`): a zero, or a single not near the
/// subnormals and finite; NX when it is not the double.
pub(super) fn from_double(
    a: &mut CodeAssembler,
    op: &Op,
    slow: CodeLabel,
    done: CodeLabel,
) -> Result<(), IcedError> {
    a.vmovsd(xmm0, fr(op.rs1))?;
    a.vcvtsd2ss(xmm1, xmm1, xmm0)?;
    let mut exact_zero = a.create_label();
    a.vmovq(rax, xmm0)?;
    a.shl(rax, 1)?;
    a.jz(exact_zero)?;
    range(a, S, xmm1, SAFE_S2, INF_S2, slow)?;
    a.set_label(&mut exact_zero)?;
    store(a, xmm1, op.rd)?;
    known_inexact(a, done)?;
    widen(a, xmm2, xmm1)?;
    inexact_unless_equal(a, xmm2, xmm0)
}

/// `fcvt.d.s` (`fp::s_to_d`): exact for any number; a NaN takes the call.
pub(super) fn to_double(a: &mut CodeAssembler, op: &Op, slow: CodeLabel) -> Result<(), IcedError> {
    load(a, xmm0, op.rs1, slow)?;
    a.vucomiss(xmm0, xmm0)?;
    a.jp(slow)?;
    widen(a, xmm1, xmm0)?;
    a.vmovsd(fr(op.rd), xmm1)
}

/// `fmv.x.w` (the single's bits, sign-extended) and `fmv.w.x` (the low
/// word, NaN-boxed): moves of bits, §11.8.
pub(super) fn mv(a: &mut CodeAssembler, op: &Op) -> Result<(), IcedError> {
    if op.kind == Kind::FmvXW {
        a.movsxd(rax, fr_low(op.rs1))?;
        put(a, op.rd, rax)
    } else {
        get32(a, eax, op.rs1)?;
        boxed_eax_to(a, op.rd)
    }
}

/// `fsgnj.s`, `fsgnjn.s`, `fsgnjx.s` (`fp::sign_inject`) of NaN-boxed
/// operands: `fmv.s`, `fneg.s`, `fabs.s`.
pub(super) fn sign_inject(
    a: &mut CodeAssembler,
    op: &Op,
    slow: CodeLabel,
) -> Result<(), IcedError> {
    a.cmp(fr_high(op.rs1), -1)?;
    a.jne(slow)?;
    a.cmp(fr_high(op.rs2), -1)?;
    a.jne(slow)?;
    a.mov(eax, fr_low(op.rs1))?;
    a.mov(ecx, fr_low(op.rs2))?;
    if op.kind == Kind::FsgnjnS {
        a.not(ecx)?;
    }
    a.and(ecx, SIGN_S as i32)?;
    if op.kind == Kind::FsgnjxS {
        a.xor(eax, ecx)?;
    } else {
        a.and(eax, !SIGN_S as i32)?;
        a.or(eax, ecx)?;
    }
    boxed_eax_to(a, op.rd)
}

/// `fsqrt.s` (`fp::sqrt`) of a positive finite number: NX unless the
/// root squared, exact in double precision, is the number.
pub(super) fn sqrt(
    a: &mut CodeAssembler,
    op: &Op,
    slow: CodeLabel,
    done: CodeLabel,
) -> Result<(), IcedError> {
    load(a, xmm0, op.rs1, slow)?;
    // The raw bits in [1, +∞): positive, finite, not zero.
    a.vmovd(eax, xmm0)?;
    a.sub(eax, 1)?;
    a.cmp(eax, 0x7f80_0000 - 1)?;
    a.jae(slow)?;
    a.vsqrtss(xmm1, xmm1, xmm0)?;
    store(a, xmm1, op.rd)?;
    known_inexact(a, done)?;
    widen(a, xmm2, xmm1)?;
    a.vmulsd(xmm2, xmm2, xmm2)?;
    widen(a, xmm3, xmm0)?;
    inexact_unless_equal(a, xmm2, xmm3)
}
