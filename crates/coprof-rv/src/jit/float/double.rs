//! The double-precision fast paths (D §12): see [`super`].

use super::both::Precision;
use super::Format::Double as D;
use super::{
    fma_signs, inexact_unless_zero, known_inexact, negate, range, range_unless_zero, two_sum_error,
    BIG2, INF2, SAFE2,
};
use crate::jit::x86::fr;
use crate::op::{Kind, Op};
use iced_x86::code_asm::*;
use iced_x86::IcedError;

/// The double-precision instructions of the shared fast paths.
pub(super) const DOUBLE: Precision = Precision {
    load: |a, v, r, _| a.vmovsd(v, fr(r)),
    store: |a, v, rd| a.vmovsd(fr(rd), v),
    truncate64: |a, r, v| a.vcvttsd2si(r, v),
    round64: |a, r, v| a.vcvtsd2si(r, v),
    convert: |a, v, r| a.vcvtsi2sd(v, v, r),
    compare: |a, x, y| a.vucomisd(x, y),
    subtract: |a, r, x, y| a.vsubsd(r, x, y),
    half: 0x3fe0_0000_0000_0000,
    minus_half: 0xbfe0_0000_0000_0000,
    min: |a, r, x, y| a.vminsd(r, x, y),
    max: |a, r, x, y| a.vmaxsd(r, x, y),
    sign_bit: 63,
    exp_bits: 11,
    holds_32_bit_integers: true,
};

/// `fadd.d`, `fsub.d` (`fp::arith_d`): a finite sum, NX from TwoSum. A
/// finite sum has finite operands.
pub(super) fn add(
    a: &mut CodeAssembler,
    op: &Op,
    slow: CodeLabel,
    done: CodeLabel,
) -> Result<(), IcedError> {
    a.vmovsd(xmm0, fr(op.rs1))?;
    a.vmovsd(xmm1, fr(op.rs2))?;
    if op.kind == Kind::FsubD {
        negate(a, D, xmm1, xmm7)?;
    }
    a.vaddsd(xmm2, xmm0, xmm1)?;
    range(a, D, xmm2, 0, INF2, slow)?;
    a.vmovsd(fr(op.rd), xmm2)?;
    known_inexact(a, done)?;
    two_sum_error(a, [xmm0, xmm1, xmm2], [xmm3, xmm4, xmm5])?;
    inexact_unless_zero(a, xmm3)
}

/// `fmul.d`, `fdiv.d` (`fp::arith_d`): a finite result not near the
/// subnormals, NX from the FMA's residual, `x·y − r` or `x − r·y`. A
/// quotient's dividend must not be near the subnormals either, or the
/// residual could underflow; a finite quotient of that size has a
/// finite, non-zero divisor.
pub(super) fn mul_div(
    a: &mut CodeAssembler,
    op: &Op,
    slow: CodeLabel,
    done: CodeLabel,
) -> Result<(), IcedError> {
    let div = op.kind == Kind::FdivD;
    a.vmovsd(xmm0, fr(op.rs1))?;
    a.vmovsd(xmm1, fr(op.rs2))?;
    if div {
        a.vdivsd(xmm2, xmm0, xmm1)?;
    } else {
        a.vmulsd(xmm2, xmm0, xmm1)?;
    }
    range(a, D, xmm2, SAFE2, INF2, slow)?;
    if div {
        range(a, D, xmm0, SAFE2, INF2, slow)?;
    }
    a.vmovsd(fr(op.rd), xmm2)?;
    known_inexact(a, done)?;
    if div {
        a.vmovapd(xmm3, xmm2)?;
        a.vfnmadd213sd(xmm3, xmm1, xmm0)?; // −(r·y) + x
    } else {
        a.vmovapd(xmm3, xmm0)?;
        a.vfmsub213sd(xmm3, xmm1, xmm2)?; // x·y − r
    }
    inexact_unless_zero(a, xmm3)
}

/// The fused multiply-adds (`fp::fma_host_d`): `±(x·y) ± z` with the
/// product, the result and a non-zero addend all between the bounds, NX
/// from ErrFma.
pub(super) fn fused(
    a: &mut CodeAssembler,
    op: &Op,
    slow: CodeLabel,
    done: CodeLabel,
) -> Result<(), IcedError> {
    let (neg_prod, neg_add) = fma_signs(op.kind);
    let (x, y, z, r, u1, u2) = (xmm0, xmm1, xmm2, xmm3, xmm4, xmm5);
    a.vmovsd(x, fr(op.rs1))?;
    a.vmovsd(y, fr(op.rs2))?;
    a.vmovsd(z, fr(op.rs3))?;
    if neg_prod {
        negate(a, D, x, xmm7)?;
    }
    if neg_add {
        negate(a, D, z, xmm7)?;
    }
    a.vmovapd(r, x)?;
    a.vfmadd213sd(r, y, z)?; // x·y + z, rounded once
    a.vmulsd(u1, x, y)?;
    range(a, D, u1, SAFE2, BIG2 + 2, slow)?;
    range(a, D, r, SAFE2, BIG2 + 2, slow)?;
    range_unless_zero(a, D, z, SAFE2, BIG2 + 2, slow)?;
    a.vmovsd(fr(op.rd), r)?;
    known_inexact(a, done)?;
    a.vmovapd(u2, x)?;
    // x·y − u1, exact; then (alpha1, zz) = TwoSum(z, u2) and
    // (beta1, beta2) = TwoSum(u1, alpha1).
    a.vfmsub213sd(u2, y, u1)?;
    let (alpha1, zz, beta1, beta2) = (xmm6, xmm7, xmm8, xmm9);
    a.vaddsd(alpha1, z, u2)?;
    two_sum_error(a, [z, u2, alpha1], [zz, xmm10, xmm11])?;
    a.vaddsd(beta1, u1, alpha1)?;
    two_sum_error(a, [u1, alpha1, beta1], [beta2, xmm10, xmm11])?;
    // gamma = (beta1 − r) + beta2; exact when gamma + zz is zero.
    a.vsubsd(xmm10, beta1, r)?;
    a.vaddsd(xmm10, xmm10, beta2)?;
    a.vaddsd(xmm10, xmm10, zz)?;
    inexact_unless_zero(a, xmm10)
}

/// `fsqrt.d` (`fp::sqrt`) of a positive finite number not below 1e-250
/// (the interpreter scales smaller ones): NX unless `r·r − x`, exact by
/// the FMA, is zero.
pub(super) fn sqrt(
    a: &mut CodeAssembler,
    op: &Op,
    slow: CodeLabel,
    done: CodeLabel,
) -> Result<(), IcedError> {
    const LO: u64 = 1.0e-250f64.to_bits();
    const INF: u64 = 0x7ff0_0000_0000_0000;
    a.vmovsd(xmm0, fr(op.rs1))?;
    // The raw bits in [LO, +∞): positive, finite, not tiny.
    a.vmovq(rax, xmm0)?;
    a.mov(rcx, LO)?;
    a.sub(rax, rcx)?;
    a.mov(rcx, INF - LO)?;
    a.cmp(rax, rcx)?;
    a.jae(slow)?;
    a.vsqrtsd(xmm1, xmm1, xmm0)?;
    a.vmovsd(fr(op.rd), xmm1)?;
    known_inexact(a, done)?;
    a.vmovapd(xmm2, xmm1)?;
    a.vfmsub213sd(xmm2, xmm1, xmm0)?; // r·r − x
    inexact_unless_zero(a, xmm2)
}
