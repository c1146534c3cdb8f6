//! The fast paths whose code is the same in both precisions but for its
//! instructions: compares, minimum and maximum, conversions from and to
//! integers, classification. Each takes the [`Precision`] whose
//! instructions it uses.

use super::{inexact_if_not_equal, known_inexact, SIGN};
use crate::jit::regs::{get, get32, get_sx32, put};
use crate::op::{Kind, Op};
use iced_x86::code_asm::*;
use iced_x86::IcedError;

type Emitted = Result<(), IcedError>;

/// The instructions of one precision that the shared fast paths use.
pub(super) struct Precision {
    /// The operand in floating-point register `r` into an xmm register,
    /// or a jump to `slow` (a single that is not NaN-boxed).
    pub load: fn(&mut CodeAssembler, AsmRegisterXmm, u8, CodeLabel) -> Emitted,
    /// The value in an xmm register into floating-point register `rd`
    /// (a single NaN-boxed). Uses rax and rcx.
    pub store: fn(&mut CodeAssembler, AsmRegisterXmm, u8) -> Emitted,
    /// `cvttsd2si` or `cvttss2si` to a 64-bit register: toward zero.
    pub truncate64: fn(&mut CodeAssembler, AsmRegister64, AsmRegisterXmm) -> Emitted,
    /// `cvtsd2si` or `cvtss2si` to a 64-bit register, rounded by the
    /// host's MXCSR (to nearest).
    pub round64: fn(&mut CodeAssembler, AsmRegister64, AsmRegisterXmm) -> Emitted,
    /// `cvtsi2sd` or `cvtsi2ss` of a 64-bit register, rounded by the
    /// host's MXCSR (to nearest).
    pub convert: fn(&mut CodeAssembler, AsmRegisterXmm, AsmRegister64) -> Emitted,
    /// `ucomisd` or `ucomiss`.
    pub compare: fn(&mut CodeAssembler, AsmRegisterXmm, AsmRegisterXmm) -> Emitted,
    /// `subsd` or `subss`, into the first register.
    pub subtract: fn(&mut CodeAssembler, AsmRegisterXmm, AsmRegisterXmm, AsmRegisterXmm) -> Emitted,
    /// The bits of 0.5 and of −0.5.
    pub half: u64,
    pub minus_half: u64,
    /// `minsd`/`maxsd` or `minss`/`maxss`, into the first register.
    pub min: fn(&mut CodeAssembler, AsmRegisterXmm, AsmRegisterXmm, AsmRegisterXmm) -> Emitted,
    pub max: fn(&mut CodeAssembler, AsmRegisterXmm, AsmRegisterXmm, AsmRegisterXmm) -> Emitted,
    /// The sign bit's place in the format's bits.
    pub sign_bit: u32,
    /// Bits of the exponent field.
    pub exp_bits: u32,
    /// Whether every 32-bit integer converts exactly (into a double, not a
    /// single).
    pub holds_32_bit_integers: bool,
}

/// `feq`, `flt`, `fle` (`fp::compare`) of two numbers; a NaN, whose flags
/// depend on the op and on its kind, takes the call.
pub(super) fn compare(a: &mut CodeAssembler, op: &Op, slow: CodeLabel, p: &Precision) -> Emitted {
    (p.load)(a, xmm0, op.rs1, slow)?;
    (p.load)(a, xmm1, op.rs2, slow)?;
    (p.compare)(a, xmm0, xmm1)?;
    a.jp(slow)?;
    match op.kind {
        Kind::FeqD | Kind::FeqS => a.sete(al)?,
        Kind::FltD | Kind::FltS => a.setb(al)?,
        _ => a.setbe(al)?,
    }
    a.movzx(eax, al)?;
    put(a, op.rd, rax)
}

