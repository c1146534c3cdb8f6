//! The results of the bit-manipulation extensions Zba, Zbb, Zbc and Zbs
//! (RISC-V Bit-Manipulation ISA-extensions, version 1.0.0), as the
//! interpreter computes them: Zba, Zbb and Zbs are the B of the RVA22U64
//! profile, which compilers use for `-march=rv64gc_zba_zbb_zbs` and later
//! profiles (address arithmetic of scaled indices, counts of leading and
//! trailing zeros, population count, byte reversal, rotations, minimum and
//! maximum, single bits); Zbc's carry-less products serve CRCs and
//! Galois-field arithmetic.
//!
//! Each arm follows the instruction's pseudocode in §1.5 of the
//! specification, written here with Rust's own integer operations rather
//! than the shifts and masks a translation uses, so that the translator's
//! property tests compare two different derivations.

use crate::op::Kind;

/// The result of the Zba, Zbb, Zbc or Zbs op `kind` (one of
/// [`bit_manip!`](crate::op::bit_manip)) with `a` in rs1, `b` in rs2 and
/// the decoded immediate `imm` (a shift amount or bit index).
pub(crate) fn bit_op(kind: Kind, a: u64, b: u64, imm: i64) -> u64 {
    let low = a as u32;
    let word = |w: u32| w as i32 as i64 as u64;
    match kind {
        // Zba (§1.4.1): rs1, or its low word zero-extended (.uw), shifted
        // left by 1 to 3 and added to rs2.
        Kind::Sh1add => (a << 1).wrapping_add(b),
        Kind::Sh2add => (a << 2).wrapping_add(b),
        Kind::Sh3add => (a << 3).wrapping_add(b),
        Kind::AddUw => (low as u64).wrapping_add(b),
        Kind::Sh1addUw => ((low as u64) << 1).wrapping_add(b),
        Kind::Sh2addUw => ((low as u64) << 2).wrapping_add(b),
        Kind::Sh3addUw => ((low as u64) << 3).wrapping_add(b),
        Kind::SlliUw => (low as u64) << (imm & 63),
        // Zbb (§1.4.2): logic with a negated operand.
        Kind::Andn => a & !b,
        Kind::Orn => a | !b,
        Kind::Xnor => !(a ^ b),
        // Counts: of a zero register, its width.
        Kind::Clz => a.leading_zeros() as u64,
        Kind::Clzw => low.leading_zeros() as u64,
        Kind::Ctz => a.trailing_zeros() as u64,
        Kind::Ctzw => low.trailing_zeros() as u64,
        Kind::Cpop => a.count_ones() as u64,
        Kind::Cpopw => low.count_ones() as u64,
        Kind::Max => (a as i64).max(b as i64) as u64,
        Kind::Maxu => a.max(b),
        Kind::Min => (a as i64).min(b as i64) as u64,
        Kind::Minu => a.min(b),
        Kind::SextB => a as i8 as i64 as u64,
        Kind::SextH => a as i16 as i64 as u64,
        Kind::ZextH => a as u16 as u64,
        // Rotations: by rs2's low 6 bits, or 5 for a word, whose result
        // is sign-extended as every *w result is.
        Kind::Rol => a.rotate_left((b & 63) as u32),
        Kind::Ror => a.rotate_right((b & 63) as u32),
        Kind::Rori => a.rotate_right((imm & 63) as u32),
        Kind::Rolw => word(low.rotate_left((b & 31) as u32)),
        Kind::Rorw => word(low.rotate_right((b & 31) as u32)),
        Kind::Roriw => word(low.rotate_right((imm & 31) as u32)),
        // Each byte all ones if any of its bits is set, else zero.
        Kind::OrcB => u64::from_le_bytes(a.to_le_bytes().map(|x| if x != 0 { 0xff } else { 0 })),
        Kind::Rev8 => a.swap_bytes(),
        // Zbc (§1.4.3): the low half, the high half, and bits 126 to 63
        // of the 128-bit carry-less product.
        Kind::Clmul => carryless(a, b) as u64,
        Kind::Clmulh => (carryless(a, b) >> 64) as u64,
        Kind::Clmulr => (carryless(a, b) >> 63) as u64,
        // Zbs (§1.4.4): the bit rs2 (or the immediate) names, mod 64.
        Kind::Bclr => a & !(1 << (b & 63)),
        Kind::Bclri => a & !(1 << (imm & 63)),
        Kind::Bext => (a >> (b & 63)) & 1,
        Kind::Bexti => (a >> (imm & 63)) & 1,
        Kind::Binv => a ^ (1 << (b & 63)),
        Kind::Binvi => a ^ (1 << (imm & 63)),
        Kind::Bset => a | (1 << (b & 63)),
        Kind::Bseti => a | (1 << (imm & 63)),
        _ => unreachable!("{kind:?} is not a bit-manipulation op"),
    }
}

