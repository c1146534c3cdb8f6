//! The double-precision fast paths (D §12): see [`super`].

use super::{
    fma_signs, inexact_unless_zero, known_inexact, negate, range, two_sum_error, BIG2,
    FFLAGS_FROM_X, INF2, SAFE2, SIGN,
};
use crate::jit::x86::{fr, xr, xr32};
use crate::op::{Kind, Op};
use iced_x86::code_asm::*;
use iced_x86::IcedError;

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
        negate(a, xmm1, xmm7)?;
    }
    a.vaddsd(xmm2, xmm0, xmm1)?;
    range(a, xmm2, 0, INF2, slow)?;
    a.vmovsd(fr(op.rd), xmm2)?;
    known_inexact(a, done)?;
    two_sum_error(a, [xmm0, xmm1, xmm2], [xmm3, xmm4, xmm5])?;
    inexact_unless_zero(a, xmm3)
}

/// `fmul.d` (`fp::arith_d`): a finite product not below the subnormal
/// range's neighbourhood, NX from the FMA's residual `x·y − r`.
pub(super) fn mul(
    a: &mut CodeAssembler,
    op: &Op,
    slow: CodeLabel,
    done: CodeLabel,
) -> Result<(), IcedError> {
    a.vmovsd(xmm0, fr(op.rs1))?;
    a.vmovsd(xmm1, fr(op.rs2))?;
    a.vmulsd(xmm2, xmm0, xmm1)?;
    range(a, xmm2, SAFE2, INF2, slow)?;
    a.vmovsd(fr(op.rd), xmm2)?;
    known_inexact(a, done)?;
    a.vmovapd(xmm3, xmm0)?;
    a.vfmsub213sd(xmm3, xmm1, xmm2)?; // x·y − r
    inexact_unless_zero(a, xmm3)
}

/// `fdiv.d` (`fp::arith_d`): a finite quotient and dividend, neither near
/// the subnormal range, NX from the residual `x − r·y`. A finite quotient
/// of that size has a finite, non-zero divisor.
pub(super) fn div(
    a: &mut CodeAssembler,
    op: &Op,
    slow: CodeLabel,
    done: CodeLabel,
) -> Result<(), IcedError> {
    a.vmovsd(xmm0, fr(op.rs1))?;
    a.vmovsd(xmm1, fr(op.rs2))?;
    a.vdivsd(xmm2, xmm0, xmm1)?;
    range(a, xmm2, SAFE2, INF2, slow)?;
    range(a, xmm0, SAFE2, INF2, slow)?;
    a.vmovsd(fr(op.rd), xmm2)?;
    known_inexact(a, done)?;
    a.vmovapd(xmm3, xmm2)?;
    a.vfnmadd213sd(xmm3, xmm1, xmm0)?; // −(r·y) + x
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
        negate(a, x, xmm7)?;
    }
    if neg_add {
        negate(a, z, xmm7)?;
    }
    a.vmovapd(r, x)?;
    a.vfmadd213sd(r, y, z)?; // x·y + z, rounded once
    a.vmulsd(u1, x, y)?;
    range(a, u1, SAFE2, BIG2 + 2, slow)?;
    range(a, r, SAFE2, BIG2 + 2, slow)?;
    let mut z_ok = a.create_label();
    a.vmovq(rax, z)?;
    a.shl(rax, 1)?;
    a.jz(z_ok)?;
    range(a, z, SAFE2, BIG2 + 2, slow)?;
    a.set_label(&mut z_ok)?;
    a.vmovsd(fr(op.rd), r)?;
    known_inexact(a, done)?;
    a.vmovapd(u2, x)?;
    a.vfmsub213sd(u2, y, u1)?; // x·y − u1, exact
                               // (alpha1, zz) = TwoSum(z, u2); (beta1, beta2) = TwoSum(u1, alpha1).
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

/// `feq.d`, `flt.d`, `fle.d` (`fp::compare`) of two numbers; a NaN, whose
/// flags depend on the op and on its kind, takes the call.
pub(super) fn compare(a: &mut CodeAssembler, op: &Op, slow: CodeLabel) -> Result<(), IcedError> {
    a.vmovsd(xmm0, fr(op.rs1))?;
    a.vucomisd(xmm0, fr(op.rs2))?;
    a.jp(slow)?;
    match op.kind {
        Kind::FeqD => a.sete(al)?,
        Kind::FltD => a.setb(al)?,
        _ => a.setbe(al)?,
    }
    a.movzx(eax, al)?;
    a.mov(xr(op.rd), rax)
}

