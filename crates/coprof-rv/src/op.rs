//! The pre-decoded instruction: what the decoder produces once per
//! instruction and the interpreter executes many times.
//!
//! Every RV64GC instruction (RISC-V Unprivileged ISA, version 20191213:
//! RV64I §2 and §5, Zifencei §3, M §7, A §8, Zicsr §9, F §11, D §12, and C
//! §16 after expansion), and every one of the bit-manipulation extensions
//! Zba, Zbb, Zbc and Zbs (RISC-V Bit-Manipulation ISA-extensions, version
//! 1.0.0; Zba, Zbb and Zbs are the B of the RVA22U64 profile), becomes one
//! [`Op`]: a dense opcode ([`Kind`]) plus
//! register numbers and a 64-bit immediate in which the decoder has already
//! folded whatever can be known before execution (absolute branch targets,
//! `auipc` results, CSR numbers). Dispatch is one `match` over `Kind`.

use coprof_core::{Class, ClassSet};

/// Register index that stands for "discard": writes to `x0` are redirected
/// to this scratch slot at decode time so the interpreter never tests
/// `rd == 0` (x0 is hard-wired to zero, §2.1).
pub const ZERO_SINK: u8 = 32;

/// The opcode of a pre-decoded instruction. The names are the assembler
/// mnemonics of the unprivileged specification.
#[allow(missing_docs)]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[repr(u8)]
pub enum Kind {
    // RV64I (§2.4, §5.2): `Li` covers lui and auipc (the value is folded).
    Li,
    Jal,
    Jalr,
    Beq,
    Bne,
    Blt,
    Bge,
    Bltu,
    Bgeu,
    Lb,
    Lh,
    Lw,
    Ld,
    Lbu,
    Lhu,
    Lwu,
    Sb,
    Sh,
    Sw,
    Sd,
    Addi,
    Slti,
    Sltiu,
    Xori,
    Ori,
    Andi,
    Slli,
    Srli,
    Srai,
    Add,
    Sub,
    Sll,
    Slt,
    Sltu,
    Xor,
    Srl,
    Sra,
    Or,
    And,
    Addiw,
    Slliw,
    Srliw,
    Sraiw,
    Addw,
    Subw,
    Sllw,
    Srlw,
    Sraw,
    Fence,
    FenceI,
    Ecall,
    Ebreak,
    // Zicsr (§9.1); the CSR number is in `imm`.
    Csrrw,
    Csrrs,
    Csrrc,
    Csrrwi,
    Csrrsi,
    Csrrci,
    // M (§7).
    Mul,
    Mulh,
    Mulhsu,
    Mulhu,
    Div,
    Divu,
    Rem,
    Remu,
    Mulw,
    Divw,
    Divuw,
    Remw,
    Remuw,
    // Zba, address generation (Bit-Manipulation ISA-extensions 1.0.0,
    // §1.4.1; each instruction's page in §1.5): `zext.w` is `add.uw` with
    // rs2 = x0.
    Sh1add,
    Sh2add,
    Sh3add,
    AddUw,
    Sh1addUw,
    Sh2addUw,
    Sh3addUw,
    SlliUw,
    // Zbb, basic bit manipulation (§1.4.2).
    Andn,
    Orn,
    Xnor,
    Clz,
    Clzw,
    Ctz,
    Ctzw,
    Cpop,
    Cpopw,
    Max,
    Maxu,
    Min,
    Minu,
    SextB,
    SextH,
    ZextH,
    Rol,
    Rolw,
    Ror,
    Rori,
    Roriw,
    Rorw,
    OrcB,
    Rev8,
    // Zbc, carry-less multiplication (§1.4.3).
    Clmul,
    Clmulh,
    Clmulr,
    // Zbs, single-bit instructions (§1.4.4).
    Bclr,
    Bclri,
    Bext,
    Bexti,
    Binv,
    Binvi,
    Bset,
    Bseti,
    // A (§8).
    LrW,
    ScW,
    LrD,
    ScD,
    AmoswapW,
    AmoaddW,
    AmoxorW,
    AmoandW,
    AmoorW,
    AmominW,
    AmomaxW,
    AmominuW,
    AmomaxuW,
    AmoswapD,
    AmoaddD,
    AmoxorD,
    AmoandD,
    AmoorD,
    AmominD,
    AmomaxD,
    AmominuD,
    AmomaxuD,
    // F and D (§11, §12). `rm` holds the rounding-mode field.
    Flw,
    Fld,
    Fsw,
    Fsd,
    FmaddS,
    FmsubS,
    FnmsubS,
    FnmaddS,
    FmaddD,
    FmsubD,
    FnmsubD,
    FnmaddD,
    FaddS,
    FsubS,
    FmulS,
    FdivS,
    FsqrtS,
    FsgnjS,
    FsgnjnS,
    FsgnjxS,
    FminS,
    FmaxS,
    FcvtWS,
    FcvtWuS,
    FcvtLS,
    FcvtLuS,
    FmvXW,
    FclassS,
    FeqS,
    FltS,
    FleS,
    FcvtSW,
    FcvtSWu,
    FcvtSL,
    FcvtSLu,
    FmvWX,
    FaddD,
    FsubD,
    FmulD,
    FdivD,
    FsqrtD,
    FsgnjD,
    FsgnjnD,
    FsgnjxD,
    FminD,
    FmaxD,
    FcvtWD,
    FcvtWuD,
    FcvtLD,
    FcvtLuD,
    FmvXD,
    FclassD,
    FeqD,
    FltD,
    FleD,
    FcvtDW,
    FcvtDWu,
    FcvtDL,
    FcvtDLu,
    FmvDX,
    FcvtSD,
    FcvtDS,
    /// Not a valid encoding of RV64GC, Zba, Zbb, Zbc or Zbs; `imm` holds the
    /// raw bits. Executing it raises an illegal-instruction exception
    /// (SIGILL).
    Illegal,
    /// The instruction could not be fetched (no execute permission or
    /// unmapped); `imm` holds the address that failed.
    FetchFault,
}

