//! IEEE-754 arithmetic of the F and D extensions with exact `fflags`.
//!
//! RISC-V Unprivileged ISA 20191213, §11 (F) and §12 (D): five rounding
//! modes (§11.2, Table 11.1), accrued exception flags NV DZ OF UF NX
//! (Table 11.2), tininess detected after rounding, the canonical NaN for
//! every NaN result (§11.3), NaN boxing of single-precision values in the
//! 64-bit registers (§12.2), `fmin`/`fmax` as IEEE 754-2019
//! minimumNumber/maximumNumber (§11.6), quiet and signalling comparisons
//! (§11.8), `fclass` (§11.9) and saturating conversions to integers
//! (§11.7, Table 11.4).
//!
//! Arithmetic is done with `rustc_apfloat` (a software IEEE-754
//! implementation with all five rounding modes and IEEE status flags). As a
//! fast path, add, subtract, multiply and divide in round-to-nearest-even
//! use the host's IEEE-754 hardware when the result is finite and far from
//! the subnormal range; the inexact flag is then computed exactly with an
//! error-free transformation (TwoSum for addition, a fused multiply-add for
//! the product or division remainder), so results and flags are identical
//! to the software path. Square root uses the host's correctly rounded
//! `sqrt` and corrects the last bit for the directed rounding modes.
//!
//! Values are passed as raw bits in `u64`; single-precision values in the
//! low 32 bits (already unboxed).

use rustc_apfloat::ieee::{Double, Single};
use rustc_apfloat::{Float, FloatConvert, Round, Status, StatusAnd};

/// `fflags` bits (Table 11.2).
pub mod flag {
    /// Invalid operation.
    pub const NV: u32 = 0x10;
    /// Divide by zero.
    pub const DZ: u32 = 0x08;
    /// Overflow.
    pub const OF: u32 = 0x04;
    /// Underflow.
    pub const UF: u32 = 0x02;
    /// Inexact.
    pub const NX: u32 = 0x01;
}

/// The canonical single-precision NaN (§11.3).
pub const CANON_S: u64 = 0x7fc0_0000;
/// The canonical double-precision NaN (§12.2).
pub const CANON_D: u64 = 0x7ff8_0000_0000_0000;

/// The rounding mode for a `rm` field value (Table 11.1), or `None` for
/// the reserved values 5 and 6 (and an invalid dynamic `frm`).
pub fn round_of(rm: u32) -> Option<Round> {
    Some(match rm {
        0 => Round::NearestTiesToEven,
        1 => Round::TowardZero,
        2 => Round::TowardNegative,
        3 => Round::TowardPositive,
        4 => Round::NearestTiesToAway,
        _ => return None,
    })
}

/// NaN-boxes a single-precision value (§12.2).
#[inline]
pub fn box_s(v: u64) -> u64 {
    0xffff_ffff_0000_0000 | (v & 0xffff_ffff)
}

/// Reads a single-precision operand: a value that is not properly
/// NaN-boxed is taken as the canonical NaN (§12.2).
#[inline]
pub fn unbox_s(v: u64) -> u64 {
    if v >> 32 == 0xffff_ffff {
        v & 0xffff_ffff
    } else {
        CANON_S
    }
}

fn flags(s: Status) -> u32 {
    let mut f = 0;
    if s.contains(Status::INVALID_OP) {
        f |= flag::NV;
    }
    if s.contains(Status::DIV_BY_ZERO) {
        f |= flag::DZ;
    }
    if s.contains(Status::OVERFLOW) {
        f |= flag::OF;
    }
    if s.contains(Status::UNDERFLOW) {
        f |= flag::UF;
    }
    if s.contains(Status::INEXACT) {
        f |= flag::NX;
    }
    f
}

/// A binary format: single (`S`) or double (`D`).
pub trait Format {
    /// The software float type.
    type Ap: Float + FloatConvert<Single> + FloatConvert<Double>;
    /// Width in bits.
    const BITS: u32;
    /// The canonical NaN.
    const CANON: u64;
    /// Bits of the exponent field, shifted into place.
    const EXP: u64;
    /// Bits of the fraction.
    const FRAC: u64;
    /// The quiet bit (most significant fraction bit).
    const QUIET: u64;
    /// 0.5.
    const HALF: u64;
    /// 2^emax, the smallest power of two above which values are not
    /// finite after doubling.
    const TWO_EMAX: u64;
}

/// Single precision.
pub struct S;
/// Double precision.
pub struct D;

impl Format for S {
    type Ap = Single;
    const BITS: u32 = 32;
    const CANON: u64 = CANON_S;
    const EXP: u64 = 0x7f80_0000;
    const FRAC: u64 = 0x007f_ffff;
    const QUIET: u64 = 0x0040_0000;
    const HALF: u64 = 0x3f00_0000;
    const TWO_EMAX: u64 = 0x7f00_0000;
}