/// `fcvt.d.w`, `fcvt.d.wu` (exact), `fcvt.d.l`, `fcvt.d.lu` (NX when the
/// integer does not come back from the double; an unsigned one of 2^63 or
/// more takes the call).
pub(super) fn from_int(
    a: &mut CodeAssembler,
    op: &Op,
    slow: CodeLabel,
    done: CodeLabel,
) -> Result<(), IcedError> {
    match op.kind {
        Kind::FcvtDW => a.movsxd(rax, xr32(op.rs1))?,
        Kind::FcvtDWu => a.mov(eax, xr32(op.rs1))?,
        _ => a.mov(rax, xr(op.rs1))?,
    }
    if op.kind == Kind::FcvtDLu {
        a.test(rax, rax)?;
        a.js(slow)?;
    }
    a.vxorpd(xmm0, xmm0, xmm0)?;
    a.vcvtsi2sd(xmm0, xmm0, rax)?;
    a.vmovsd(fr(op.rd), xmm0)?;
    if matches!(op.kind, Kind::FcvtDL | Kind::FcvtDLu) {
        known_inexact(a, done)?;
        // 2^63 comes back as the "integer indefinite" 2^63, unlike any
        // integer that rounds to it.
        a.vcvttsd2si(rcx, xmm0)?;
        a.cmp(rcx, rax)?;
        a.setne(al)?;
        a.movzx(eax, al)?;
        a.or(dword_ptr(rbx + FFLAGS_FROM_X), eax)?;
    }
    Ok(())
}

/// `fcvt.w.d`, `fcvt.l.d` toward zero: the host's truncation, NX when the
/// integer is not the double. The host's "integer indefinite" (the most
/// negative integer), which a NaN or a double out of range gives, takes
/// the call, as does the double that truly converts to it.
pub(super) fn to_int(
    a: &mut CodeAssembler,
    op: &Op,
    slow: CodeLabel,
    done: CodeLabel,
) -> Result<(), IcedError> {
    a.vmovsd(xmm0, fr(op.rs1))?;
    if op.kind == Kind::FcvtWD {
        a.vcvttsd2si(eax, xmm0)?;
        a.cmp(eax, i32::MIN)?;
        a.je(slow)?;
        a.movsxd(rcx, eax)?;
    } else {
        a.vcvttsd2si(rcx, xmm0)?;
        a.mov(rax, SIGN)?;
        a.cmp(rcx, rax)?;
        a.je(slow)?;
    }
    a.mov(xr(op.rd), rcx)?;
    known_inexact(a, done)?;
    a.vxorpd(xmm1, xmm1, xmm1)?;
    a.vcvtsi2sd(xmm1, xmm1, rcx)?;
    a.vucomisd(xmm0, xmm1)?;
    a.setne(al)?;
    a.movzx(eax, al)?;
    a.or(dword_ptr(rbx + FFLAGS_FROM_X), eax)
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

/// `fmin.d`, `fmax.d` (`fp::min_max`) of two numbers, not both zeros:
/// the host's `minsd` and `maxsd`, which differ from RISC-V's only for
/// NaNs and for ±0, which take the call. Of two equal numbers either is
/// the result: they have the same bits.
pub(super) fn min_max(a: &mut CodeAssembler, op: &Op, slow: CodeLabel) -> Result<(), IcedError> {
    a.vmovsd(xmm0, fr(op.rs1))?;
    a.vmovsd(xmm1, fr(op.rs2))?;
    a.vucomisd(xmm0, xmm1)?;
    a.jp(slow)?;
    a.vmovq(rax, xmm0)?;
    a.vmovq(rcx, xmm1)?;
    a.or(rax, rcx)?;
    a.shl(rax, 1)?;
    a.jz(slow)?;
    if op.kind == Kind::FminD {
        a.vminsd(xmm2, xmm0, xmm1)?;
    } else {
        a.vmaxsd(xmm2, xmm0, xmm1)?;
    }
    a.vmovsd(fr(op.rd), xmm2)
}