/// A pattern of every op of Zba, Zbb, Zbc and Zbs: integer ops of one or two
/// registers or a register and a shift amount, whose results
/// [`bit_op`](crate::bitmanip::bit_op) computes.
macro_rules! bit_manip {
    () => {
        $crate::op::Kind::Sh1add
            | $crate::op::Kind::Sh2add
            | $crate::op::Kind::Sh3add
            | $crate::op::Kind::AddUw
            | $crate::op::Kind::Sh1addUw
            | $crate::op::Kind::Sh2addUw
            | $crate::op::Kind::Sh3addUw
            | $crate::op::Kind::SlliUw
            | $crate::op::Kind::Andn
            | $crate::op::Kind::Orn
            | $crate::op::Kind::Xnor
            | $crate::op::Kind::Clz
            | $crate::op::Kind::Clzw
            | $crate::op::Kind::Ctz
            | $crate::op::Kind::Ctzw
            | $crate::op::Kind::Cpop
            | $crate::op::Kind::Cpopw
            | $crate::op::Kind::Max
            | $crate::op::Kind::Maxu
            | $crate::op::Kind::Min
            | $crate::op::Kind::Minu
            | $crate::op::Kind::SextB
            | $crate::op::Kind::SextH
            | $crate::op::Kind::ZextH
            | $crate::op::Kind::Rol
            | $crate::op::Kind::Rolw
            | $crate::op::Kind::Ror
            | $crate::op::Kind::Rori
            | $crate::op::Kind::Roriw
            | $crate::op::Kind::Rorw
            | $crate::op::Kind::OrcB
            | $crate::op::Kind::Rev8
            | $crate::op::Kind::Clmul
            | $crate::op::Kind::Clmulh
            | $crate::op::Kind::Clmulr
            | $crate::op::Kind::Bclr
            | $crate::op::Kind::Bclri
            | $crate::op::Kind::Bext
            | $crate::op::Kind::Bexti
            | $crate::op::Kind::Binv
            | $crate::op::Kind::Binvi
            | $crate::op::Kind::Bset
            | $crate::op::Kind::Bseti
    };
}
pub(crate) use bit_manip;