/// `fclass` (`fp::classify`): the one bit of the ten classes (F §11.9)
/// that the operand is in, worked out from its bits; a single that is
/// not NaN-boxed takes the call. The sign moved to bit 63, the
/// magnitude shifted left once has the exponent at its top, and shifted
/// left again by the exponent's width, the fraction, whose top bit is
/// the quiet bit of a NaN.
pub(super) fn classify(a: &mut CodeAssembler, op: &Op, slow: CodeLabel, p: &Precision) -> Emitted {
    let e = p.exp_bits;
    let mut finite = a.create_label();
    let mut signed = a.create_label();
    let mut class = a.create_label();
    (p.load)(a, xmm0, op.rs1, slow)?;
    a.vmovq(rax, xmm0)?;
    if p.sign_bit != 63 {
        a.shl(rax, 63 - p.sign_bit)?;
    }
    a.mov(rcx, rax)?;
    a.shl(rcx, 1)?;
    a.mov(rdx, rcx)?;
    a.shr(rdx, 64 - e)?;
    a.shl(rcx, e)?;
    a.cmp(edx, (1i32 << e) - 1)?;
    a.jne(finite)?;
    // An infinity (bit 7, or 0 when negative), else a NaN: signaling
    // (bit 8) or quiet (bit 9), whatever its sign.
    a.mov(edx, 7)?;
    a.test(rcx, rcx)?;
    a.jz(signed)?;
    a.bt(rcx, 63)?;
    a.mov(edx, 8)?;
    a.adc(edx, 0)?;
    a.jmp(class)?;
    // Normal (bit 6), zero (bit 4) or subnormal (bit 5); when negative,
    // the bit as far below 7 as these are above 0.
    a.set_label(&mut finite)?;
    a.test(edx, edx)?;
    a.mov(edx, 6)?;
    a.jnz(signed)?;
    a.mov(edx, 4)?;
    a.test(rcx, rcx)?;
    a.jz(signed)?;
    a.mov(edx, 5)?;
    a.set_label(&mut signed)?;
    a.test(rax, rax)?;
    a.jns(class)?;
    a.neg(edx)?;
    a.add(edx, 7)?;
    a.set_label(&mut class)?;
    a.mov(ecx, edx)?;
    a.mov(eax, 1)?;
    a.shl(eax, cl)?;
    put(a, op.rd, rax)
}

/// `fmin`, `fmax` (`fp::min_max`) of two numbers, not both zeros: the
/// host's `min` and `max`, which differ from RISC-V's only for NaNs and
/// for ±0, which take the call. Of two equal numbers either is the
/// result: they have the same bits.
pub(super) fn min_max(a: &mut CodeAssembler, op: &Op, slow: CodeLabel, p: &Precision) -> Emitted {
    (p.load)(a, xmm0, op.rs1, slow)?;
    (p.load)(a, xmm1, op.rs2, slow)?;
    (p.compare)(a, xmm0, xmm1)?;
    a.jp(slow)?;
    // Both zeros: their bits but for the signs are zero (a single's
    // upper bits are zero in the register).
    a.vmovq(rax, xmm0)?;
    a.vmovq(rcx, xmm1)?;
    a.or(rax, rcx)?;
    a.btr(rax, p.sign_bit)?;
    a.test(rax, rax)?;
    a.jz(slow)?;
    if matches!(op.kind, Kind::FminD | Kind::FminS) {
        (p.min)(a, xmm2, xmm0, xmm1)?;
    } else {
        (p.max)(a, xmm2, xmm0, xmm1)?;
    }
    (p.store)(a, xmm2, op.rd)
}

/// `fcvt.{d,s}.{w,wu,l,lu}`: the host's rounding of the integer (an
/// unsigned one of 2^63 or more takes the call), NX when it does not
/// come back, which 32-bit integers always do into doubles. In a mode
/// other than to nearest (a static field of 1 to 4: `floor` converts its
/// integer back rounding down), only an integer that converts exactly,
/// whatever the mode, stays on this path.
pub(super) fn from_int(
    a: &mut CodeAssembler,
    op: &Op,
    slow: CodeLabel,
    done: CodeLabel,
    p: &Precision,
) -> Emitted {
    use Kind::*;
    let exact = narrow(op.kind) && p.holds_32_bit_integers;
    match op.kind {
        FcvtDW | FcvtSW => get_sx32(a, rax, op.rs1)?,
        FcvtDWu | FcvtSWu => get32(a, eax, op.rs1)?,
        _ => get(a, rax, op.rs1)?,
    }
    if matches!(op.kind, FcvtDLu | FcvtSLu) {
        a.test(rax, rax)?;
        a.js(slow)?;
    }
    a.vxorps(xmm0, xmm0, xmm0)?;
    (p.convert)(a, xmm0, rax)?;
    a.mov(rdx, rax)?;
    if exact {
        return (p.store)(a, xmm0, op.rd);
    }
    // 2^63 comes back as the "integer indefinite", unlike any integer
    // that rounds to it.
    if matches!(op.rm, 0 | 7) {
        (p.store)(a, xmm0, op.rd)?;
        known_inexact(a, done)?;
        (p.truncate64)(a, rcx, xmm0)?;
        a.cmp(rcx, rdx)?;
        inexact_if_not_equal(a)
    } else {
        (p.truncate64)(a, rcx, xmm0)?;
        a.cmp(rcx, rdx)?;
        a.jne(slow)?;
        (p.store)(a, xmm0, op.rd)
    }
}