impl Format for D {
    type Ap = Double;
    const BITS: u32 = 64;
    const CANON: u64 = CANON_D;
    const EXP: u64 = 0x7ff0_0000_0000_0000;
    const FRAC: u64 = 0x000f_ffff_ffff_ffff;
    const QUIET: u64 = 0x0008_0000_0000_0000;
    const HALF: u64 = 0x3fe0_0000_0000_0000;
    const TWO_EMAX: u64 = 0x7fe0_0000_0000_0000;
}

#[inline]
fn is_nan<F: Format>(v: u64) -> bool {
    v & F::EXP == F::EXP && v & F::FRAC != 0
}

#[inline]
fn is_snan<F: Format>(v: u64) -> bool {
    is_nan::<F>(v) && v & F::QUIET == 0
}

#[inline]
fn sign<F: Format>(v: u64) -> bool {
    (v >> (F::BITS - 1)) & 1 != 0
}

#[inline]
fn ap<F: Format>(v: u64) -> F::Ap {
    F::Ap::from_bits(v as u128)
}

/// rustc_apfloat reports a directed-rounding overflow (a result clamped
/// to the largest finite value) as inexact only; IEEE 754 §7.4 (and so
/// RISC-V) also raises overflow whenever the result rounded with an
/// unbounded exponent exceeds the largest finite number. `half` computes
/// the same operation on operands scaled by ½ (exact for the magnitudes
/// involved), rounding toward zero: the true result overflowed iff that
/// half-size result reaches 2^emax.
fn fix_overflow<F: Format>(
    mut r: StatusAnd<F::Ap>,
    rm: Round,
    half: impl FnOnce() -> F::Ap,
) -> StatusAnd<F::Ap> {
    let directed = matches!(
        rm,
        Round::TowardZero | Round::TowardNegative | Round::TowardPositive
    );
    if directed
        && r.status.contains(Status::INEXACT)
        && !r.status.contains(Status::OVERFLOW)
        && r.value.abs().bitwise_eq(F::Ap::largest())
        && half().abs() >= ap::<F>(F::TWO_EMAX)
    {
        r.status |= Status::OVERFLOW;
    }
    r
}

fn done<F: Format>(r: StatusAnd<F::Ap>) -> (u64, u32) {
    let v = if r.value.is_nan() {
        F::CANON
    } else {
        r.value.to_bits() as u64
    };
    (v, flags(r.status))
}

/// NaN operands: the result is the canonical NaN, NV if any is signalling.
fn nan_result<F: Format>(ops: &[u64]) -> Option<(u64, u32)> {
    if ops.iter().any(|v| is_nan::<F>(*v)) {
        let nv = if ops.iter().any(|v| is_snan::<F>(*v)) {
            flag::NV
        } else {
            0
        };
        return Some((F::CANON, nv));
    }
    None
}

/// The four basic operations.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Arith {
    /// `fadd`.
    Add,
    /// `fsub`.
    Sub,
    /// `fmul`.
    Mul,
    /// `fdiv`.
    Div,
}

/// `fadd`/`fsub`/`fmul`/`fdiv` in the software path.
pub fn arith_soft<F: Format>(op: Arith, a: u64, b: u64, rm: Round) -> (u64, u32) {
    if let Some(r) = nan_result::<F>(&[a, b]) {
        return r;
    }
    let (x, y) = (ap::<F>(a), ap::<F>(b));
    let h = ap::<F>(F::HALF);
    let tz = Round::TowardZero;
    let r = match op {
        Arith::Add => x.add_r(y, rm),
        Arith::Sub => x.sub_r(y, rm),
        Arith::Mul => x.mul_r(y, rm),
        Arith::Div => x.div_r(y, rm),
    };
    let r = fix_overflow::<F>(r, rm, || match op {
        Arith::Add => (x * h).value.add_r((y * h).value, tz).value,
        Arith::Sub => (x * h).value.sub_r((y * h).value, tz).value,
        Arith::Mul => (x * h).value.mul_r(y, tz).value,
        Arith::Div => (x * h).value.div_r(y, tz).value,
    });
    done::<F>(r)
}

/// Smallest magnitude for which the host fast path is taken: far enough
/// above the subnormal range that neither the result nor its error term
/// can be tiny.
const SAFE_D: f64 = 1.0e-280; // about 2^-930
const SAFE_S: f32 = 1.0e-30; // about 2^-100

