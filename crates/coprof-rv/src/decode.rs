//! The instruction decoder: raw bits to a pre-decoded [`Op`].
//!
//! Follows the base instruction formats of the RISC-V Unprivileged ISA
//! (version 20191213, §2.2 formats and §2.3 immediate encodings), the RV64I
//! opcode map (§5, Table 24.1 "RISC-V base opcode map"), and the M, A, F, D,
//! Zicsr and Zifencei listings in chapter 24 ("RV32/64G Instruction Set
//! Listings"), and for Zba, Zbb, Zbc and Zbs the RISC-V Bit-Manipulation
//! ISA-extensions, version 1.0.0 (§1.4, the instructions' pages in §1.5,
//! RV64 encodings). Compressed instructions are first expanded to their 32-bit
//! equivalents (§16, see [`crate::rvc`]). Every encoding that the
//! specification leaves reserved decodes to [`Kind::Illegal`]; the decoder
//! itself never fails and never panics, whatever the bits.

use crate::op::{Emit, Kind, Op, ZERO_SINK};
use crate::rvc;
use coprof_core::Class;

/// Decodes the instruction whose first 32 bits (little-endian, possibly
/// including the next instruction for a 16-bit one) are `raw`, at `pc`.
pub fn decode(raw: u32, pc: u64) -> Op {
    if raw & 0b11 != 0b11 {
        let half = raw as u16;
        return match rvc::expand(half) {
            Some(full) => {
                let mut op = decode32(full, pc);
                op.len = 2;
                op
            }
            None => illegal(half as u32, pc, 2),
        };
    }
    if raw & 0b11100 == 0b11100 {
        // 48-bit and longer encodings (§1.5): none exist in RV64GC.
        return illegal(raw, pc, 4);
    }
    decode32(raw, pc)
}

/// Length in bytes of the instruction whose low 16 bits are `low`: 2 for
/// compressed (§1.5), 4 otherwise.
#[inline]
pub fn length(low: u16) -> u8 {
    if low & 0b11 != 0b11 {
        2
    } else {
        4
    }
}

/// An illegal instruction of `len` bytes with raw bits `raw`.
pub fn illegal(raw: u32, pc: u64, len: u8) -> Op {
    Op {
        pc,
        imm: raw as i64,
        kind: Kind::Illegal,
        rd: ZERO_SINK,
        rs1: 0,
        rs2: 0,
        rs3: 0,
        rm: 0,
        len,
        class: Class::Other,
        emit: Emit::NoValue,
    }
}

#[inline]
fn rd(raw: u32) -> u8 {
    ((raw >> 7) & 31) as u8
}
#[inline]
fn rs1(raw: u32) -> u8 {
    ((raw >> 15) & 31) as u8
}
#[inline]
fn rs2(raw: u32) -> u8 {
    ((raw >> 20) & 31) as u8
}
#[inline]
fn rs3(raw: u32) -> u8 {
    ((raw >> 27) & 31) as u8
}
#[inline]
fn funct3(raw: u32) -> u32 {
    (raw >> 12) & 7
}
#[inline]
fn funct7(raw: u32) -> u32 {
    raw >> 25
}

/// I-type immediate (§2.3): `inst[31:20]`, sign-extended.
pub fn imm_i(raw: u32) -> i64 {
    ((raw as i32) >> 20) as i64
}
/// S-type immediate: `inst[31:25] | inst[11:7]`, sign-extended.
pub fn imm_s(raw: u32) -> i64 {
    ((((raw as i32) >> 25) << 5) | ((raw >> 7) & 0x1f) as i32) as i64
}
/// B-type immediate: a multiple of two in ±4 KiB.
pub fn imm_b(raw: u32) -> i64 {
    let v = (((raw as i32) >> 31) << 12)
        | (((raw >> 7) & 1) << 11) as i32
        | (((raw >> 25) & 0x3f) << 5) as i32
        | (((raw >> 8) & 0xf) << 1) as i32;
    v as i64
}
/// U-type immediate: `inst[31:12] << 12`, sign-extended to 64 bits.
pub fn imm_u(raw: u32) -> i64 {
    (raw & 0xffff_f000) as i32 as i64
}
/// J-type immediate: a multiple of two in ±1 MiB.
pub fn imm_j(raw: u32) -> i64 {
    let v = (((raw as i32) >> 31) << 20)
        | (((raw >> 12) & 0xff) << 12) as i32
        | (((raw >> 20) & 1) << 11) as i32
        | (((raw >> 21) & 0x3ff) << 1) as i32;
    v as i64
}

