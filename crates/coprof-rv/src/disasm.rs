//! Assembly text of a pre-decoded instruction, for error messages and
//! listings. Mnemonics and operand order are those of the RISC-V assembly
//! manual (ABI register names, `offset(base)` for memory operands).

use crate::decode::decode;
use crate::op::{Kind, Op, ZERO_SINK};

const XNAMES: [&str; 33] = [
    "zero", "ra", "sp", "gp", "tp", "t0", "t1", "t2", "s0", "s1", "a0", "a1", "a2", "a3", "a4",
    "a5", "a6", "a7", "s2", "s3", "s4", "s5", "s6", "s7", "s8", "s9", "s10", "s11", "t3", "t4",
    "t5", "t6", "zero",
];
const FNAMES: [&str; 32] = [
    "ft0", "ft1", "ft2", "ft3", "ft4", "ft5", "ft6", "ft7", "fs0", "fs1", "fa0", "fa1", "fa2",
    "fa3", "fa4", "fa5", "fa6", "fa7", "fs2", "fs3", "fs4", "fs5", "fs6", "fs7", "fs8", "fs9",
    "fs10", "fs11", "ft8", "ft9", "ft10", "ft11",
];

fn x(r: u8) -> &'static str {
    XNAMES[(r as usize).min(ZERO_SINK as usize)]
}
fn f(r: u8) -> &'static str {
    FNAMES[(r & 31) as usize]
}

/// The mnemonic of `kind` (`fcvt.w.s`, `amoadd.d`, …).
pub fn mnemonic(kind: Kind) -> String {
    let raw = format!("{kind:?}");
    // CamelCase to dotted lower case: FcvtWuS -> fcvt.wu.s, AmoaddW -> amoadd.w.
    let mut out = String::new();
    for (i, c) in raw.chars().enumerate() {
        if c.is_ascii_uppercase() && i > 0 {
            out.push('.');
        }
        out.push(c.to_ascii_lowercase());
    }
    match kind {
        Kind::Li => "li".into(),
        Kind::FenceI => "fence.i".into(),
        _ => out,
    }
}

fn major_opcode_name(raw: u32) -> &'static str {
    match raw & 0x7f {
        0x0b => "custom-0",
        0x2b => "custom-1",
        0x5b => "custom-2/rv128",
        0x7b => "custom-3/rv128",
        0x57 => "OP-V (vector extension, not supported)",
        0x77 => "OP-P (reserved)",
        0x6b => "reserved",
        0x03 => "LOAD",
        0x07 => "LOAD-FP",
        0x0f => "MISC-MEM",
        0x13 => "OP-IMM",
        0x1b => "OP-IMM-32",
        0x23 => "STORE",
        0x27 => "STORE-FP",
        0x2f => "AMO",
        0x33 => "OP",
        0x3b => "OP-32",
        0x43 | 0x47 | 0x4b | 0x4f => "fused multiply-add",
        0x53 => "OP-FP",
        0x63 => "BRANCH",
        0x67 => "JALR",
        0x6f => "JAL",
        0x73 => "SYSTEM",
        _ => "reserved",
    }
}