/// Double-precision `fadd`/`fsub`/`fmul`/`fdiv`.
#[inline(always)]
pub fn arith_d(op: Arith, a: u64, b: u64, rm: Round) -> (u64, u32) {
    if rm == Round::NearestTiesToEven {
        let (x, y) = (f64::from_bits(a), f64::from_bits(b));
        if x.is_finite() && y.is_finite() {
            match op {
                Arith::Add | Arith::Sub => {
                    let y = if op == Arith::Sub { -y } else { y };
                    let r = x + y;
                    if r.is_finite() {
                        // TwoSum (Knuth): err is exactly (x + y) - r.
                        let bb = r - x;
                        let err = (x - (r - bb)) + (y - bb);
                        return (r.to_bits(), if err != 0.0 { flag::NX } else { 0 });
                    }
                }
                Arith::Mul => {
                    let r = x * y;
                    if r.is_finite() && r.abs() >= SAFE_D {
                        let err = x.mul_add(y, -r);
                        return (r.to_bits(), if err != 0.0 { flag::NX } else { 0 });
                    }
                }
                Arith::Div => {
                    let r = x / y;
                    if r.is_finite() && r.abs() >= SAFE_D && x.abs() >= SAFE_D && y != 0.0 {
                        // The remainder x - r*y is exact (no underflow here).
                        let rem = (-r).mul_add(y, x);
                        return (r.to_bits(), if rem != 0.0 { flag::NX } else { 0 });
                    }
                }
            }
        }
    }
    arith_soft::<D>(op, a, b, rm)
}

/// Single-precision `fadd`/`fsub`/`fmul`/`fdiv` (operands unboxed).
#[inline(always)]
pub fn arith_s(op: Arith, a: u64, b: u64, rm: Round) -> (u64, u32) {
    if rm == Round::NearestTiesToEven {
        let (x, y) = (f32::from_bits(a as u32), f32::from_bits(b as u32));
        if x.is_finite() && y.is_finite() {
            // Products and r*y of two singles are exact in double, so
            // comparing in double decides exactness; sums use TwoSum.
            let two_sum = |x: f32, y: f32| {
                let r = x + y;
                let bb = r - x;
                (r, (x - (r - bb)) + (y - bb) == 0.0)
            };
            let (r, exact) = match op {
                Arith::Add => two_sum(x, y),
                Arith::Sub => two_sum(x, -y),
                Arith::Mul => {
                    let r = x * y;
                    (r, x as f64 * y as f64 == r as f64)
                }
                Arith::Div => {
                    let r = x / y;
                    (r, y != 0.0 && r as f64 * y as f64 == x as f64)
                }
            };
            let tiny_ok = matches!(op, Arith::Add | Arith::Sub) || r.abs() >= SAFE_S;
            if r.is_finite() && tiny_ok && (op != Arith::Div || y != 0.0) {
                // Addition's subnormal results are exact, so no UF there.
                return (r.to_bits() as u64, if exact { 0 } else { flag::NX });
            }
        }
    }
    arith_soft::<S>(op, a, b, rm)
}

/// Knuth's TwoSum: `s + e == x + y` exactly (no overflow).
#[inline(always)]
fn two_sum(x: f64, y: f64) -> (f64, f64) {
    let s = x + y;
    let bb = s - x;
    (s, (x - (s - bb)) + (y - bb))
}

/// Host fused multiply-add in round-to-nearest-even with the exact
/// inexact flag, or `None` when the operands or result come near the
/// subnormal or overflow range. Exactness uses the error of the FMA as an
/// exact sum of two floats (Boldo & Muller, "Exact and approximated error
/// of the FMA", IEEE TC 2011, algorithm ErrFma): `x·y + z = r + r2 + r3`,
/// and the FMA was exact iff `r2` is zero.
#[inline(always)]
fn fma_host_d(x: f64, y: f64, z: f64) -> Option<(u64, u32)> {
    const BIG: f64 = 1.0e290;
    let r = x.mul_add(y, z);
    let u1 = x * y;
    let ok = |v: f64| v.abs() >= SAFE_D && v.abs() <= BIG;
    if !(ok(u1) && ok(r) && (z == 0.0 || ok(z))) {
        return None;
    }
    let u2 = x.mul_add(y, -u1);
    let (alpha1, zz) = two_sum(z, u2);
    let (beta1, beta2) = two_sum(u1, alpha1);
    let gamma = (beta1 - r) + beta2;
    let exact = gamma + zz == 0.0;
    Some((r.to_bits(), if exact { 0 } else { flag::NX }))
}