/// An integer destination: x0 becomes the scratch slot.
#[inline]
fn xd(raw: u32) -> u8 {
    match rd(raw) {
        0 => ZERO_SINK,
        r => r,
    }
}

struct B {
    pc: u64,
    raw: u32,
}

impl B {
    fn op(&self, kind: Kind, rd: u8, imm: i64, class: Class, emit: Emit) -> Op {
        Op {
            pc: self.pc,
            imm,
            kind,
            rd,
            rs1: rs1(self.raw),
            rs2: rs2(self.raw),
            rs3: rs3(self.raw),
            rm: funct3(self.raw) as u8,
            len: 4,
            class,
            // A write to x0 writes nothing: no value to report (§2.1).
            emit: if emit == Emit::IntDest && rd == ZERO_SINK {
                Emit::NoValue
            } else {
                emit
            },
        }
    }
    fn alu(&self, kind: Kind, imm: i64) -> Op {
        self.op(kind, xd(self.raw), imm, Class::IntAlu, Emit::IntDest)
    }
    fn illegal(&self) -> Op {
        illegal(self.raw, self.pc, 4)
    }
}

/// Decodes a 32-bit instruction.
pub fn decode32(raw: u32, pc: u64) -> Op {
    let b = B { pc, raw };
    let f3 = funct3(raw);
    let f7 = funct7(raw);
    match raw & 0x7f {
        // LUI, AUIPC (§2.4): the value is known at decode time.
        0x37 => b.alu(Kind::Li, imm_u(raw)),
        0x17 => b.alu(Kind::Li, pc.wrapping_add(imm_u(raw) as u64) as i64),
        // JAL, JALR (§2.5). Table 2.1 says which register use marks a call
        // or a return (x1 and x5 are link registers).
        0x6f => {
            let class = if is_link(rd(raw)) {
                Class::Call
            } else {
                Class::Jump
            };
            b.op(
                Kind::Jal,
                xd(raw),
                pc.wrapping_add(imm_j(raw) as u64) as i64,
                class,
                Emit::Own,
            )
        }
        0x67 if f3 == 0 => {
            let (d, s) = (rd(raw), rs1(raw));
            let class = if is_link(d) {
                Class::Call
            } else if is_link(s) {
                Class::Return
            } else {
                Class::Jump
            };
            b.op(Kind::Jalr, xd(raw), imm_i(raw), class, Emit::Own)
        }
        0x63 => {
            let kind = match f3 {
                0 => Kind::Beq,
                1 => Kind::Bne,
                4 => Kind::Blt,
                5 => Kind::Bge,
                6 => Kind::Bltu,
                7 => Kind::Bgeu,
                _ => return b.illegal(),
            };
            let target = pc.wrapping_add(imm_b(raw) as u64) as i64;
            b.op(kind, ZERO_SINK, target, Class::CondBranch, Emit::Own)
        }
        // Loads and stores (§2.6, §5.3).
        0x03 => {
            let kind = match f3 {
                0 => Kind::Lb,
                1 => Kind::Lh,
                2 => Kind::Lw,
                3 => Kind::Ld,
                4 => Kind::Lbu,
                5 => Kind::Lhu,
                6 => Kind::Lwu,
                _ => return b.illegal(),
            };
            b.op(kind, xd(raw), imm_i(raw), Class::Load, Emit::Own)
        }
        0x23 => {
            let kind = match f3 {
                0 => Kind::Sb,
                1 => Kind::Sh,
                2 => Kind::Sw,
                3 => Kind::Sd,
                _ => return b.illegal(),
            };
            b.op(kind, ZERO_SINK, imm_s(raw), Class::Store, Emit::Own)
        }
        // Integer register-immediate (§2.4, §5.2). RV64 shifts take a
        // 6-bit shamt; the bits above it must be 0 (or 0b010000 for srai).
        0x13 => {
            let imm = imm_i(raw);
            match f3 {
                0 => b.alu(Kind::Addi, imm),
                2 => b.alu(Kind::Slti, imm),
                3 => b.alu(Kind::Sltiu, imm),
                4 => b.alu(Kind::Xori, imm),
                6 => b.alu(Kind::Ori, imm),
                7 => b.alu(Kind::Andi, imm),
                1 if raw >> 26 == 0 => b.alu(Kind::Slli, imm & 0x3f),
                5 if raw >> 26 == 0 => b.alu(Kind::Srli, imm & 0x3f),
                5 if raw >> 26 == 0b010000 => b.alu(Kind::Srai, imm & 0x3f),
                1 | 5 => decode_bit_imm(&b, raw, f3),
                _ => b.illegal(),
            }
        }
        0x1b => {
            let imm = imm_i(raw);
            match (f3, f7) {
                (0, _) => b.alu(Kind::Addiw, imm),
                (1, 0) => b.alu(Kind::Slliw, imm & 0x1f),
                (5, 0) => b.alu(Kind::Srliw, imm & 0x1f),
                (5, 0x20) => b.alu(Kind::Sraiw, imm & 0x1f),
                // Zba's slli.uw, a 6-bit shamt (§1.4.1); Zbb's clzw, ctzw,
                // cpopw and roriw (§1.4.2).
                (1, _) if raw >> 26 == 0b000010 => b.alu(Kind::SlliUw, imm & 0x3f),
                (1, 0x30) => match raw >> 20 & 0x1f {
                    0 => b.alu(Kind::Clzw, 0),
                    1 => b.alu(Kind::Ctzw, 0),
                    2 => b.alu(Kind::Cpopw, 0),
                    _ => b.illegal(),
                },
                (5, 0x30) => b.alu(Kind::Roriw, imm & 0x1f),
                _ => b.illegal(),
            }
        }
        // Integer register-register (§2.4) and M (§7.1, §7.2).
        0x33 => {
            let kind = match (f7, f3) {
                (0, 0) => Kind::Add,
                (0x20, 0) => Kind::Sub,
                (0, 1) => Kind::Sll,
                (0, 2) => Kind::Slt,
                (0, 3) => Kind::Sltu,
                (0, 4) => Kind::Xor,
                (0, 5) => Kind::Srl,
                (0x20, 5) => Kind::Sra,
                (0, 6) => Kind::Or,
                (0, 7) => Kind::And,
                // Zba (§1.4.1), Zbb (§1.4.2), Zbc (§1.4.3), Zbs (§1.4.4).
                (0x10, 2) => Kind::Sh1add,
                (0x10, 4) => Kind::Sh2add,
                (0x10, 6) => Kind::Sh3add,
                (0x20, 7) => Kind::Andn,
                (0x20, 6) => Kind::Orn,
                (0x20, 4) => Kind::Xnor,
                (0x05, 6) => Kind::Max,
                (0x05, 7) => Kind::Maxu,
                (0x05, 4) => Kind::Min,
                (0x05, 5) => Kind::Minu,
                (0x05, 1) => Kind::Clmul,
                (0x05, 2) => Kind::Clmulr,
                (0x05, 3) => Kind::Clmulh,
                (0x30, 1) => Kind::Rol,
                (0x30, 5) => Kind::Ror,
                (0x24, 1) => Kind::Bclr,
                (0x24, 5) => Kind::Bext,
                (0x34, 1) => Kind::Binv,
                (0x14, 1) => Kind::Bset,
                (1, f) => {
                    let kind = [
                        Kind::Mul,
                        Kind::Mulh,
                        Kind::Mulhsu,
                        Kind::Mulhu,
                        Kind::Div,
                        Kind::Divu,
                        Kind::Rem,
                        Kind::Remu,
                    ][f as usize];
                    return b.op(kind, xd(raw), 0, Class::MulDiv, Emit::IntDest);
                }
                _ => return b.illegal(),
            };
            b.alu(kind, 0)
        }
        0x3b => {
            let kind = match (f7, f3) {
                (0, 0) => Kind::Addw,
                (0x20, 0) => Kind::Subw,
                (0, 1) => Kind::Sllw,
                (0, 5) => Kind::Srlw,
                (0x20, 5) => Kind::Sraw,
                // Zba (§1.4.1) and Zbb (§1.4.2); zext.h is the RV64
                // encoding, with rs2 = x0.
                (0x04, 0) => Kind::AddUw,
                (0x10, 2) => Kind::Sh1addUw,
                (0x10, 4) => Kind::Sh2addUw,
                (0x10, 6) => Kind::Sh3addUw,
                (0x04, 4) if rs2(raw) == 0 => Kind::ZextH,
                (0x30, 1) => Kind::Rolw,
                (0x30, 5) => Kind::Rorw,
                (1, f) => {
                    let kind = match f {
                        0 => Kind::Mulw,
                        4 => Kind::Divw,
                        5 => Kind::Divuw,
                        6 => Kind::Remw,
                        7 => Kind::Remuw,
                        _ => return b.illegal(),
                    };
                    return b.op(kind, xd(raw), 0, Class::MulDiv, Emit::IntDest);
                }
                _ => return b.illegal(),
            };
            b.alu(kind, 0)
        }
        // FENCE and FENCE.I (§2.7, §3). In a single-hart user-mode model a
        // FENCE has no effect; FENCE.I drops the pre-decoded code.
        0x0f => match f3 {
            0 => b.op(Kind::Fence, ZERO_SINK, 0, Class::System, Emit::NoValue),
            1 => b.op(Kind::FenceI, ZERO_SINK, 0, Class::System, Emit::NoValue),
            _ => b.illegal(),
        },
        // SYSTEM: ECALL, EBREAK (§2.8) and Zicsr (§9.1).
        0x73 => match f3 {
            0 if raw == 0x0000_0073 => {
                b.op(Kind::Ecall, ZERO_SINK, 0, Class::System, Emit::NoValue)
            }
            0 if raw == 0x0010_0073 => {
                b.op(Kind::Ebreak, ZERO_SINK, 0, Class::System, Emit::NoValue)
            }
            1 | 2 | 3 | 5 | 6 | 7 => {
                let kind = [
                    Kind::Illegal,
                    Kind::Csrrw,
                    Kind::Csrrs,
                    Kind::Csrrc,
                    Kind::Illegal,
                    Kind::Csrrwi,
                    Kind::Csrrsi,
                    Kind::Csrrci,
                ][f3 as usize];
                let csr = (raw >> 20) as i64;
                b.op(kind, xd(raw), csr, Class::System, Emit::IntDest)
            }
            _ => b.illegal(),
        },
        // A (§8.2, §8.4): funct5 in inst[31:27], aq/rl in [26:25] (ignored:
        // a single hart is sequentially consistent).
        0x2f => decode_amo(&b, raw, f3),
        // F and D loads and stores (§11.5, §12.3).
        0x07 => match f3 {
            2 => b.op(Kind::Flw, rd(raw), imm_i(raw), Class::Load, Emit::Own),
            3 => b.op(Kind::Fld, rd(raw), imm_i(raw), Class::Load, Emit::Own),
            _ => b.illegal(),
        },
        0x27 => match f3 {
            2 => b.op(Kind::Fsw, ZERO_SINK, imm_s(raw), Class::Store, Emit::Own),
            3 => b.op(Kind::Fsd, ZERO_SINK, imm_s(raw), Class::Store, Emit::Own),
            _ => b.illegal(),
        },
        // Fused multiply-add (§11.6): fmt in inst[26:25], 0 = S, 1 = D.
        0x43 | 0x47 | 0x4b | 0x4f => {
            let fmt = (raw >> 25) & 3;
            if fmt > 1 || !rm_valid(f3) {
                return b.illegal();
            }
            let i = ((raw & 0x7f) - 0x43) / 4;
            let kind = if fmt == 0 {
                [Kind::FmaddS, Kind::FmsubS, Kind::FnmsubS, Kind::FnmaddS][i as usize]
            } else {
                [Kind::FmaddD, Kind::FmsubD, Kind::FnmsubD, Kind::FnmaddD][i as usize]
            };
            b.op(kind, rd(raw), 0, Class::Float, Emit::FloatDest)
        }
        0x53 => decode_fp(&b, raw, f3, f7),
        _ => b.illegal(),
    }
}

