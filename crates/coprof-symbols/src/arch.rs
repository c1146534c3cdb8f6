//! The instruction set of a symbolized binary: decides which disassembler
//! [`crate::Symbolizer::disassemble`] uses.

use serde::Serialize;

/// Instruction set of an ELF file, from its `e_machine` and class.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Arch {
    /// 64-bit RISC-V (the simulator's binaries).
    Riscv64,
    /// x86-64 (the native sampler's binaries).
    X86_64,
    /// Anything else: symbolized, but not disassembled. Holds the name
    /// `object` gives the machine.
    Other(String),
}

impl Arch {
    pub(crate) fn from_object(a: object::Architecture) -> Arch {
        match a {
            object::Architecture::Riscv64 => Arch::Riscv64,
            object::Architecture::X86_64 => Arch::X86_64,
            other => Arch::Other(format!("{other:?}")),
        }
    }

    /// Short name: `riscv64`, `x86_64` or the other machine's name.
    pub fn name(&self) -> &str {
        match self {
            Arch::Riscv64 => "riscv64",
            Arch::X86_64 => "x86_64",
            Arch::Other(s) => s,
        }
    }
}

impl std::fmt::Display for Arch {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}
