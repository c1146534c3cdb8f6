//! Expansion of compressed (RVC) instructions to their 32-bit equivalents.
//!
//! RISC-V Unprivileged ISA 20191213, §16 "C" Standard Extension: every RVC
//! instruction expands to one base instruction (§16.1); the listing is
//! Table 16.5–16.7 (RVC opcode map) with the encodings of §16.3–§16.7. The
//! reserved encodings (§16.8: all-zero bits, `c.addi4spn` with a zero
//! immediate, `c.lwsp`/`c.ldsp` into x0, `c.jr` from x0, `c.addi16sp` and
//! `c.lui` with a zero immediate, `c.addiw` into x0, the reserved ALU
//! forms) return `None`; HINT encodings expand to their harmless base form.

use crate::encode::{b_type, i_type, j_type, r_type, s_type};

/// Expands the compressed instruction `c` to a 32-bit instruction, or
/// `None` if the encoding is reserved or not defined for RV64.
pub fn expand(c: u16) -> Option<u32> {
    let c = c as u32;
    let f3 = (c >> 13) & 7;
    let bit = |n: u32| (c >> n) & 1;
    let bits = |hi: u32, lo: u32| (c >> lo) & ((1 << (hi - lo + 1)) - 1);
    // Registers x8–x15 in the 3-bit fields (§16.2).
    let rp = |lo: u32| 8 + bits(lo + 2, lo);
    let rd_full = bits(11, 7);
    let rs2_full = bits(6, 2);
    // The 6-bit signed immediate of CI format: imm[5] is bit 12.
    let imm6 = sext((bit(12) << 5) | bits(6, 2), 6);
    match (c & 3, f3) {
        (0, 0) => {
            // c.addi4spn: nzuimm[5:4|9:6|2|3] in bits 12:5.
            let imm = (bits(12, 11) << 4) | (bits(10, 7) << 6) | (bit(6) << 2) | (bit(5) << 3);
            if imm == 0 {
                return None;
            }
            Some(i_type(0x13, rp(2), 0, 2, imm as i32))
        }
        (0, 1) | (0, 3) => {
            // c.fld / c.ld: uimm[5:3] in 12:10, uimm[7:6] in 6:5.
            let imm = (bits(12, 10) << 3) | (bits(6, 5) << 6);
            let (opc, f) = if f3 == 1 { (0x07, 3) } else { (0x03, 3) };
            Some(i_type(opc, rp(2), f, rp(7), imm as i32))
        }
        (0, 2) => {
            // c.lw: uimm[5:3] in 12:10, uimm[2] in 6, uimm[6] in 5.
            let imm = (bits(12, 10) << 3) | (bit(6) << 2) | (bit(5) << 6);
            Some(i_type(0x03, rp(2), 2, rp(7), imm as i32))
        }
        (0, 5) | (0, 7) => {
            let imm = (bits(12, 10) << 3) | (bits(6, 5) << 6);
            let opc = if f3 == 5 { 0x27 } else { 0x23 };
            Some(s_type(opc, 3, rp(7), rp(2), imm as i32))
        }
        (0, 6) => {
            let imm = (bits(12, 10) << 3) | (bit(6) << 2) | (bit(5) << 6);
            Some(s_type(0x23, 2, rp(7), rp(2), imm as i32))
        }
        (0, _) => None,
        // c.nop / c.addi
        (1, 0) => Some(i_type(0x13, rd_full, 0, rd_full, imm6)),
        // c.addiw (RV64): rd = 0 is reserved.
        (1, 1) => {
            if rd_full == 0 {
                return None;
            }
            Some(i_type(0x1b, rd_full, 0, rd_full, imm6))
        }
        // c.li
        (1, 2) => Some(i_type(0x13, rd_full, 0, 0, imm6)),
        (1, 3) => {
            if rd_full == 2 {
                // c.addi16sp: nzimm[9] in 12, nzimm[4|6|8:7|5] in 6:2.
                let imm = (bit(12) << 9)
                    | (bit(6) << 4)
                    | (bit(5) << 6)
                    | (bits(4, 3) << 7)
                    | (bit(2) << 5);
                if imm == 0 {
                    return None;
                }
                Some(i_type(0x13, 2, 0, 2, sext(imm, 10)))
            } else {
                // c.lui: nzimm[17] in 12, nzimm[16:12] in 6:2.
                if imm6 == 0 {
                    return None;
                }
                Some(((imm6 as u32) << 12) | (rd_full << 7) | 0x37)
            }
        }
        (1, 4) => {
            let rd = rp(7);
            match bits(11, 10) {
                0 => Some(i_type(
                    0x13,
                    rd,
                    5,
                    rd,
                    ((bit(12) << 5) | bits(6, 2)) as i32,
                )),
                1 => Some(i_type(
                    0x13,
                    rd,
                    5,
                    rd,
                    ((bit(12) << 5) | bits(6, 2) | 0x400) as i32,
                )),
                2 => Some(i_type(0x13, rd, 7, rd, imm6)),
                _ => {
                    let rs2 = rp(2);
                    let (f7, f3, opc) = match (bit(12), bits(6, 5)) {
                        (0, 0) => (0x20, 0, 0x33), // c.sub
                        (0, 1) => (0, 4, 0x33),    // c.xor
                        (0, 2) => (0, 6, 0x33),    // c.or
                        (0, 3) => (0, 7, 0x33),    // c.and
                        (1, 0) => (0x20, 0, 0x3b), // c.subw
                        (1, 1) => (0, 0, 0x3b),    // c.addw
                        _ => return None,
                    };
                    Some(r_type(opc, rd, f3, rd, rs2, f7))
                }
            }
        }
        (1, 5) => {
            // c.j: imm[11|4|9:8|10|6|7|3:1|5] in 12:2.
            let imm = (bit(12) << 11)
                | (bit(11) << 4)
                | (bits(10, 9) << 8)
                | (bit(8) << 10)
                | (bit(7) << 6)
                | (bit(6) << 7)
                | (bits(5, 3) << 1)
                | (bit(2) << 5);
            Some(j_type(0, sext(imm, 12)))
        }
        (1, 6) | (1, 7) => {
            // c.beqz / c.bnez: offset[8|4:3] in 12:10, [7:6|2:1|5] in 6:2.
            let imm = (bit(12) << 8)
                | (bits(11, 10) << 3)
                | (bits(6, 5) << 6)
                | (bits(4, 3) << 1)
                | (bit(2) << 5);
            Some(b_type(f3 - 6, rp(7), 0, sext(imm, 9)))
        }
        // c.slli (shamt 0 is a HINT)
        (2, 0) => Some(i_type(
            0x13,
            rd_full,
            1,
            rd_full,
            ((bit(12) << 5) | bits(6, 2)) as i32,
        )),
        (2, 1) | (2, 3) => {
            // c.fldsp / c.ldsp: uimm[5] in 12, uimm[4:3|8:6] in 6:2.
            let imm = (bit(12) << 5) | (bits(6, 5) << 3) | (bits(4, 2) << 6);
            if f3 == 3 && rd_full == 0 {
                return None;
            }
            let opc = if f3 == 1 { 0x07 } else { 0x03 };
            Some(i_type(opc, rd_full, 3, 2, imm as i32))
        }
        (2, 2) => {
            // c.lwsp: uimm[5] in 12, uimm[4:2|7:6] in 6:2.
            if rd_full == 0 {
                return None;
            }
            let imm = (bit(12) << 5) | (bits(6, 4) << 2) | (bits(3, 2) << 6);
            Some(i_type(0x03, rd_full, 2, 2, imm as i32))
        }
        (2, 4) => match (bit(12), rd_full, rs2_full) {
            (0, 0, 0) => None,                                     // c.jr x0
            (0, rs1, 0) => Some(i_type(0x67, 0, 0, rs1, 0)),       // c.jr
            (0, rd, rs2) => Some(r_type(0x33, rd, 0, 0, rs2, 0)),  // c.mv
            (_, 0, 0) => Some(0x0010_0073),                        // c.ebreak
            (_, rs1, 0) => Some(i_type(0x67, 1, 0, rs1, 0)),       // c.jalr
            (_, rd, rs2) => Some(r_type(0x33, rd, 0, rd, rs2, 0)), // c.add
        },
        (2, 5) | (2, 7) => {
            // c.fsdsp / c.sdsp: uimm[5:3|8:6] in 12:7.
            let imm = (bits(12, 10) << 3) | (bits(9, 7) << 6);
            let opc = if f3 == 5 { 0x27 } else { 0x23 };
            Some(s_type(opc, 3, 2, rs2_full, imm as i32))
        }
        (2, 6) => {
            // c.swsp: uimm[5:2|7:6] in 12:7.
            let imm = (bits(12, 9) << 2) | (bits(8, 7) << 6);
            Some(s_type(0x23, 2, 2, rs2_full, imm as i32))
        }
        _ => None,
    }
}