/// The carry-less product of `a` and `b`: `a` shifted by each set bit of
/// `b`, the shifts combined by exclusive or.
fn carryless(a: u64, b: u64) -> u128 {
    (0..64)
        .filter(|i| b >> i & 1 == 1)
        .fold(0u128, |acc, i| acc ^ (a as u128) << i)
}

#[cfg(test)]
mod tests {
    use super::*;
    use Kind::*;

    /// Values a hand can check, from the specification's descriptions.
    #[test]
    fn results_of_the_specifications_descriptions() {
        let cases: [(Kind, u64, u64, i64, u64); 40] = [
            (Sh1add, 5, 100, 0, 110),
            (Sh2add, 5, 100, 0, 120),
            (Sh3add, u64::MAX, 8, 0, 0),
            // The .uw forms take rs1's low word, zero-extended.
            (AddUw, 0xffff_ffff_8000_0000, 1, 0, 0x8000_0001),
            (Sh1addUw, 0x1_8000_0000, 0, 0, 0x1_0000_0000),
            (Sh2addUw, 0xffff_ffff, 4, 0, 0x4_0000_0000),
            (Sh3addUw, 2, 1, 0, 17),
            (SlliUw, 0xdead_0000_ffff_ffff, 0, 63, 1 << 63),
            (Andn, 0b1100, 0b1010, 0, 0b0100),
            (Orn, 0, u64::MAX - 1, 0, 1),
            (Xnor, 0xff, 0x0f, 0, !0xf0),
            (Clz, 0, 0, 0, 64),
            (Clz, 1, 0, 0, 63),
            (Clzw, 0xffff_ffff_0000_0000, 0, 0, 32),
            (Clzw, 0x8000_0000, 0, 0, 0),
            (Ctz, 0, 0, 0, 64),
            (Ctz, 1 << 40, 0, 0, 40),
            (Ctzw, 1 << 40, 0, 0, 32),
            (Cpop, u64::MAX, 0, 0, 64),
            (Cpopw, u64::MAX, 0, 0, 32),
            (Max, u64::MAX, 1, 0, 1),
            (Maxu, u64::MAX, 1, 0, u64::MAX),
            (Min, u64::MAX, 1, 0, u64::MAX),
            (Minu, u64::MAX, 1, 0, 1),
            (SextB, 0x1_80, 0, 0, 0xffff_ffff_ffff_ff80),
            (SextH, 0x7fff, 0, 0, 0x7fff),
            (ZextH, u64::MAX, 0, 0, 0xffff),
            (Rol, 0x8000_0000_0000_0001, 65, 0, 3),
            (Ror, 1, 1, 0, 1 << 63),
            (Rori, 0x1234, 0, 8, 0x3400_0000_0000_0012),
            // Word rotations sign-extend their 32-bit result.
            (Rolw, 0x4000_0000, 1, 0, 0xffff_ffff_8000_0000),
            (Rorw, 1, 33, 0, 0xffff_ffff_8000_0000),
            (Roriw, 0xffff_ffff_0000_0002, 0, 1, 1),
            (OrcB, 0x0001_0000_8000_ff00, 0, 0, 0x00ff_0000_ff00_ff00),
            (Rev8, 0x0102_0304_0506_0708, 0, 0, 0x0807_0605_0403_0201),
            (Bclr, u64::MAX, 64 + 3, 0, !8),
            (Bext, 1 << 63, 63, 0, 1),
            (Bexti, 1 << 63, 0, 62, 0),
            (Binv, 0, 127, 0, 1 << 63),
            (Bseti, 0, 0, 5, 32),
        ];
        for (kind, a, b, imm, want) in cases {
            assert_eq!(
                bit_op(kind, a, b, imm),
                want,
                "{kind:?} {a:#x} {b:#x} {imm}"
            );
        }
        assert_eq!(bit_op(Bclri, 0xff, 0, 0), 0xfe);
        assert_eq!(bit_op(Binvi, 0xff, 0, 63), 0xff | 1 << 63);
        assert_eq!(bit_op(Bset, 0, 70, 0), 1 << 6);
        // (x + 1)(x + 1) = x^2 + 1 without carries; the top bit times x
        // leaves the low half for the high one.
        assert_eq!(bit_op(Clmul, 3, 3, 0), 5);
        assert_eq!(bit_op(Clmulh, 3, 3, 0), 0);
        assert_eq!(bit_op(Clmul, 1 << 63, 2, 0), 0);
        assert_eq!(bit_op(Clmulh, 1 << 63, 2, 0), 1);
        assert_eq!(bit_op(Clmulr, 1 << 63, 2, 0), 2);
        assert_eq!(bit_op(Clmulr, 1 << 63, 1 << 63, 0), 1 << 63);
        assert_eq!(bit_op(Clmulh, u64::MAX, u64::MAX, 0), 0x5555_5555_5555_5555);
    }