/// Single-precision host FMA: the product is exact in double, so the
/// exact sum is TwoSum(product, z) in double.
#[inline(always)]
fn fma_host_s(x: f32, y: f32, z: f32) -> Option<(u64, u32)> {
    let r = x.mul_add(y, z);
    let ok = |v: f32| v.abs() >= SAFE_S && v.abs() <= 1.0e37;
    let p = x as f64 * y as f64;
    if !(ok(r) && (z == 0.0 || ok(z)) && p.abs() >= 1.0e-30 && p.abs() <= 1.0e37) {
        return None;
    }
    let (s, e) = two_sum(p, z as f64);
    let exact = s == r as f64 && e == 0.0;
    Some((r.to_bits() as u64, if exact { 0 } else { flag::NX }))
}

/// Which fused multiply-add (§11.6): rs1×rs2 negated or not, rs3 negated
/// or not.
#[inline(always)]
pub fn fma<F: Format>(
    a: u64,
    b: u64,
    c: u64,
    neg_prod: bool,
    neg_add: bool,
    rm: Round,
) -> (u64, u32) {
    if rm == Round::NearestTiesToEven {
        let fast = if F::BITS == 64 {
            let (x, y, z) = (f64::from_bits(a), f64::from_bits(b), f64::from_bits(c));
            let x = if neg_prod { -x } else { x };
            let z = if neg_add { -z } else { z };
            fma_host_d(x, y, z)
        } else {
            let (x, y, z) = (
                f32::from_bits(a as u32),
                f32::from_bits(b as u32),
                f32::from_bits(c as u32),
            );
            let x = if neg_prod { -x } else { x };
            let z = if neg_add { -z } else { z };
            fma_host_s(x, y, z)
        };
        if let Some(r) = fast {
            return r;
        }
    }
    fma_soft::<F>(a, b, c, neg_prod, neg_add, rm)
}

/// The fused multiply-adds in software (every rounding mode).
pub fn fma_soft<F: Format>(
    a: u64,
    b: u64,
    c: u64,
    neg_prod: bool,
    neg_add: bool,
    rm: Round,
) -> (u64, u32) {
    let (x, y) = (ap::<F>(a), ap::<F>(b));
    // ∞ × 0 is invalid even when the addend is a quiet NaN (§11.6).
    if (x.is_infinite() && y.is_zero()) || (x.is_zero() && y.is_infinite()) {
        return (F::CANON, flag::NV);
    }
    if let Some(r) = nan_result::<F>(&[a, b, c]) {
        return r;
    }
    let x = if neg_prod { -x } else { x };
    let z = if neg_add { -ap::<F>(c) } else { ap::<F>(c) };
    let h = ap::<F>(F::HALF);
    let r = fix_overflow::<F>(x.mul_add_r(y, z, rm), rm, || {
        (x * h)
            .value
            .mul_add_r(y, (z * h).value, Round::TowardZero)
            .value
    });
    done::<F>(r)
}

/// `fsqrt` (§11.6).
pub fn sqrt<F: Format>(a: u64, rm: Round) -> (u64, u32) {
    if is_nan::<F>(a) {
        return (F::CANON, if is_snan::<F>(a) { flag::NV } else { 0 });
    }
    let x = ap::<F>(a);
    if x.is_zero() {
        return (a, 0);
    }
    if x.is_negative() {
        return (F::CANON, flag::NV);
    }
    if x.is_infinite() {
        return (a, 0);
    }
    // Host sqrt is correctly rounded to nearest; `cmp` is the sign of
    // r² − a computed exactly.
    let (r_bits, cmp) = if F::BITS == 32 {
        let v = f32::from_bits(a as u32);
        let r = v.sqrt();
        let sq = r as f64 * r as f64; // exact: 48 bits
        (r.to_bits() as u64, sq.partial_cmp(&(v as f64)))
    } else {
        let v = f64::from_bits(a);
        let r = v.sqrt();
        // Scale tiny operands so the residual cannot underflow.
        let (rs, vs) = if v < 1.0e-250 {
            (r * 2f64.powi(300), v * 2f64.powi(600))
        } else {
            (r, v)
        };
        let res = rs.mul_add(rs, -vs);
        (r.to_bits(), res.partial_cmp(&0.0))
    };
    let cmp = cmp.unwrap_or(std::cmp::Ordering::Equal);
    if cmp == std::cmp::Ordering::Equal {
        return (r_bits, 0);
    }
    // The root is never exactly halfway, so RMM equals RNE.
    let r = ap::<F>(r_bits);
    let adjusted = match (rm, cmp) {
        (Round::TowardZero | Round::TowardNegative, std::cmp::Ordering::Greater) => {
            r.next_down().value
        }
        (Round::TowardPositive, std::cmp::Ordering::Less) => r.next_up().value,
        _ => r,
    };
    (adjusted.to_bits() as u64, flag::NX)
}

