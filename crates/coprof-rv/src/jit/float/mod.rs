//! Floating-point arithmetic translated in place: the fast paths of the
//! interpreter's floating-point code (`fp::arith_d`, `fp::arith_s`,
//! `fp::fma`, `fp::sqrt`, `fp::min_max`, `fp::compare`, the
//! conversions, `fp::classify`) as host instructions, in front of the call of
//! `cpu::exec_float` that every other case takes.
//!
//! Each fast path computes the correctly rounded result with the host's
//! own instruction (SSE2 and FMA3 round to nearest, ties to even, under
//! the MXCSR every Rust program runs with) and the one flag it can
//! raise, NX, exactly, with the error-free transformations the
//! interpreter uses: Knuth's TwoSum for sums, the FMA residual for
//! products, quotients and square roots of doubles, Boldo and Muller's
//! ErrFma for fused multiply-adds of doubles, and for singles the same
//! operation in double precision, where their products are exact. Anything the
//! fast path cannot answer exactly, a rounding mode other than
//! round-to-nearest-even (F §11.2; every static mode for conversions to
//! integers, and for conversions from integers that are exact), a NaN,
//! an infinity, a single that is
//! not NaN-boxed (D §12.2), a result near the subnormal or overflow
//! range, jumps to the call, which recomputes the op from its registers:
//! so a translation's results and flags are the interpreter's, as the
//! tests check against it.
//!
//! The fast paths need FMA3 (and so AVX, whose three-operand encodings
//! they use throughout); on a host without them every op is a call.

mod both;
mod double;
mod single;

use crate::cpu::{csr, Cpu};
use crate::fp::flag;
use crate::jit::regs::{get32, put};
use crate::op::{Kind, Op};
use iced_x86::code_asm::*;
use iced_x86::IcedError;
use std::mem::offset_of;

/// Where `frm` and `fflags` are from [`Cpu::x`], which rbx holds.
const FRM_FROM_X: i32 = offset_of!(Cpu, frm) as i32 - offset_of!(Cpu, x) as i32;
const FFLAGS_FROM_X: i32 = offset_of!(Cpu, fflags) as i32 - offset_of!(Cpu, x) as i32;

// The fast paths set NX as bit 0 of a compare's mask.
const _: () = assert!(flag::NX == 1);

const SIGN: u64 = 1 << 63;
/// Twice the bits of +∞: a magnitude's bits shifted left by one (the sign
/// dropped) are below this exactly when it is finite.
const INF2: u64 = 0x7ff0_0000_0000_0000 << 1;
/// The interpreter's bounds for doubles (`fp::SAFE_D` and the FMA's
/// `BIG`), as bits shifted left by one.
const SAFE2: u64 = 1.0e-280f64.to_bits() << 1;
const BIG2: u64 = 1.0e290f64.to_bits() << 1;

/// Whether this host runs the fast paths: FMA3 and AVX.
pub(super) fn host_has_fast_paths() -> bool {
    std::arch::is_x86_feature_detected!("fma") && std::arch::is_x86_feature_detected!("avx")
}

/// The rounding an op's fast path needs.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Needs {
    /// Round to nearest, ties to even: the op's field 0, or 7 (dynamic)
    /// with `frm` 0, checked as it runs.
    Nearest,
    /// Any valid static mode (toward zero, C's conversion of a float to
    /// an integer; down, up and to nearest with ties away from zero,
    /// `floor`, `ceil` and `round`), or to nearest (as for `Nearest`:
    /// `lrint`).
    ToInteger,
    /// To nearest (as for `Nearest`), or any other valid static mode for
    /// an integer that converts exactly (the integer `floor` converts
    /// back, rounding down).
    FromInteger,
    /// Any valid mode: the result is exact. A field of 7 is checked as
    /// for `Nearest` (another dynamic mode takes the call).
    Any,
    /// None: the op has no rounding-mode field (moves, sign injection,
    /// minimum and maximum).
    Nothing,
}