/// x1 (ra) and x5 (t0) are the link registers of the return-address stack
/// hints (§2.5, Table 2.1).
fn is_link(r: u8) -> bool {
    r == 1 || r == 5
}

/// Rounding-mode field values 5 and 6 are reserved (§11.2, Table 11.1).
fn rm_valid(rm: u32) -> bool {
    rm != 5 && rm != 6
}

/// The OP-IMM encodings of funct3 1 and 5 other than RV64I's shifts:
/// Zbb's unary ops and `rori` (§1.4.2), and Zbs's immediate forms
/// (§1.4.4), each with a 6-bit shamt where it takes one.
fn decode_bit_imm(b: &B, raw: u32, f3: u32) -> Op {
    let shamt = ((raw >> 20) & 0x3f) as i64;
    match (f3, raw >> 26) {
        (1, 0b011000) => match raw >> 20 & 0x3f {
            0 => b.alu(Kind::Clz, 0),
            1 => b.alu(Kind::Ctz, 0),
            2 => b.alu(Kind::Cpop, 0),
            4 => b.alu(Kind::SextB, 0),
            5 => b.alu(Kind::SextH, 0),
            _ => b.illegal(),
        },
        (5, 0b011000) => b.alu(Kind::Rori, shamt),
        (5, _) if raw >> 20 == 0x287 => b.alu(Kind::OrcB, 0),
        (5, _) if raw >> 20 == 0x6b8 => b.alu(Kind::Rev8, 0),
        (1, 0b010010) => b.alu(Kind::Bclri, shamt),
        (5, 0b010010) => b.alu(Kind::Bexti, shamt),
        (1, 0b011010) => b.alu(Kind::Binvi, shamt),
        (1, 0b001010) => b.alu(Kind::Bseti, shamt),
        _ => b.illegal(),
    }
}