/// Assembly text for `op`. `frm` is the current dynamic rounding mode, to
/// explain an illegal dynamic rounding mode.
pub fn disassemble(op: &Op, frm: u32) -> String {
    use Kind::*;
    let m = mnemonic(op.kind);
    let rm_bad = op.rm == 7 && frm > 4;
    match op.kind {
        Illegal => {
            let raw = op.imm as u32;
            // What the bits are to a hart with every extension: an
            // instruction of one this hart was given without (`--isa`),
            // or nothing.
            let full = decode(raw, op.pc);
            if op.len == 2 {
                format!(
                    "not an RV64GC instruction: reserved compressed encoding {:#06x}",
                    raw as u16
                )
            } else if let Some(ext) = crate::isa::extension_of(full.kind).map(|e| e.name()) {
                format!(
                    "{}: an instruction of {ext}, which this hart's instruction set leaves out \
                     (see --isa)",
                    disassemble(&full, frm)
                )
            } else {
                format!(
                    "not an RV64GC, Zba, Zbb, Zbc or Zbs instruction: {:#010x}, major opcode {:#04x} ({})",
                    raw,
                    raw & 0x7f,
                    major_opcode_name(raw)
                )
            }
        }
        FetchFault => format!("instruction fetch from {:#x} failed", op.imm),
        Li => format!("li {}, {:#x}", x(op.rd), op.imm),
        Jal => format!("jal {}, {:#x}", x(op.rd), op.imm),
        Jalr => format!("jalr {}, {}({})", x(op.rd), op.imm, x(op.rs1)),
        Beq | Bne | Blt | Bge | Bltu | Bgeu => {
            format!("{m} {}, {}, {:#x}", x(op.rs1), x(op.rs2), op.imm)
        }
        Lb | Lh | Lw | Ld | Lbu | Lhu | Lwu => {
            format!("{m} {}, {}({})", x(op.rd), op.imm, x(op.rs1))
        }
        Sb | Sh | Sw | Sd => format!("{m} {}, {}({})", x(op.rs2), op.imm, x(op.rs1)),
        Flw | Fld => format!("{m} {}, {}({})", f(op.rd), op.imm, x(op.rs1)),
        Fsw | Fsd => format!("{m} {}, {}({})", f(op.rs2), op.imm, x(op.rs1)),
        Addi | Slti | Sltiu | Xori | Ori | Andi | Slli | Srli | Srai | Addiw | Slliw | Srliw
        | Sraiw | SlliUw | Rori | Roriw | Bclri | Bexti | Binvi | Bseti => {
            format!("{m} {}, {}, {}", x(op.rd), x(op.rs1), op.imm)
        }
        Clz | Clzw | Ctz | Ctzw | Cpop | Cpopw | SextB | SextH | ZextH | OrcB | Rev8 => {
            format!("{m} {}, {}", x(op.rd), x(op.rs1))
        }
        Fence | FenceI | Ecall | Ebreak => m,
        Csrrw | Csrrs | Csrrc => format!("{m} {}, {:#x}, {}", x(op.rd), op.imm, x(op.rs1)),
        Csrrwi | Csrrsi | Csrrci => format!("{m} {}, {:#x}, {}", x(op.rd), op.imm, op.rs1),
        LrW | LrD => format!("{m} {}, ({})", x(op.rd), x(op.rs1)),
        ScW | ScD | AmoswapW | AmoaddW | AmoxorW | AmoandW | AmoorW | AmominW | AmomaxW
        | AmominuW | AmomaxuW | AmoswapD | AmoaddD | AmoxorD | AmoandD | AmoorD | AmominD
        | AmomaxD | AmominuD | AmomaxuD => {
            format!("{m} {}, {}, ({})", x(op.rd), x(op.rs2), x(op.rs1))
        }
        FmaddS | FmsubS | FnmsubS | FnmaddS | FmaddD | FmsubD | FnmsubD | FnmaddD => {
            format!(
                "{m} {}, {}, {}, {}{}",
                f(op.rd),
                f(op.rs1),
                f(op.rs2),
                f(op.rs3),
                rm_text(op.rm, rm_bad)
            )
        }
        FaddS | FsubS | FmulS | FdivS | FaddD | FsubD | FmulD | FdivD => {
            format!(
                "{m} {}, {}, {}{}",
                f(op.rd),
                f(op.rs1),
                f(op.rs2),
                rm_text(op.rm, rm_bad)
            )
        }
        FsgnjS | FsgnjnS | FsgnjxS | FminS | FmaxS | FsgnjD | FsgnjnD | FsgnjxD | FminD | FmaxD => {
            format!("{m} {}, {}, {}", f(op.rd), f(op.rs1), f(op.rs2))
        }
        FsqrtS | FsqrtD | FcvtSD | FcvtDS => {
            format!("{m} {}, {}{}", f(op.rd), f(op.rs1), rm_text(op.rm, rm_bad))
        }
        FcvtWS | FcvtWuS | FcvtLS | FcvtLuS | FcvtWD | FcvtWuD | FcvtLD | FcvtLuD => {
            format!("{m} {}, {}{}", x(op.rd), f(op.rs1), rm_text(op.rm, rm_bad))
        }
        FcvtSW | FcvtSWu | FcvtSL | FcvtSLu | FcvtDW | FcvtDWu | FcvtDL | FcvtDLu => {
            format!("{m} {}, {}{}", f(op.rd), x(op.rs1), rm_text(op.rm, rm_bad))
        }
        FmvXW | FmvXD | FclassS | FclassD => format!("{m} {}, {}", x(op.rd), f(op.rs1)),
        FmvWX | FmvDX => format!("{m} {}, {}", f(op.rd), x(op.rs1)),
        FeqS | FltS | FleS | FeqD | FltD | FleD => {
            format!("{m} {}, {}, {}", x(op.rd), f(op.rs1), f(op.rs2))
        }
        _ => format!("{m} {}, {}, {}", x(op.rd), x(op.rs1), x(op.rs2)),
    }
}

fn rm_text(rm: u8, dyn_bad: bool) -> String {
    match rm {
        0 => ", rne".into(),
        1 => ", rtz".into(),
        2 => ", rdn".into(),
        3 => ", rup".into(),
        4 => ", rmm".into(),
        7 if dyn_bad => ", dyn (frm holds a reserved rounding mode)".into(),
        _ => String::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_of_common_instructions() {
        assert_eq!(disassemble(&decode(0xfff5_8513, 0), 0), "addi a0, a1, -1");
        assert_eq!(disassemble(&decode(0x0011_3423, 0), 0), "sd ra, 8(sp)");
        assert_eq!(disassemble(&decode(0x8082, 0), 0), "jalr zero, 0(ra)");
        assert_eq!(
            disassemble(&decode(0xc225_1553, 0), 0),
            "fcvt.l.d a0, fa0, rtz"
        );
        assert_eq!(
            disassemble(&decode(0x00c5_a52f, 0), 0),
            "amoadd.w a0, a2, (a1)"
        );
        let ill = disassemble(&decode(0x0000_000b, 0), 0);
        assert!(ill.contains("custom-0"), "{ill}");
        // sh1add a0, a1, a2 on a hart without Zba.
        let left_out = disassemble(&crate::decode::illegal(0x20c5_a533, 0, 4), 0);
        assert_eq!(
            left_out,
            "sh1add a0, a1, a2: an instruction of Zba, which this hart's instruction set \
             leaves out (see --isa)"
        );
    }
}