/// Whether `kind` converts from a 32-bit integer.
fn narrow(kind: Kind) -> bool {
    use Kind::*;
    matches!(kind, FcvtDW | FcvtDWu | FcvtSW | FcvtSWu)
}

/// Turns rdx, the float in xmm0 truncated (not the integer indefinite),
/// into the float rounded in mode `rm`: down (2, `floor`), up (3,
/// `ceil`) or to nearest with ties away from zero (4, `round`), from
/// the fraction the truncation dropped, x − trunc(x), which is exact: an
/// integer of the float's magnitude converts back exactly (a float of
/// 2^52 or more, 2^23 for a single, is an integer, and its fraction 0).
/// Uses rax, rcx, xmm1 and xmm2.
fn round_truncated(a: &mut CodeAssembler, rm: u8, p: &Precision) -> Emitted {
    a.vxorps(xmm1, xmm1, xmm1)?;
    (p.convert)(a, xmm1, rdx)?;
    (p.subtract)(a, xmm1, xmm0, xmm1)?;
    a.xor(ecx, ecx)?;
    match rm {
        // A fraction below 0: one less.
        2 => {
            a.vxorps(xmm2, xmm2, xmm2)?;
            (p.compare)(a, xmm2, xmm1)?;
            a.seta(cl)?;
            a.sub(rdx, rcx)
        }
        // Above 0: one more.
        3 => {
            a.vxorps(xmm2, xmm2, xmm2)?;
            (p.compare)(a, xmm1, xmm2)?;
            a.seta(cl)?;
            a.add(rdx, rcx)
        }
        // At least a half away from 0: one further.
        _ => {
            a.mov(rax, p.half)?;
            a.vmovq(xmm2, rax)?;
            (p.compare)(a, xmm1, xmm2)?;
            a.setae(cl)?;
            a.add(rdx, rcx)?;
            a.mov(rax, p.minus_half)?;
            a.vmovq(xmm2, rax)?;
            (p.compare)(a, xmm2, xmm1)?;
            a.setae(cl)?;
            a.sub(rdx, rcx)
        }
    }
}

/// `fcvt.{w,wu,l,lu}.{d,s}` toward zero (C's casts), to nearest
/// (`lrint`), down (`floor`), up (`ceil`) or to nearest with ties away
/// from zero (`round`, `lround`): the host's conversion to a 64-bit
/// integer (toward zero, then moved by one in the last three modes, see
/// [`round_truncated`]), which must be in
/// the destination's range (a 32-bit result sign-extended, also for
/// `wu`), NX when the integer is not the float. The host's "integer
/// indefinite" (the most negative integer), which a NaN or a float out of
/// range gives, takes the call, as does the float that truly converts to
/// it, and so do integers out of range, for NV.
pub(super) fn to_int(
    a: &mut CodeAssembler,
    op: &Op,
    slow: CodeLabel,
    done: CodeLabel,
    p: &Precision,
) -> Emitted {
    use Kind::*;
    (p.load)(a, xmm0, op.rs1, slow)?;
    if matches!(op.rm, 0 | 7) {
        (p.round64)(a, rdx, xmm0)?;
    } else {
        (p.truncate64)(a, rdx, xmm0)?;
    }
    a.mov(rax, SIGN)?;
    a.cmp(rdx, rax)?;
    a.je(slow)?;
    if matches!(op.rm, 2..=4) {
        round_truncated(a, op.rm, p)?;
    }
    match op.kind {
        FcvtWD | FcvtWS => {
            a.movsxd(rcx, edx)?;
            a.cmp(rcx, rdx)?;
            a.jne(slow)?;
        }
        FcvtWuD | FcvtWuS => {
            a.mov(ecx, edx)?;
            a.cmp(rcx, rdx)?;
            a.jne(slow)?;
            a.movsxd(rcx, edx)?;
        }
        FcvtLuD | FcvtLuS => {
            a.test(rdx, rdx)?;
            a.js(slow)?;
            a.mov(rcx, rdx)?;
        }
        _ => a.mov(rcx, rdx)?,
    }
    put(a, op.rd, rcx)?;
    known_inexact(a, done)?;
    // The integer converts back exactly: it is below the format's
    // precision, or the float itself.
    a.vxorps(xmm1, xmm1, xmm1)?;
    (p.convert)(a, xmm1, rdx)?;
    (p.compare)(a, xmm0, xmm1)?;
    inexact_if_not_equal(a)
}