/// A pattern of every F and D op that computes (§11, §12): all of the
/// two extensions but their loads and stores, which
/// [`exec_float`](crate::cpu::exec_float) runs.
macro_rules! float_compute {
    () => {
        $crate::op::Kind::FmaddS
            | $crate::op::Kind::FmsubS
            | $crate::op::Kind::FnmsubS
            | $crate::op::Kind::FnmaddS
            | $crate::op::Kind::FmaddD
            | $crate::op::Kind::FmsubD
            | $crate::op::Kind::FnmsubD
            | $crate::op::Kind::FnmaddD
            | $crate::op::Kind::FaddS
            | $crate::op::Kind::FsubS
            | $crate::op::Kind::FmulS
            | $crate::op::Kind::FdivS
            | $crate::op::Kind::FsqrtS
            | $crate::op::Kind::FsgnjS
            | $crate::op::Kind::FsgnjnS
            | $crate::op::Kind::FsgnjxS
            | $crate::op::Kind::FminS
            | $crate::op::Kind::FmaxS
            | $crate::op::Kind::FcvtWS
            | $crate::op::Kind::FcvtWuS
            | $crate::op::Kind::FcvtLS
            | $crate::op::Kind::FcvtLuS
            | $crate::op::Kind::FmvXW
            | $crate::op::Kind::FclassS
            | $crate::op::Kind::FeqS
            | $crate::op::Kind::FltS
            | $crate::op::Kind::FleS
            | $crate::op::Kind::FcvtSW
            | $crate::op::Kind::FcvtSWu
            | $crate::op::Kind::FcvtSL
            | $crate::op::Kind::FcvtSLu
            | $crate::op::Kind::FmvWX
            | $crate::op::Kind::FaddD
            | $crate::op::Kind::FsubD
            | $crate::op::Kind::FmulD
            | $crate::op::Kind::FdivD
            | $crate::op::Kind::FsqrtD
            | $crate::op::Kind::FsgnjD
            | $crate::op::Kind::FsgnjnD
            | $crate::op::Kind::FsgnjxD
            | $crate::op::Kind::FminD
            | $crate::op::Kind::FmaxD
            | $crate::op::Kind::FcvtWD
            | $crate::op::Kind::FcvtWuD
            | $crate::op::Kind::FcvtLD
            | $crate::op::Kind::FcvtLuD
            | $crate::op::Kind::FmvXD
            | $crate::op::Kind::FclassD
            | $crate::op::Kind::FeqD
            | $crate::op::Kind::FltD
            | $crate::op::Kind::FleD
            | $crate::op::Kind::FcvtDW
            | $crate::op::Kind::FcvtDWu
            | $crate::op::Kind::FcvtDL
            | $crate::op::Kind::FcvtDLu
            | $crate::op::Kind::FmvDX
            | $crate::op::Kind::FcvtSD
            | $crate::op::Kind::FcvtDS
    };
}
pub(crate) use float_compute;

/// The classes whose instructions may report themselves after they
/// execute, with an [`Emit`] other than [`Emit::Own`]: integer, multiply
/// and floating-point results, system instructions, and illegal ones
/// (`Other`). Loads, stores, branches and jumps build their events in
/// their own arms of the interpreter. When a sink wants none of these
/// classes, the interpreter is compiled without the test after each
/// instruction that would build such an event.
pub const TAIL_CLASSES: ClassSet = ClassSet::of(Class::IntAlu)
    .with(Class::MulDiv)
    .with(Class::Float)
    .with(Class::System)
    .with(Class::Other);

/// How the interpreter reports an instruction to the event stream.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub enum Emit {
    /// The execution arm builds the event itself (loads, stores, control).
    Own,
    /// An event with the integer destination register as its value.
    IntDest,
    /// An event with the floating-point destination register as its value.
    FloatDest,
    /// An event without a value (fences, ecall, stores of CSRs to x0).
    NoValue,
}

/// One pre-decoded instruction.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Op {
    /// Address of the instruction.
    pub pc: u64,
    /// Immediate, branch target, folded constant or CSR number.
    pub imm: i64,
    /// The opcode.
    pub kind: Kind,
    /// Destination register (integer or float by `kind`); x0 is [`ZERO_SINK`].
    pub rd: u8,
    /// First source register.
    pub rs1: u8,
    /// Second source register.
    pub rs2: u8,
    /// Third source register (fused multiply-add).
    pub rs3: u8,
    /// Rounding-mode field of F/D instructions (7 = dynamic).
    pub rm: u8,
    /// Length in bytes: 2 for compressed, 4 otherwise.
    pub len: u8,
    /// The instruction's class for the event stream.
    pub class: Class,
    /// How its event is built.
    pub emit: Emit,
}

impl Op {
    /// Address of the next instruction in program order.
    #[inline]
    pub fn next_pc(&self) -> u64 {
        self.pc.wrapping_add(self.len as u64)
    }

    /// Whether this instruction ends a pre-decoded block: control
    /// transfers, system instructions and anything that cannot execute.
    pub fn ends_block(&self) -> bool {
        use Kind::*;
        matches!(
            self.kind,
            Jal | Jalr
                | Beq
                | Bne
                | Blt
                | Bge
                | Bltu
                | Bgeu
                | FenceI
                | Ecall
                | Ebreak
                | Illegal
                | FetchFault
        )
    }
}