    /// Bit `i` of `x`.
    fn bit(x: u64, i: u32) -> u64 {
        (x >> i) & 1
    }

    /// A value from its bits, bit `i` given by `f(i)`.
    fn from_bits(width: u32, f: impl Fn(u32) -> u64) -> u64 {
        (0..width).fold(0, |v, i| v | f(i) << i)
    }

    /// The word `w` sign-extended to 64 bits, bit by bit.
    fn sext32(w: u64) -> u64 {
        from_bits(64, |i| bit(w, i.min(31)))
    }

    /// Each op one bit at a time, as the specification's pseudocode loops
    /// (§1.5): a second derivation, for the property test below.
    fn by_bits(kind: Kind, a: u64, b: u64, imm: i64) -> u64 {
        let lead = |x: u64, w: u32| (0..w).rev().take_while(|&i| bit(x, i) == 0).count() as u64;
        let trail = |x: u64, w: u32| (0..w).take_while(|&i| bit(x, i) == 0).count() as u64;
        let ones = |x: u64, w: u32| (0..w).map(|i| bit(x, i)).sum::<u64>();
        let rotr = |x: u64, n: u32, w: u32| from_bits(w, |i| bit(x, (i + n) % w));
        let low = a & 0xffff_ffff;
        // Bit k of the carry-less product: the parity of a_i b_j, i + j = k.
        let clmul_bit = |k: u32| {
            (0..64)
                .filter(|&i| i <= k && k - i < 64)
                .fold(0, |p, i| p ^ (bit(a, i) & bit(b, k - i)))
        };
        let sh = (imm & 63) as u32;
        match kind {
            Sh1add => a.wrapping_mul(2).wrapping_add(b),
            Sh2add => a.wrapping_mul(4).wrapping_add(b),
            Sh3add => a.wrapping_mul(8).wrapping_add(b),
            AddUw => low.wrapping_add(b),
            Sh1addUw => (low * 2).wrapping_add(b),
            Sh2addUw => (low * 4).wrapping_add(b),
            Sh3addUw => (low * 8).wrapping_add(b),
            SlliUw => from_bits(64, |i| if i >= sh { bit(low, i - sh) } else { 0 }),
            Andn => from_bits(64, |i| bit(a, i) & (1 - bit(b, i))),
            Orn => from_bits(64, |i| bit(a, i) | (1 - bit(b, i))),
            Xnor => from_bits(64, |i| 1 - (bit(a, i) ^ bit(b, i))),
            Clz => lead(a, 64),
            Clzw => lead(low, 32),
            Ctz => trail(a, 64),
            Ctzw => trail(low, 32),
            Cpop => ones(a, 64),
            Cpopw => ones(low, 32),
            // Signed order: flip the sign bits, then compare unsigned.
            Max | Min => {
                let flip = 1 << 63;
                let a_first = (a ^ flip) > (b ^ flip);
                if a_first == (kind == Max) {
                    a
                } else {
                    b
                }
            }
            Maxu => {
                if a > b {
                    a
                } else {
                    b
                }
            }
            Minu => {
                if a < b {
                    a
                } else {
                    b
                }
            }
            SextB => from_bits(64, |i| bit(a, i.min(7))),
            SextH => from_bits(64, |i| bit(a, i.min(15))),
            ZextH => from_bits(16, |i| bit(a, i)),
            Rol => rotr(a, (64 - (b & 63) as u32) % 64, 64),
            Ror => rotr(a, (b & 63) as u32, 64),
            Rori => rotr(a, sh, 64),
            Rolw => sext32(rotr(low, (32 - (b & 31) as u32) % 32, 32)),
            Rorw => sext32(rotr(low, (b & 31) as u32, 32)),
            Roriw => sext32(rotr(low, sh & 31, 32)),
            OrcB => from_bits(64, |i| (a >> (i / 8 * 8) & 0xff != 0) as u64),
            Rev8 => from_bits(64, |i| bit(a, (7 - i / 8) * 8 + i % 8)),
            Clmul => from_bits(64, clmul_bit),
            Clmulh => from_bits(64, |i| clmul_bit(i + 64)),
            Clmulr => from_bits(64, |i| clmul_bit(i + 63)),
            Bclr => from_bits(64, |i| if i as u64 == b & 63 { 0 } else { bit(a, i) }),
            Bclri => from_bits(64, |i| if i == sh { 0 } else { bit(a, i) }),
            Bext => bit(a, (b & 63) as u32),
            Bexti => bit(a, sh),
            Binv => from_bits(64, |i| bit(a, i) ^ (i as u64 == b & 63) as u64),
            Binvi => from_bits(64, |i| bit(a, i) ^ (i == sh) as u64),
            Bset => from_bits(64, |i| bit(a, i) | (i as u64 == b & 63) as u64),
            Bseti => from_bits(64, |i| bit(a, i) | (i == sh) as u64),
            _ => unreachable!(),
        }
    }