/// `fmin`/`fmax` (§11.6): IEEE 754-2019 minimumNumber/maximumNumber, with
/// −0 < +0 and NV only for signalling NaNs.
pub fn min_max<F: Format>(a: u64, b: u64, max: bool) -> (u64, u32) {
    let nv = if is_snan::<F>(a) || is_snan::<F>(b) {
        flag::NV
    } else {
        0
    };
    let v = match (is_nan::<F>(a), is_nan::<F>(b)) {
        (true, true) => F::CANON,
        (true, false) => b,
        (false, true) => a,
        _ => {
            let (x, y) = (ap::<F>(a), ap::<F>(b));
            if x.is_zero() && y.is_zero() {
                if sign::<F>(a) != max {
                    a
                } else {
                    b
                }
            } else {
                let a_less = x < y;
                if a_less != max {
                    a
                } else {
                    b
                }
            }
        }
    };
    (v, nv)
}

/// Comparisons (§11.8): `feq` is quiet (NV for signalling NaNs only);
/// `flt` and `fle` signal NV for any NaN.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Cmp {
    /// `feq`.
    Eq,
    /// `flt`.
    Lt,
    /// `fle`.
    Le,
}

/// A comparison: the result (0 or 1) and flags.
pub fn compare<F: Format>(a: u64, b: u64, cmp: Cmp) -> (u64, u32) {
    if is_nan::<F>(a) || is_nan::<F>(b) {
        let nv = match cmp {
            Cmp::Eq if !(is_snan::<F>(a) || is_snan::<F>(b)) => 0,
            _ => flag::NV,
        };
        return (0, nv);
    }
    let (x, y) = (ap::<F>(a), ap::<F>(b));
    let r = match cmp {
        Cmp::Eq => x == y,
        Cmp::Lt => x < y,
        Cmp::Le => x <= y,
    };
    (r as u64, 0)
}

/// `fclass` (§11.9, Table 11.5): a one-hot 10-bit mask.
pub fn classify<F: Format>(a: u64) -> u64 {
    let neg = sign::<F>(a);
    let exp = a & F::EXP;
    let frac = a & F::FRAC;
    let bit = if exp == F::EXP {
        if frac == 0 {
            if neg {
                0
            } else {
                7
            }
        } else if frac & F::QUIET != 0 {
            9
        } else {
            8
        }
    } else if exp == 0 {
        match (frac == 0, neg) {
            (true, true) => 3,
            (true, false) => 4,
            (false, true) => 2,
            (false, false) => 5,
        }
    } else if neg {
        1
    } else {
        6
    };
    1 << bit
}

/// Float to integer (§11.7, Table 11.4): `width` 32 or 64, signed or not.
/// Out-of-range values and NaNs saturate and raise NV (not NX); 32-bit
/// results are sign-extended to 64 bits, also for the unsigned forms.
pub fn to_int<F: Format>(a: u64, signed: bool, width: u32, rm: Round) -> (u64, u32) {
    let (min, max): (i128, i128) = match (signed, width) {
        (true, 32) => (i32::MIN as i128, i32::MAX as i128),
        (false, 32) => (0, u32::MAX as i128),
        (true, _) => (i64::MIN as i128, i64::MAX as i128),
        (false, _) => (0, u64::MAX as i128),
    };
    let out = |v: i128| -> u64 {
        if width == 32 {
            v as u32 as i32 as i64 as u64
        } else {
            v as u64
        }
    };
    if is_nan::<F>(a) {
        return (out(max), flag::NV);
    }
    let x = ap::<F>(a);
    if x.is_infinite() {
        return (out(if x.is_negative() { min } else { max }), flag::NV);
    }
    let rounded = x.round_to_integral(rm);
    let inexact = rounded.status.contains(Status::INEXACT);
    let r = rounded.value;
    // |r| ≥ 2^65 cannot fit in any of the formats.
    if !r.is_zero() && r.ilogb() >= 65 {
        return (out(if r.is_negative() { min } else { max }), flag::NV);
    }
    let mut exact = false;
    let v = r.to_i128_r(128, Round::TowardZero, &mut exact).value;
    if v < min {
        (out(min), flag::NV)
    } else if v > max {
        (out(max), flag::NV)
    } else {
        (out(v), if inexact { flag::NX } else { 0 })
    }
}

/// Integer to float (§11.7): `v` is the source register; for 32-bit forms
/// only its low 32 bits are used.
pub fn from_int<F: Format>(v: u64, signed: bool, width: u32, rm: Round) -> (u64, u32) {
    let r = match (signed, width) {
        (true, 32) => F::Ap::from_i128_r(v as i32 as i128, rm),
        (false, 32) => F::Ap::from_u128_r(v as u32 as u128, rm),
        (true, _) => F::Ap::from_i128_r(v as i64 as i128, rm),
        (false, _) => F::Ap::from_u128_r(v as u128, rm),
    };
    done::<F>(r)
}