/// What the fast path of `kind` needs, or `None` if it has none.
fn needs(kind: Kind) -> Option<Needs> {
    use Kind::*;
    Some(match kind {
        FaddD | FsubD | FmulD | FdivD | FmaddD | FmsubD | FnmsubD | FnmaddD | FaddS | FsubS
        | FmulS | FdivS | FmaddS | FmsubS | FnmsubS | FnmaddS | FcvtSD | FsqrtD | FsqrtS => {
            Needs::Nearest
        }
        FcvtDL | FcvtDLu | FcvtSW | FcvtSWu | FcvtSL | FcvtSLu => Needs::FromInteger,
        FcvtWD | FcvtWuD | FcvtLD | FcvtLuD | FcvtWS | FcvtWuS | FcvtLS | FcvtLuS => {
            Needs::ToInteger
        }
        FcvtDW | FcvtDWu | FeqD | FltD | FleD | FeqS | FltS | FleS | FcvtDS => Needs::Any,
        FmvXW | FmvWX | FsgnjS | FsgnjnS | FsgnjxS | FminD | FmaxD | FminS | FmaxS | FclassS
        | FclassD => Needs::Nothing,
        _ => return None,
    })
}

/// Whether `op` has a fast path for its rounding-mode field.
pub(super) fn has_fast_path(op: &Op) -> bool {
    match needs(op.kind) {
        Some(Needs::Nearest) => op.rm == 0 || op.rm == 7,
        Some(Needs::ToInteger | Needs::FromInteger | Needs::Any) => op.rm <= 4 || op.rm == 7,
        Some(Needs::Nothing) => true,
        None => false,
    }
}

/// Emits `op`'s fast path ([`has_fast_path`] must hold): its result in
/// its destination and NX in `fflags`, or a jump to `slow` before
/// anything is written.
///
/// The NX of an op that may round is worked out only while `fflags`
/// lacks it: once set it stays so until the program clears it, and most
/// programs never do, so that the error terms, the longest part of the
/// fast paths, are mostly skipped: a jump to `done`, the label after the
/// op, which the caller sets.
pub(super) fn fast_path(
    a: &mut CodeAssembler,
    op: &Op,
    slow: CodeLabel,
    done: CodeLabel,
) -> Result<(), IcedError> {
    use Kind::*;
    if op.rm == 7 && needs(op.kind) != Some(Needs::Nothing) {
        // The dynamic mode: this path's only if it is round-to-nearest.
        a.cmp(dword_ptr(rbx + FRM_FROM_X), 0)?;
        a.jne(slow)?;
    }
    match op.kind {
        FaddD | FsubD => double::add(a, op, slow, done),
        FmulD | FdivD => double::mul_div(a, op, slow, done),
        FmaddD | FmsubD | FnmsubD | FnmaddD => double::fused(a, op, slow, done),
        FeqD | FltD | FleD => both::compare(a, op, slow, &double::DOUBLE),
        FcvtDW | FcvtDWu | FcvtDL | FcvtDLu => both::from_int(a, op, slow, done, &double::DOUBLE),
        FcvtWD | FcvtWuD | FcvtLD | FcvtLuD => both::to_int(a, op, slow, done, &double::DOUBLE),
        FsqrtD => double::sqrt(a, op, slow, done),
        FminD | FmaxD => both::min_max(a, op, slow, &double::DOUBLE),
        FaddS | FsubS => single::add(a, op, slow, done),
        FmulS | FdivS => single::mul_div(a, op, slow, done),
        FmaddS | FmsubS | FnmsubS | FnmaddS => single::fused(a, op, slow, done),
        FeqS | FltS | FleS => both::compare(a, op, slow, &single::SINGLE),
        FcvtSW | FcvtSWu | FcvtSL | FcvtSLu => both::from_int(a, op, slow, done, &single::SINGLE),
        FcvtWS | FcvtWuS | FcvtLS | FcvtLuS => both::to_int(a, op, slow, done, &single::SINGLE),
        FcvtSD => single::from_double(a, op, slow, done),
        FcvtDS => single::to_double(a, op, slow),
        FmvXW | FmvWX => single::mv(a, op),
        FsgnjS | FsgnjnS | FsgnjxS => single::sign_inject(a, op, slow),
        FsqrtS => single::sqrt(a, op, slow, done),
        FminS | FmaxS => both::min_max(a, op, slow, &single::SINGLE),
        FclassD => both::classify(a, op, slow, &double::DOUBLE),
        FclassS => both::classify(a, op, slow, &single::SINGLE),
        _ => unreachable!("no fast path for {:?}", op.kind),
    }
}

