//! The fast paths whose code is the same in both precisions but for its
//! instructions: compares, minimum and maximum, conversions from and to
//! integers. Each takes the [`Precision`] whose instructions it uses.

use super::{inexact_if_not_equal, known_inexact, SIGN};
use crate::jit::x86::{xr, xr32};
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
    /// `minsd`/`maxsd` or `minss`/`maxss`, into the first register.
    pub min: fn(&mut CodeAssembler, AsmRegisterXmm, AsmRegisterXmm, AsmRegisterXmm) -> Emitted,
    pub max: fn(&mut CodeAssembler, AsmRegisterXmm, AsmRegisterXmm, AsmRegisterXmm) -> Emitted,
    /// The sign bit's place in the format's bits.
    pub sign_bit: u32,
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
    a.mov(xr(op.rd), rax)
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
/// come back, which 32-bit integers always do into doubles.
pub(super) fn from_int(
    a: &mut CodeAssembler,
    op: &Op,
    slow: CodeLabel,
    done: CodeLabel,
    p: &Precision,
) -> Emitted {
    use Kind::*;
    let narrow = matches!(op.kind, FcvtDW | FcvtDWu | FcvtSW | FcvtSWu);
    match op.kind {
        FcvtDW | FcvtSW => a.movsxd(rax, xr32(op.rs1))?,
        FcvtDWu | FcvtSWu => a.mov(eax, xr32(op.rs1))?,
        _ => a.mov(rax, xr(op.rs1))?,
    }
    if matches!(op.kind, FcvtDLu | FcvtSLu) {
        a.test(rax, rax)?;
        a.js(slow)?;
    }
    a.vxorps(xmm0, xmm0, xmm0)?;
    (p.convert)(a, xmm0, rax)?;
    a.mov(rdx, rax)?;
    (p.store)(a, xmm0, op.rd)?;
    if narrow && p.holds_32_bit_integers {
        return Ok(());
    }
    known_inexact(a, done)?;
    // 2^63 comes back as the "integer indefinite", unlike any integer
    // that rounds to it.
    (p.truncate64)(a, rcx, xmm0)?;
    a.cmp(rcx, rdx)?;
    inexact_if_not_equal(a)
}

/// `fcvt.{w,wu,l,lu}.{d,s}` toward zero (C's casts) or to nearest
/// (`lrint`): the host's conversion to a 64-bit integer, which must be in
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
    if op.rm == 1 {
        (p.truncate64)(a, rdx, xmm0)?;
    } else {
        (p.round64)(a, rdx, xmm0)?;
    }
    a.mov(rax, SIGN)?;
    a.cmp(rdx, rax)?;
    a.je(slow)?;
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
    a.mov(xr(op.rd), rcx)?;
    known_inexact(a, done)?;
    // The integer converts back exactly: it is below the format's
    // precision, or the float itself.
    a.vxorps(xmm1, xmm1, xmm1)?;
    (p.convert)(a, xmm1, rdx)?;
    (p.compare)(a, xmm0, xmm1)?;
    inexact_if_not_equal(a)
}