/// `fcvt.s.d` (§12.5): rounds; NaN becomes the canonical NaN.
pub fn d_to_s(a: u64, rm: Round) -> (u64, u32) {
    if let Some(r) = nan_result::<D>(&[a]) {
        return (CANON_S, r.1);
    }
    let mut loses = false;
    let x = Double::from_bits(a as u128);
    let r: StatusAnd<Single> = x.convert_r(rm, &mut loses);
    let r = fix_overflow::<S>(r, rm, || {
        let h = (x * Double::from_bits(D::HALF as u128)).value;
        let mut l = false;
        let s: StatusAnd<Single> = h.convert_r(Round::TowardZero, &mut l);
        s.value
    });
    done::<S>(r)
}

/// `fcvt.d.s` (§12.5): exact; NaN becomes the canonical NaN.
pub fn s_to_d(a: u64) -> (u64, u32) {
    if let Some(r) = nan_result::<S>(&[a]) {
        return (CANON_D, r.1);
    }
    let mut loses = false;
    let r: StatusAnd<Double> =
        Single::from_bits(a as u128).convert_r(Round::NearestTiesToEven, &mut loses);
    done::<D>(r)
}

/// Sign injection (§11.6): `fsgnj`, `fsgnjn`, `fsgnjx` (0, 1, 2).
pub fn sign_inject<F: Format>(a: u64, b: u64, mode: u8) -> u64 {
    let s = 1u64 << (F::BITS - 1);
    let sb = match mode {
        0 => b & s,
        1 => !b & s,
        _ => (a ^ b) & s,
    };
    (a & !s) | sb
}

#[cfg(test)]
mod tests {
    use super::*;
    const RNE: Round = Round::NearestTiesToEven;

    fn d(x: f64) -> u64 {
        x.to_bits()
    }
    fn s(x: f32) -> u64 {
        x.to_bits() as u64
    }

    #[test]
    fn fast_and_soft_paths_agree() {
        let vals = [
            1.0,
            -1.0,
            0.1,
            3.0,
            1.0e300,
            -1.0e-300,
            5e-324,
            0.0,
            -0.0,
            7.0,
            1.5,
            2.0f64.powi(-1022),
            f64::MAX,
            123456789.0,
            1.0 / 3.0,
        ];
        for op in [Arith::Add, Arith::Sub, Arith::Mul, Arith::Div] {
            for &x in &vals {
                for &y in &vals {
                    assert_eq!(
                        arith_d(op, d(x), d(y), RNE),
                        arith_soft::<D>(op, d(x), d(y), RNE),
                        "{op:?} {x} {y}"
                    );
                    let (xs, ys) = (x as f32, y as f32);
                    assert_eq!(
                        arith_s(op, s(xs), s(ys), RNE),
                        arith_soft::<S>(op, s(xs), s(ys), RNE),
                        "{op:?} {xs} {ys}"
                    );
                }
            }
        }
    }

    #[test]
    fn flags_follow_the_spec() {
        assert_eq!(
            arith_d(Arith::Div, d(1.0), d(0.0), RNE),
            (d(f64::INFINITY), flag::DZ)
        );
        assert_eq!(
            arith_d(Arith::Div, d(0.0), d(0.0), RNE),
            (CANON_D, flag::NV)
        );
        assert_eq!(
            arith_d(Arith::Mul, d(f64::MAX), d(2.0), RNE),
            (d(f64::INFINITY), flag::OF | flag::NX)
        );
        assert_eq!(
            arith_d(Arith::Mul, d(f64::MAX), d(2.0), Round::TowardZero),
            (d(f64::MAX), flag::OF | flag::NX)
        );
        assert_eq!(
            arith_d(Arith::Mul, d(-f64::MAX), d(2.0), Round::TowardPositive),
            (d(-f64::MAX), flag::OF | flag::NX)
        );
        assert_eq!(
            arith_d(Arith::Mul, d(-f64::MAX), d(2.0), Round::TowardNegative),
            (d(f64::NEG_INFINITY), flag::OF | flag::NX)
        );
        // Just above the largest finite value but below 2^1024: no
        // overflow when rounding toward zero.
        assert_eq!(
            arith_d(Arith::Add, d(f64::MAX), d(1.0), Round::TowardZero),
            (d(f64::MAX), flag::NX)
        );
        assert_eq!(
            d_to_s(d(1e300), Round::TowardZero),
            (s(f32::MAX), flag::OF | flag::NX)
        );
        assert_eq!(arith_d(Arith::Div, d(1.0), d(3.0), RNE).1, flag::NX);
        let tiny = 2f64.powi(-1022);
        assert_eq!(
            arith_d(Arith::Mul, d(tiny), d(0.5), RNE),
            (d(tiny / 2.0), 0)
        );
        assert_eq!(
            arith_d(Arith::Mul, d(tiny), d(1.0 / 3.0), RNE).1,
            flag::UF | flag::NX
        );
        // A signalling NaN operand raises NV; quiet NaNs do not.
        let snan = 0x7ff0_0000_0000_0001;
        assert_eq!(arith_d(Arith::Add, snan, d(1.0), RNE), (CANON_D, flag::NV));
        assert_eq!(arith_d(Arith::Add, CANON_D | 5, d(1.0), RNE), (CANON_D, 0));
    }