fn decode_amo(b: &B, raw: u32, f3: u32) -> Op {
    let funct5 = raw >> 27;
    let word = match f3 {
        2 => true,
        3 => false,
        _ => return b.illegal(),
    };
    let (kind, class) = match (funct5, word) {
        (0b00010, _) if rs2(raw) != 0 => return b.illegal(),
        (0b00010, true) => (Kind::LrW, Class::Load),
        (0b00010, false) => (Kind::LrD, Class::Load),
        (0b00011, true) => (Kind::ScW, Class::Store),
        (0b00011, false) => (Kind::ScD, Class::Store),
        (f, true) => (
            match f {
                0b00001 => Kind::AmoswapW,
                0b00000 => Kind::AmoaddW,
                0b00100 => Kind::AmoxorW,
                0b01100 => Kind::AmoandW,
                0b01000 => Kind::AmoorW,
                0b10000 => Kind::AmominW,
                0b10100 => Kind::AmomaxW,
                0b11000 => Kind::AmominuW,
                0b11100 => Kind::AmomaxuW,
                _ => return b.illegal(),
            },
            Class::Load,
        ),
        (f, false) => (
            match f {
                0b00001 => Kind::AmoswapD,
                0b00000 => Kind::AmoaddD,
                0b00100 => Kind::AmoxorD,
                0b01100 => Kind::AmoandD,
                0b01000 => Kind::AmoorD,
                0b10000 => Kind::AmominD,
                0b10100 => Kind::AmomaxD,
                0b11000 => Kind::AmominuD,
                0b11100 => Kind::AmomaxuD,
                _ => return b.illegal(),
            },
            Class::Load,
        ),
    };
    b.op(kind, xd(raw), 0, class, Emit::Own)
}