/// Whether `op`, a Zicsr instruction (§9.1), is on the floating-point
/// CSRs (`fflags`, `frm`, `fcsr`, F §11.2), which translate: the
/// counters take the interpreter, which knows the instructions retired.
pub(super) fn is_float_csr(op: &Op) -> bool {
    matches!(op.imm as u32, csr::FFLAGS | csr::FRM | csr::FCSR)
}

/// A Zicsr instruction on a floating-point CSR ([`is_float_csr`]), as
/// `cpu::csr_op` runs it: the old value to rd, the new one written,
/// `fflags` five bits wide, `frm` three, `fcsr` both. A set or a clear
/// with x0 (or 0) writes nothing (§9.1): here it writes the old value
/// back, the same for these CSRs, which are all writable.
pub(super) fn csr(a: &mut CodeAssembler, op: &Op) -> Result<(), IcedError> {
    let num = op.imm as u32;
    let (fflags, frm) = (dword_ptr(rbx + FFLAGS_FROM_X), dword_ptr(rbx + FRM_FROM_X));
    match num {
        csr::FFLAGS => a.mov(eax, fflags)?,
        csr::FRM => a.mov(eax, frm)?,
        _ => {
            a.mov(eax, frm)?;
            a.shl(eax, 5)?;
            a.or(eax, fflags)?;
        }
    }
    let immediate = matches!(op.kind, Kind::Csrrwi | Kind::Csrrsi | Kind::Csrrci);
    if immediate {
        a.mov(ecx, op.rs1 as u32)?;
    } else {
        get32(a, ecx, op.rs1)?;
    }
    match op.kind {
        Kind::Csrrw | Kind::Csrrwi => a.mov(edx, ecx)?,
        Kind::Csrrs | Kind::Csrrsi => {
            a.mov(edx, eax)?;
            a.or(edx, ecx)?;
        }
        _ => {
            a.mov(edx, ecx)?;
            a.not(edx)?;
            a.and(edx, eax)?;
        }
    }
    match num {
        csr::FFLAGS => {
            a.and(edx, 0x1f)?;
            a.mov(fflags, edx)?;
        }
        csr::FRM => {
            a.and(edx, 7)?;
            a.mov(frm, edx)?;
        }
        _ => {
            a.mov(ecx, edx)?;
            a.and(ecx, 0x1f)?;
            a.mov(fflags, ecx)?;
            a.shr(edx, 5)?;
            a.and(edx, 7)?;
            a.mov(frm, edx)?;
        }
    }
    put(a, op.rd, rax)
}

/// The signs of a fused multiply-add (§11.6): the product negated, the
/// addend negated.
fn fma_signs(kind: Kind) -> (bool, bool) {
    use Kind::*;
    match kind {
        FmaddD | FmaddS => (false, false),
        FmsubD | FmsubS => (false, true),
        FnmsubD | FnmsubS => (true, false),
        _ => (true, true),
    }
}

/// A floating-point format.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Format {
    Single,
    Double,
}

/// Jumps to `slow` unless `lo2 <= |v| * 2 < hi2` in bits (see [`INF2`]),
/// for the number of format `f` in `v`. Uses rax and rcx.
fn range(
    a: &mut CodeAssembler,
    f: Format,
    v: AsmRegisterXmm,
    lo2: u64,
    hi2: u64,
    slow: CodeLabel,
) -> Result<(), IcedError> {
    magnitude_bits(a, f, v)?;
    range_of_bits(a, lo2, hi2, slow)
}

/// [`range`] of the magnitude's bits in rax ([`magnitude_bits`]). Uses
/// rcx.
fn range_of_bits(
    a: &mut CodeAssembler,
    lo2: u64,
    hi2: u64,
    slow: CodeLabel,
) -> Result<(), IcedError> {
    if lo2 != 0 {
        a.mov(rcx, lo2)?;
        a.sub(rax, rcx)?;
    }
    a.mov(rcx, hi2 - lo2)?;
    a.cmp(rax, rcx)?;
    a.jae(slow)
}