    #[test]
    fn rounding_modes() {
        let third = |rm| f64::from_bits(arith_d(Arith::Div, d(1.0), d(3.0), rm).0);
        assert!(third(Round::TowardPositive) > third(Round::TowardNegative));
        assert_eq!(third(Round::TowardZero), third(Round::TowardNegative));
        assert_eq!(third(RNE), 1.0 / 3.0);
        // Ties: 1 + 2^-53 rounds to even (1) under RNE, away under RMM.
        let h = d(2f64.powi(-53));
        assert_eq!(arith_d(Arith::Add, d(1.0), h, RNE).0, d(1.0));
        assert_eq!(
            arith_d(Arith::Add, d(1.0), h, Round::NearestTiesToAway).0,
            d(1.0 + f64::EPSILON)
        );
    }

    #[test]
    fn sqrt_min_max_class_compare() {
        assert_eq!(sqrt::<D>(d(4.0), RNE), (d(2.0), 0));
        assert_eq!(sqrt::<D>(d(-1.0), RNE), (CANON_D, flag::NV));
        assert_eq!(sqrt::<D>(d(-0.0), RNE), (d(-0.0), 0));
        let up = f64::from_bits(sqrt::<D>(d(2.0), Round::TowardPositive).0);
        let dn = f64::from_bits(sqrt::<D>(d(2.0), Round::TowardZero).0);
        assert!(up > dn && (up * up > 2.0) && (dn * dn < 2.0));
        assert_eq!(sqrt::<S>(s(2.0), RNE), (s(2f32.sqrt()), flag::NX));
        assert_eq!(min_max::<D>(d(-0.0), d(0.0), false).0, d(-0.0));
        assert_eq!(min_max::<D>(d(-0.0), d(0.0), true).0, d(0.0));
        assert_eq!(min_max::<D>(CANON_D, d(1.0), true), (d(1.0), 0));
        assert_eq!(
            min_max::<D>(0x7ff0_0000_0000_0001, d(1.0), false),
            (d(1.0), flag::NV)
        );
        assert_eq!(min_max::<D>(CANON_D, CANON_D | 3, false), (CANON_D, 0));
        assert_eq!(compare::<D>(CANON_D, d(1.0), Cmp::Eq), (0, 0));
        assert_eq!(compare::<D>(CANON_D, d(1.0), Cmp::Lt), (0, flag::NV));
        assert_eq!(compare::<D>(d(-0.0), d(0.0), Cmp::Eq), (1, 0));
        assert_eq!(classify::<D>(d(f64::NEG_INFINITY)), 1);
        assert_eq!(classify::<D>(d(-0.0)), 1 << 3);
        assert_eq!(classify::<D>(d(5e-324)), 1 << 5);
        assert_eq!(classify::<D>(CANON_D), 1 << 9);
        assert_eq!(classify::<S>(CANON_S), 1 << 9);
        assert_eq!(classify::<S>(0x7f80_0001), 1 << 8);
    }