/// Sign-extends the low `width` bits of `v`.
fn sext(v: u32, width: u32) -> i32 {
    let shift = 32 - width;
    ((v << shift) as i32) >> shift
}

#[cfg(test)]
// Binary literals below are grouped by instruction field, not by nibble.
#[allow(clippy::unusual_byte_groupings)]
mod tests {
    use super::*;

    // Expected expansions are the 32-bit encodings GNU as produces for the
    // same assembly (checked with riscv64-linux-gnu-objdump).
    #[test]
    fn expands_each_quadrant() {
        // c.addi4spn a0, sp, 16 -> addi a0, sp, 16
        assert_eq!(expand(0x0808), Some(0x0101_0513));
        // c.ld a0, 8(a1) -> ld a0, 8(a1)
        assert_eq!(expand(0x6588), Some(0x0085_b503));
        // c.lw a0, 4(a1) -> lw a0, 4(a1)
        assert_eq!(expand(0x41c8), Some(0x0045_a503));
        // c.sd a0, 8(a1) -> sd a0, 8(a1)
        assert_eq!(expand(0xe588), Some(0x00a5_b423));
        // c.fld fa0, 8(a1) -> fld fa0, 8(a1)
        assert_eq!(expand(0x2588), Some(0x0085_b507));
        // c.li a0, -1 -> addi a0, zero, -1
        assert_eq!(expand(0x557d), Some(0xfff0_0513));
        // c.lui a0, 0x1 -> lui a0, 0x1
        assert_eq!(expand(0x6505), Some(0x0000_1537));
        // c.lui a0, 0xfffff -> lui a0, 0xfffff
        assert_eq!(expand(0x757d), Some(0xffff_f537));
        // c.addi16sp sp, -64 -> addi sp, sp, -64
        assert_eq!(expand(0x7139), Some(0xfc01_0113));
        // c.addiw a0, 1 -> addiw a0, a0, 1
        assert_eq!(expand(0x2505), Some(0x0015_051b));
        // c.srli a0, 1 ; c.srai a0, 63 ; c.andi a0, -1
        assert_eq!(expand(0x8105), Some(0x0015_5513));
        assert_eq!(expand(0x957d), Some(0x43f5_5513));
        assert_eq!(expand(0x997d), Some(0xfff5_7513));
        // c.sub a0, a1 ; c.and a0, a1 ; c.addw a0, a1
        assert_eq!(expand(0x8d0d), Some(0x40b5_0533));
        assert_eq!(expand(0x8d6d), Some(0x00b5_7533));
        assert_eq!(expand(0x9d2d), Some(0x00b5_053b));
        // c.j . (offset 0) -> jal zero, 0
        assert_eq!(expand(0xa001), Some(0x0000_006f));
        // c.beqz a0, +8 -> beq a0, zero, 8
        assert_eq!(expand(0xc501), Some(0x0005_0463));
        // c.bnez a0, -2 -> bne a0, zero, -2
        assert_eq!(expand(0xfd7d), Some(0xfe05_1fe3));
        // c.slli a0, 3 -> slli a0, a0, 3
        assert_eq!(expand(0x050e), Some(0x0035_1513));
        // c.ldsp ra, 8(sp) -> ld ra, 8(sp)
        assert_eq!(expand(0x60a2), Some(0x0081_3083));
        // c.lwsp a0, 4(sp) -> lw a0, 4(sp)
        assert_eq!(expand(0x4512), Some(0x0041_2503));
        // c.sdsp ra, 8(sp) -> sd ra, 8(sp)
        assert_eq!(expand(0xe406), Some(0x0011_3423));
        // c.swsp a0, 4(sp) -> sw a0, 4(sp)
        assert_eq!(expand(0xc22a), Some(0x00a1_2223));
        // c.jr ra (ret), c.jalr a5, c.mv a0, a1, c.add a0, a1, c.ebreak
        assert_eq!(expand(0x8082), Some(0x0000_8067));
        assert_eq!(expand(0x9782), Some(0x0007_80e7));
        assert_eq!(expand(0x852e), Some(0x00b0_0533));
        assert_eq!(expand(0x952e), Some(0x00b5_0533));
        assert_eq!(expand(0x9002), Some(0x0010_0073));
    }