    const EVERY: [Kind; 43] = [
        Sh1add, Sh2add, Sh3add, AddUw, Sh1addUw, Sh2addUw, Sh3addUw, SlliUw, Andn, Orn, Xnor, Clz,
        Clzw, Ctz, Ctzw, Cpop, Cpopw, Max, Maxu, Min, Minu, SextB, SextH, ZextH, Rol, Rolw, Ror,
        Rori, Roriw, Rorw, OrcB, Rev8, Clmul, Clmulh, Clmulr, Bclr, Bclri, Bext, Bexti, Binv,
        Binvi, Bset, Bseti,
    ];

    /// Values with runs of zeros and ones, bytes of zero, and words of
    /// zero, where the counts and `orc.b` have their edges.
    fn value() -> impl proptest::strategy::Strategy<Value = u64> {
        use proptest::prelude::*;
        prop_oneof![
            any::<u64>(),
            (any::<u64>(), any::<u64>()).prop_map(|(x, m)| x & m & m.rotate_left(17)),
            any::<u32>().prop_map(|w| (w as u64) << 32),
            any::<u32>().prop_map(|w| w as u64),
            (0u32..64).prop_map(|i| 1u64 << i),
            (0u32..64).prop_map(|i| u64::MAX >> i),
        ]
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig { cases: 2000, ..Default::default() })]

        /// Every op agrees with its definition one bit at a time.
        #[test]
        fn every_op_is_its_bitwise_definition(a in value(), b in value(), imm in 0i64..64) {
            for kind in EVERY {
                proptest::prop_assert_eq!(
                    bit_op(kind, a, b, imm),
                    by_bits(kind, a, b, imm),
                    "{:?} {:#x} {:#x} {}", kind, a, b, imm
                );
            }
        }
    }
}