/// The bits of the number of format `f` in `v` shifted left by one, the
/// sign dropped, into rax; the flags say whether they are zero.
fn magnitude_bits(a: &mut CodeAssembler, f: Format, v: AsmRegisterXmm) -> Result<(), IcedError> {
    if f == Format::Single {
        a.vmovd(eax, v)?;
        a.shl(eax, 1)
    } else {
        a.vmovq(rax, v)?;
        a.shl(rax, 1)
    }
}

/// [`range`], but a zero passes too: a fused multiply-add's addend.
fn range_unless_zero(
    a: &mut CodeAssembler,
    f: Format,
    v: AsmRegisterXmm,
    lo2: u64,
    hi2: u64,
    slow: CodeLabel,
) -> Result<(), IcedError> {
    let mut zero = a.create_label();
    magnitude_bits(a, f, v)?;
    a.jz(zero)?;
    range_of_bits(a, lo2, hi2, slow)?;
    a.set_label(&mut zero)
}

/// The number of format `f` in `v` negated, through `scratch`.
fn negate(
    a: &mut CodeAssembler,
    f: Format,
    v: AsmRegisterXmm,
    scratch: AsmRegisterXmm,
) -> Result<(), IcedError> {
    let sign = if f == Format::Single { 1 << 31 } else { SIGN };
    a.mov(rax, sign)?;
    a.vmovq(scratch, rax)?;
    a.vxorpd(v, v, scratch)
}

/// Jumps to `done` if `fflags` has NX already: what the op would raise
/// is then known, and the rest of its fast path only works that out.
fn known_inexact(a: &mut CodeAssembler, done: CodeLabel) -> Result<(), IcedError> {
    a.test(dword_ptr(rbx + FFLAGS_FROM_X), flag::NX)?;
    a.jnz(done)
}

/// Raises NX unless the double in `err` is zero (a NaN counts as not
/// zero, as Rust's `!=` has it). Uses rax and xmm15; `err` is
/// overwritten.
fn inexact_unless_zero(a: &mut CodeAssembler, err: AsmRegisterXmm) -> Result<(), IcedError> {
    a.vxorpd(xmm15, xmm15, xmm15)?;
    inexact_unless_equal(a, err, xmm15)
}

/// Raises NX when the doubles in `x` and `y` differ (either a NaN counts
/// as a difference). Uses rax; `x` is overwritten.
fn inexact_unless_equal(
    a: &mut CodeAssembler,
    x: AsmRegisterXmm,
    y: AsmRegisterXmm,
) -> Result<(), IcedError> {
    // Predicate 4: not equal, or unordered.
    a.vcmpsd(x, x, y, 4)?;
    inexact_if_mask(a, x)
}

/// Raises NX if the compare's mask in `mask` is all ones. Uses rax.
fn inexact_if_mask(a: &mut CodeAssembler, mask: AsmRegisterXmm) -> Result<(), IcedError> {
    a.vmovd(eax, mask)?;
    a.and(eax, 1)?;
    a.or(dword_ptr(rbx + FFLAGS_FROM_X), eax)
}

/// Raises NX if the last compare found its operands not equal. Uses rax.
fn inexact_if_not_equal(a: &mut CodeAssembler) -> Result<(), IcedError> {
    a.setne(al)?;
    a.movzx(eax, al)?;
    a.or(dword_ptr(rbx + FFLAGS_FROM_X), eax)
}

/// TwoSum's error term of `s = x + y` into `err` (Knuth; as `fp::two_sum`),
/// through `t1` and `t2`.
fn two_sum_error(
    a: &mut CodeAssembler,
    [x, y, s]: [AsmRegisterXmm; 3],
    [err, t1, t2]: [AsmRegisterXmm; 3],
) -> Result<(), IcedError> {
    a.vsubsd(t1, s, x)?; // bb = s - x
    a.vsubsd(t2, s, t1)?; // s - bb
    a.vsubsd(t2, x, t2)?; // x - (s - bb)
    a.vsubsd(t1, y, t1)?; // y - bb
    a.vaddsd(err, t2, t1)
}