    #[test]
    fn reserved_encodings() {
        assert_eq!(expand(0x0000), None); // defined illegal instruction
        assert_eq!(expand(0x8002), None); // c.jr x0
        assert_eq!(expand(0x4002), None); // c.lwsp x0
        assert_eq!(expand(0x6002), None); // c.ldsp x0
        assert_eq!(expand(0x6101), None); // c.addi16sp 0
        assert_eq!(expand(0x2001), None); // c.addiw x0
        assert_eq!(expand(0x8000), None); // quadrant 0, funct3 4
        assert_eq!(expand(0x9d4d), None); // c.subw reserved slot (10)
    }

    /// The fields of a 32-bit instruction (§2.2, Figure 2.3), for checking
    /// an expansion field by field.
    #[derive(Debug, PartialEq, Eq)]
    struct Fields {
        opcode: u32,
        rd: u32,
        funct3: u32,
        rs1: u32,
        rs2: u32,
        funct7: u32,
    }

    fn fields(w: u32) -> Fields {
        Fields {
            opcode: w & 0x7f,
            rd: (w >> 7) & 31,
            funct3: (w >> 12) & 7,
            rs1: (w >> 15) & 31,
            rs2: (w >> 20) & 31,
            funct7: w >> 25,
        }
    }

    /// The I-type immediate, sign-extended.
    fn imm_i(w: u32) -> i32 {
        (w as i32) >> 20
    }

