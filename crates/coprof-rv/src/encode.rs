//! The RV64 base instruction formats as 32-bit words (RISC-V Unprivileged
//! ISA 20191213, §2.2–2.3, Figures 2.2–2.3): what the compressed-instruction
//! expander produces, and how tests assemble code by hand.

/// An I-type instruction: `imm[11:0] rs1 funct3 rd opcode`.
pub fn i_type(opc: u32, rd: u32, f3: u32, rs1: u32, imm: i32) -> u32 {
    ((imm as u32 & 0xfff) << 20) | (rs1 << 15) | (f3 << 12) | (rd << 7) | opc
}

/// An S-type instruction: `imm[11:5] rs2 rs1 funct3 imm[4:0] opcode`.
pub fn s_type(opc: u32, f3: u32, rs1: u32, rs2: u32, imm: i32) -> u32 {
    let imm = imm as u32 & 0xfff;
    ((imm >> 5) << 25) | (rs2 << 20) | (rs1 << 15) | (f3 << 12) | ((imm & 0x1f) << 7) | opc
}

/// An R-type instruction: `funct7 rs2 rs1 funct3 rd opcode`.
pub fn r_type(opc: u32, rd: u32, f3: u32, rs1: u32, rs2: u32, f7: u32) -> u32 {
    (f7 << 25) | (rs2 << 20) | (rs1 << 15) | (f3 << 12) | (rd << 7) | opc
}

/// A conditional branch (B-type, opcode BRANCH) with byte offset `imm`.
pub fn b_type(f3: u32, rs1: u32, rs2: u32, imm: i32) -> u32 {
    let imm = imm as u32;
    (((imm >> 12) & 1) << 31)
        | (((imm >> 5) & 0x3f) << 25)
        | (rs2 << 20)
        | (rs1 << 15)
        | (f3 << 12)
        | (((imm >> 1) & 0xf) << 8)
        | (((imm >> 11) & 1) << 7)
        | 0x63
}

/// A `jal` (J-type) with byte offset `imm`.
pub fn j_type(rd: u32, imm: i32) -> u32 {
    let imm = imm as u32;
    (((imm >> 20) & 1) << 31)
        | (((imm >> 1) & 0x3ff) << 21)
        | (((imm >> 11) & 1) << 20)
        | (((imm >> 12) & 0xff) << 12)
        | (rd << 7)
        | 0x6f
}