    #[test]
    fn conversions_saturate() {
        assert_eq!(
            to_int::<D>(d(3.7), true, 32, Round::TowardZero),
            (3, flag::NX)
        );
        assert_eq!(
            to_int::<D>(d(-3.5), true, 32, RNE),
            ((-4i64) as u64, flag::NX)
        );
        assert_eq!(
            to_int::<D>(d(-3.5), true, 32, Round::NearestTiesToAway),
            ((-4i64) as u64, flag::NX)
        );
        assert_eq!(
            to_int::<D>(d(2.5), true, 64, Round::NearestTiesToAway),
            (3, flag::NX)
        );
        assert_eq!(
            to_int::<D>(d(1e10), true, 32, RNE),
            (i32::MAX as u64, flag::NV)
        );
        assert_eq!(
            to_int::<D>(d(-1e10), true, 32, RNE),
            (i32::MIN as i64 as u64, flag::NV)
        );
        assert_eq!(
            to_int::<D>(CANON_D, true, 64, RNE),
            (i64::MAX as u64, flag::NV)
        );
        assert_eq!(to_int::<D>(d(-1.0), false, 64, RNE), (0, flag::NV));
        assert_eq!(to_int::<D>(d(-0.25), false, 64, RNE), (0, flag::NX));
        assert_eq!(to_int::<D>(CANON_D, false, 32, RNE), (u64::MAX, flag::NV));
        assert_eq!(to_int::<D>(d(4294967295.0), false, 32, RNE), (u64::MAX, 0));
        assert_eq!(to_int::<D>(d(1e300), false, 64, RNE), (u64::MAX, flag::NV));
        assert_eq!(
            to_int::<S>(s(f32::INFINITY), true, 64, RNE),
            (i64::MAX as u64, flag::NV)
        );
        assert_eq!(
            from_int::<S>(u64::MAX, false, 64, RNE),
            (s(1.8446744e19), flag::NX)
        );
        assert_eq!(from_int::<D>((-1i64) as u64, true, 32, RNE), (d(-1.0), 0));
        assert_eq!(
            from_int::<D>(0xffff_ffff, false, 32, RNE),
            (d(4294967295.0), 0)
        );
        assert_eq!(d_to_s(d(0.1), RNE), (s(0.1), flag::NX));
        assert_eq!(s_to_d(0x7f80_0001), (CANON_D, flag::NV));
        assert_eq!(
            d_to_s(d(1e300), RNE),
            (s(f32::INFINITY), flag::OF | flag::NX)
        );
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(5000))]

        #[test]
        fn host_fma_matches_software(
            a in proptest::num::f64::NORMAL | proptest::num::f64::ZERO,
            b in proptest::num::f64::NORMAL,
            c in proptest::num::f64::NORMAL | proptest::num::f64::ZERO,
            small in 0u32..3,
            np in proptest::bool::ANY,
            na in proptest::bool::ANY,
        ) {
            // Also operands of similar magnitude, where cancellation and
            // exact results are common.
            let (a, b, c) = match small {
                0 => (a, b, c),
                1 => ((a.fract() * 64.0).round(), (b.fract() * 64.0).round() / 8.0, (c.fract() * 512.0).round()),
                _ => (a.fract(), b.fract(), -(a.fract() * b.fract())),
            };
            proptest::prop_assert_eq!(
                fma::<D>(d(a), d(b), d(c), np, na, RNE),
                fma_soft::<D>(d(a), d(b), d(c), np, na, RNE)
            );
            let (x, y, z) = (a as f32, b as f32, c as f32);
            proptest::prop_assert_eq!(
                fma::<S>(s(x), s(y), s(z), np, na, RNE),
                fma_soft::<S>(s(x), s(y), s(z), np, na, RNE)
            );
        }

        #[test]
        fn host_arith_matches_software(a in proptest::num::f64::ANY, b in proptest::num::f64::ANY, k in 0u32..2) {
            let (a, b) = if k == 0 { (a, b) } else { ((a.fract() * 1024.0).round() / 16.0, (b.fract() * 64.0).round()) };
            for op in [Arith::Add, Arith::Sub, Arith::Mul, Arith::Div] {
                proptest::prop_assert_eq!(arith_d(op, d(a), d(b), RNE), arith_soft::<D>(op, d(a), d(b), RNE));
                let (x, y) = (s(a as f32), s(b as f32));
                proptest::prop_assert_eq!(arith_s(op, x, y, RNE), arith_soft::<S>(op, x, y, RNE));
            }
        }
    }

    #[test]
    fn fused_multiply_add() {
        // ∞ × 0 + qNaN is invalid.
        assert_eq!(
            fma::<D>(d(f64::INFINITY), d(0.0), CANON_D, false, false, RNE),
            (CANON_D, flag::NV)
        );
        assert_eq!(
            fma::<D>(d(2.0), d(3.0), d(1.0), false, false, RNE),
            (d(7.0), 0)
        );
        assert_eq!(
            fma::<D>(d(2.0), d(3.0), d(1.0), true, false, RNE),
            (d(-5.0), 0)
        ); // fnmsub
        assert_eq!(
            fma::<D>(d(2.0), d(3.0), d(1.0), true, true, RNE),
            (d(-7.0), 0)
        ); // fnmadd
        assert_eq!(
            fma::<D>(d(2.0), d(3.0), d(1.0), false, true, RNE),
            (d(5.0), 0)
        ); // fmsub
        assert_eq!(sign_inject::<D>(d(1.0), d(-2.0), 0), d(-1.0));
        assert_eq!(sign_inject::<D>(d(-1.0), d(-2.0), 1), d(1.0));
        assert_eq!(sign_inject::<D>(d(-1.0), d(-2.0), 2), d(1.0));
        assert_eq!(unbox_s(0x0000_0000_3f80_0000), CANON_S);
        assert_eq!(unbox_s(box_s(0x3f80_0000)), 0x3f80_0000);
    }
}