    /// The S-type immediate, sign-extended.
    fn imm_s(w: u32) -> i32 {
        (((w & 0xfe00_0000) as i32) >> 20) | ((w >> 7) & 31) as i32
    }

    // Each 16-bit word below is encoded by hand from the RVC formats of
    // §16.3-§16.6 (Table 16.1 for the field positions, Table 16.2 for the
    // 3-bit register numbers x8-x15 / f8-f15), with every immediate bit set
    // that the format allows where that is possible, so a misplaced bit
    // shows. GNU as produces the same words for the assembly shown.

    #[test]
    fn c_sw_scatters_its_offset_bits() {
        // c.sw a2, 124(a3): 110 | uimm[5:3]=111 | rs1'=101 | uimm[2]=1 |
        // uimm[6]=1 | rs2'=100 | 00.
        let w = expand(0b110_111_101_1_1_100_00).unwrap();
        let f = fields(w);
        assert_eq!((f.opcode, f.funct3), (0x23, 2), "sw");
        assert_eq!((f.rs1, f.rs2), (13, 12));
        assert_eq!(imm_s(w), 124);
    }

    #[test]
    fn c_fsd_is_a_double_store_from_an_fp_register() {
        // c.fsd fa5, 248(a0): 101 | uimm[5:3]=111 | rs1'=010 |
        // uimm[7:6]=11 | rs2'=111 (f15) | 00.
        let w = expand(0b101_111_010_11_111_00).unwrap();
        let f = fields(w);
        assert_eq!((f.opcode, f.funct3), (0x27, 3), "fsd");
        assert_eq!((f.rs1, f.rs2), (10, 15));
        assert_eq!(imm_s(w), 248);
    }