/// OP-FP (§11.6–§11.9, §12.4–§12.6). funct7 is funct5 followed by fmt.
fn decode_fp(b: &B, raw: u32, f3: u32, f7: u32) -> Op {
    let r2 = rs2(raw);
    let to_f = |kind: Kind| b.op(kind, rd(raw), 0, Class::Float, Emit::FloatDest);
    let to_x = |kind: Kind| b.op(kind, xd(raw), 0, Class::Float, Emit::IntDest);
    let rounded = |kind: Kind, to_int: bool| {
        if !rm_valid(f3) {
            b.illegal()
        } else if to_int {
            to_x(kind)
        } else {
            to_f(kind)
        }
    };
    match f7 {
        0x00 => rounded(Kind::FaddS, false),
        0x04 => rounded(Kind::FsubS, false),
        0x08 => rounded(Kind::FmulS, false),
        0x0c => rounded(Kind::FdivS, false),
        0x2c if r2 == 0 => rounded(Kind::FsqrtS, false),
        0x01 => rounded(Kind::FaddD, false),
        0x05 => rounded(Kind::FsubD, false),
        0x09 => rounded(Kind::FmulD, false),
        0x0d => rounded(Kind::FdivD, false),
        0x2d if r2 == 0 => rounded(Kind::FsqrtD, false),
        0x10 => match f3 {
            0 => to_f(Kind::FsgnjS),
            1 => to_f(Kind::FsgnjnS),
            2 => to_f(Kind::FsgnjxS),
            _ => b.illegal(),
        },
        0x11 => match f3 {
            0 => to_f(Kind::FsgnjD),
            1 => to_f(Kind::FsgnjnD),
            2 => to_f(Kind::FsgnjxD),
            _ => b.illegal(),
        },
        0x14 => match f3 {
            0 => to_f(Kind::FminS),
            1 => to_f(Kind::FmaxS),
            _ => b.illegal(),
        },
        0x15 => match f3 {
            0 => to_f(Kind::FminD),
            1 => to_f(Kind::FmaxD),
            _ => b.illegal(),
        },
        0x20 if r2 == 1 => rounded(Kind::FcvtSD, false),
        0x21 if r2 == 0 => rounded(Kind::FcvtDS, false),
        0x50 => match f3 {
            0 => to_x(Kind::FleS),
            1 => to_x(Kind::FltS),
            2 => to_x(Kind::FeqS),
            _ => b.illegal(),
        },
        0x51 => match f3 {
            0 => to_x(Kind::FleD),
            1 => to_x(Kind::FltD),
            2 => to_x(Kind::FeqD),
            _ => b.illegal(),
        },
        0x60 => match r2 {
            0 => rounded(Kind::FcvtWS, true),
            1 => rounded(Kind::FcvtWuS, true),
            2 => rounded(Kind::FcvtLS, true),
            3 => rounded(Kind::FcvtLuS, true),
            _ => b.illegal(),
        },
        0x61 => match r2 {
            0 => rounded(Kind::FcvtWD, true),
            1 => rounded(Kind::FcvtWuD, true),
            2 => rounded(Kind::FcvtLD, true),
            3 => rounded(Kind::FcvtLuD, true),
            _ => b.illegal(),
        },
        0x68 => match r2 {
            0 => rounded(Kind::FcvtSW, false),
            1 => rounded(Kind::FcvtSWu, false),
            2 => rounded(Kind::FcvtSL, false),
            3 => rounded(Kind::FcvtSLu, false),
            _ => b.illegal(),
        },
        0x69 => match r2 {
            0 => rounded(Kind::FcvtDW, false),
            1 => rounded(Kind::FcvtDWu, false),
            2 => rounded(Kind::FcvtDL, false),
            3 => rounded(Kind::FcvtDLu, false),
            _ => b.illegal(),
        },
        0x70 if r2 == 0 => match f3 {
            0 => to_x(Kind::FmvXW),
            1 => to_x(Kind::FclassS),
            _ => b.illegal(),
        },
        0x71 if r2 == 0 => match f3 {
            0 => to_x(Kind::FmvXD),
            1 => to_x(Kind::FclassD),
            _ => b.illegal(),
        },
        0x78 if r2 == 0 && f3 == 0 => to_f(Kind::FmvWX),
        0x79 if r2 == 0 && f3 == 0 => to_f(Kind::FmvDX),
        _ => b.illegal(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn d(raw: u32) -> Op {
        decode(raw, 0x1000)
    }

    #[test]
    fn only_the_tail_classes_report_after_executing() {
        // The interpreter leaves out its test after each instruction when
        // a sink wants none of `TAIL_CLASSES`: every instruction of
        // another class must build its own event. Every 16-bit word and
        // four million 32-bit ones, spread over all the major opcodes.
        let words = (0..=u16::MAX as u32).chain((0..4_000_000u32).map(|i| {
            let x = i.wrapping_mul(0x9e37_79b9) ^ (i >> 7);
            x | 0b11
        }));
        let mut classes = std::collections::BTreeSet::new();
        for raw in words {
            let op = d(raw);
            classes.insert(op.class as u8);
            assert!(
                op.emit == Emit::Own || crate::op::TAIL_CLASSES.contains(op.class),
                "{raw:#010x}: {:?} of class {:?} emits {:?}",
                op.kind,
                op.class,
                op.emit
            );
        }
        assert!(classes.len() >= 10, "classes seen: {classes:?}");
    }

    #[test]
    fn immediates_of_every_format() {
        // addi a0, a1, -1
        let op = d(0xfff5_8513);
        assert_eq!((op.kind, op.rd, op.rs1, op.imm), (Kind::Addi, 10, 11, -1));
        // sd ra, 8(sp): S-type
        let op = d(0x0011_3423);
        assert_eq!((op.kind, op.rs1, op.rs2, op.imm), (Kind::Sd, 2, 1, 8));
        // sw a0, -4(s0): negative S immediate
        let op = d(0xfea4_2e23);
        assert_eq!((op.kind, op.imm), (Kind::Sw, -4));
        // beq a0, a1, -16: B-type target is folded
        let op = d(0xfeb5_08e3);
        assert_eq!((op.kind, op.imm), (Kind::Beq, 0x1000 - 16));
        // lui a0, 0x12345: U-type
        let op = d(0x1234_5537);
        assert_eq!((op.kind, op.imm), (Kind::Li, 0x1234_5000));
        // lui a0, 0x80000 sign-extends (§5.2)
        assert_eq!(d(0x8000_0537).imm, -0x8000_0000);
        // auipc a0, 1 folds the pc
        assert_eq!(d(0x0000_1517).imm, 0x2000);
        // jal ra, 2048: J-type
        let op = d(0x0010_00ef);
        assert_eq!(
            (op.kind, op.rd, op.imm, op.class),
            (Kind::Jal, 1, 0x1800, Class::Call)
        );
        // jal x0, -4
        let op = d(0xffdf_f06f);
        assert_eq!(
            (op.kind, op.rd, op.imm, op.class),
            (Kind::Jal, ZERO_SINK, 0xffc, Class::Jump)
        );
        // ret = jalr x0, 0(ra)
        let op = d(0x0000_8067);
        assert_eq!((op.kind, op.class), (Kind::Jalr, Class::Return));
        // jalr ra, 0(a5) is a call
        assert_eq!(d(0x0007_80e7).class, Class::Call);
    }

    #[test]
    fn rv64_shifts_and_words() {
        // slli a0, a0, 63
        let op = d(0x03f5_1513);
        assert_eq!((op.kind, op.imm), (Kind::Slli, 63));
        // srai a0, a0, 63
        let op = d(0x43f5_5513);
        assert_eq!((op.kind, op.imm), (Kind::Srai, 63));
        // slliw with shamt[5] set is reserved (§5.2)
        assert_eq!(d(0x0205_151b).kind, Kind::Illegal);
        // addw / subw / sraw
        assert_eq!(d(0x00b5_053b).kind, Kind::Addw);
        assert_eq!(d(0x40b5_053b).kind, Kind::Subw);
        assert_eq!(d(0x40b5_553b).kind, Kind::Sraw);
    }

    #[test]
    fn m_a_f_d_and_system() {
        assert_eq!(d(0x02b5_0533).kind, Kind::Mul);
        assert_eq!(d(0x02b5_4533).kind, Kind::Div);
        assert_eq!(d(0x02b5_753b).kind, Kind::Remuw);
        // lr.w a0, (a1); sc.d a0, a2, (a1); amoadd.w a0, a2, (a1)
        assert_eq!(d(0x1005_a52f).kind, Kind::LrW);
        assert_eq!(d(0x18c5_b52f).kind, Kind::ScD);
        assert_eq!(d(0x00c5_a52f).kind, Kind::AmoaddW);
        // lr with rs2 != 0 is reserved
        assert_eq!(d(0x1015_a52f).kind, Kind::Illegal);
        // fadd.d fa0, fa1, fa2 (dyn rm)
        let op = d(0x02c5_f553);
        assert_eq!(
            (op.kind, op.rd, op.rs1, op.rs2, op.rm),
            (Kind::FaddD, 10, 11, 12, 7)
        );
        // rm = 5 is reserved
        assert_eq!(d(0x02c5_d553).kind, Kind::Illegal);
        // fmadd.s fa0, fa1, fa2, fa3
        let op = d(0x68c5_8543);
        assert_eq!((op.kind, op.rs3), (Kind::FmaddS, 13));
        // fcvt.l.d a0, fa0, rtz
        assert_eq!(d(0xc225_1553).kind, Kind::FcvtLD);
        // fmv.x.d a0, fa0
        assert_eq!(d(0xe205_0553).kind, Kind::FmvXD);
        // fld fa0, 8(sp); fsd fa0, 8(sp)
        assert_eq!(d(0x0081_3507).kind, Kind::Fld);
        assert_eq!(d(0x00a1_3427).kind, Kind::Fsd);
        // csrr a0, fcsr
        let op = d(0x0030_2573);
        assert_eq!((op.kind, op.imm, op.rs1), (Kind::Csrrs, 3, 0));
        assert_eq!(d(0x0000_0073).kind, Kind::Ecall);
        assert_eq!(d(0x0010_0073).kind, Kind::Ebreak);
        assert_eq!(d(0x0000_100f).kind, Kind::FenceI);
        assert_eq!(d(0x0ff0_000f).kind, Kind::Fence);
    }

    #[test]
    fn reserved_encodings_are_illegal() {
        assert_eq!(d(0x0000_0000).kind, Kind::Illegal); // c.illegal
        assert_eq!(d(0xffff_ffff).kind, Kind::Illegal);
        assert_eq!(d(0x0000_000b).kind, Kind::Illegal); // custom-0
        assert_eq!(d(0x0000_7003).kind, Kind::Illegal); // load funct3 7
        assert_eq!(d(0x0000_4023).kind, Kind::Illegal); // store funct3 4
        assert_eq!(d(0x0000_2063).kind, Kind::Illegal); // branch funct3 2
        assert_eq!(d(0x0000_0013).kind, Kind::Addi); // nop
    }

    #[test]
    fn compressed_instructions_are_two_bytes() {
        // c.addi a0, 1 = 0x0505
        let op = d(0x0505);
        assert_eq!(
            (op.kind, op.rd, op.rs1, op.imm, op.len),
            (Kind::Addi, 10, 10, 1, 2)
        );
        // c.ret = 0x8082
        let op = d(0x8082);
        assert_eq!((op.kind, op.class, op.len), (Kind::Jalr, Class::Return, 2));
    }
}