    #[test]
    fn c_fldsp_loads_a_double_from_the_stack() {
        // c.fldsp fs0, 504(sp): 001 | uimm[5]=1 | rd=01000 | uimm[4:3]=11 |
        // uimm[8:6]=111 | 10.
        let w = expand(0b001_1_01000_11_111_10).unwrap();
        let f = fields(w);
        assert_eq!((f.opcode, f.funct3), (0x07, 3), "fld");
        assert_eq!((f.rd, f.rs1), (8, 2));
        assert_eq!(imm_i(w), 504);
        // Unlike c.ldsp, rd = 0 is allowed: f0 is a real register.
        let w = expand(0b001_0_00000_00_000_10).unwrap();
        assert_eq!(fields(w).opcode, 0x07);
        assert_eq!((fields(w).rd, fields(w).rs1, imm_i(w)), (0, 2, 0));
    }

    #[test]
    fn c_fsdsp_stores_a_double_to_the_stack() {
        // c.fsdsp fs1, 264(sp): 101 | uimm[5:3]=001 | uimm[8:6]=100 |
        // rs2=01001 | 10.
        let w = expand(0b101_001_100_01001_10).unwrap();
        let f = fields(w);
        assert_eq!((f.opcode, f.funct3), (0x27, 3), "fsd");
        assert_eq!((f.rs1, f.rs2), (2, 9));
        assert_eq!(imm_s(w), 264);
    }

    #[test]
    fn c_xor_or_subw_are_register_register_alu_ops() {
        // 100 | bit 12 | 11 | rd'/rs1' | funct2 | rs2' | 01.
        // c.xor s0, s1: bit 12 = 0, funct2 = 01.
        let f = fields(expand(0b100_0_11_000_01_001_01).unwrap());
        assert_eq!(
            f,
            Fields {
                opcode: 0x33,
                rd: 8,
                funct3: 4,
                rs1: 8,
                rs2: 9,
                funct7: 0
            }
        );
        // c.or a4, a5: bit 12 = 0, funct2 = 10.
        let f = fields(expand(0b100_0_11_110_10_111_01).unwrap());
        assert_eq!(
            f,
            Fields {
                opcode: 0x33,
                rd: 14,
                funct3: 6,
                rs1: 14,
                rs2: 15,
                funct7: 0
            }
        );
        // c.subw a0, a1: bit 12 = 1, funct2 = 00 -> subw (OP-32, funct7 0x20).
        let f = fields(expand(0b100_1_11_010_00_011_01).unwrap());
        assert_eq!(
            f,
            Fields {
                opcode: 0x3b,
                rd: 10,
                funct3: 0,
                rs1: 10,
                rs2: 11,
                funct7: 0x20
            }
        );
    }

    #[test]
    fn c_nop_is_addi_x0_x0_0() {
        // c.nop: 000 | 0 | rd=00000 | imm=00000 | 01.
        assert_eq!(expand(0b000_0_00000_00000_01), Some(0x0000_0013));
    }
}
