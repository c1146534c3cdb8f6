//! The instruction at a PC as bytes and assembly text, for annotated
//! listings in the manner of DCPI's `dcpilist` (Anderson et al., SOSP
//! 1997, §2: each instruction printed beside its source line and samples).
//!
//! RISC-V uses coprof-rv's own decoder and disassembler (the same text the
//! simulator prints in its errors); x86-64 uses `iced-x86` in GNU (AT&T)
//! syntax, the syntax of `objdump -d` and gdb on Linux.

use crate::arch::Arch;
use object::{Object, ObjectSection, SectionKind};
use serde::Serialize;

/// One decoded instruction.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Disassembly {
    /// Its address.
    pub pc: u64,
    /// Its encoding, in memory order.
    pub bytes: Vec<u8>,
    /// Assembly text (`addi a0, a0, 1`, `add %esi,%eax`).
    pub text: String,
    /// The address the instruction names, where its encoding fixes one:
    /// a direct branch's or call's target, or the address an x86-64
    /// RIP-relative operand reads or writes (`objdump -d` prints it as a
    /// `# 0x4010a0` comment). [`Symbolizer::disassemble`] names it.
    ///
    /// [`Symbolizer::disassemble`]: crate::Symbolizer::disassemble
    #[serde(skip_serializing_if = "Option::is_none")]
    pub target: Option<u64>,
}

impl Disassembly {
    /// Gives the instruction the address its operand reaches through a
    /// register (x86-64's `%rip`, a RISC-V base register): its target,
    /// and a comment at the end of its text, `# 0x7f0c0`, as `objdump -d`
    /// writes it.
    pub fn with_address(&mut self, address: u64) {
        self.target = Some(address);
        self.text.push_str(&format!(" # {address:#x}"));
    }
}

/// The executable sections' bytes, by address.
#[derive(Default)]
pub struct Code {
    sections: Vec<(u64, Vec<u8>)>,
}

impl Code {
    /// Copies the code sections of `file`.
    pub fn from_object(file: &object::File<'_>) -> Code {
        let mut sections: Vec<(u64, Vec<u8>)> = file
            .sections()
            .filter(|s| s.kind() == SectionKind::Text && s.size() > 0)
            .filter_map(|s| Some((s.address(), s.data().ok()?.to_vec())))
            .collect();
        sections.sort_by_key(|s| s.0);
        Code { sections }
    }

    /// The code bytes from `pc` to the end of its section.
    pub fn at(&self, pc: u64) -> Option<&[u8]> {
        let i = self
            .sections
            .partition_point(|s| s.0 <= pc)
            .checked_sub(1)?;
        let (start, data) = &self.sections[i];
        let off = usize::try_from(pc - start).ok()?;
        (off < data.len()).then(|| &data[off..])
    }

    /// The address ranges `[start, end)` of the code sections.
    pub fn ranges(&self) -> impl Iterator<Item = (u64, u64)> + '_ {
        self.sections
            .iter()
            .map(|(a, d)| (*a, a.saturating_add(d.len() as u64)))
    }

    /// Bytes held.
    pub fn bytes(&self) -> usize {
        self.sections.iter().map(|s| s.1.capacity()).sum()
    }
}

/// Decodes the instruction at the start of `code` (which sits at `pc`).
/// `None` for an architecture without a disassembler here, or when the
/// bytes end mid-instruction.
pub fn disassemble(arch: &Arch, pc: u64, code: &[u8]) -> Option<Disassembly> {
    match arch {
        Arch::Riscv64 => riscv(pc, code),
        Arch::X86_64 => x86_64(pc, code),
        Arch::Other(_) => None,
    }
}

/// The length in bytes of the instruction at the start of `code`, without
/// formatting it: `None` for an architecture without a decoder here, when
/// the bytes end mid-instruction, or for bytes that are no instruction
/// (x86-64).
pub fn instruction_length(arch: &Arch, code: &[u8]) -> Option<usize> {
    match arch {
        Arch::Riscv64 => {
            let low = u16::from_le_bytes([*code.first()?, *code.get(1)?]);
            let len = coprof_rv::decode::length(low) as usize;
            (code.len() >= len).then_some(len)
        }
        Arch::X86_64 => x86_decode(0, code).map(|insn| insn.len()),
        Arch::Other(_) => None,
    }
}

/// Whether the instruction at the start of `code` (at `pc`) loads a code
/// address: x86-64's `ret`, which reads its return address from the
/// stack, or a RISC-V load into `ra` (x1), the return-address register
/// of the calling convention, which a function that saved it reloads
/// before it returns.
pub fn loads_code_address(arch: &Arch, pc: u64, code: &[u8]) -> bool {
    match arch {
        Arch::Riscv64 => riscv_decode(pc, code).is_some_and(|(op, _)| {
            op.rd == 1 && matches!(op.kind, coprof_rv::op::Kind::Ld | coprof_rv::op::Kind::Lw)
        }),
        Arch::X86_64 => {
            x86_decode(pc, code).is_some_and(|insn| insn.mnemonic() == iced_x86::Mnemonic::Ret)
        }
        Arch::Other(_) => false,
    }
}

/// The x86-64 instruction at the start of `code` (at `pc`), decoded; no
/// text is made. `None` when the bytes are no instruction or end inside
/// one.
fn x86_decode(pc: u64, code: &[u8]) -> Option<iced_x86::Instruction> {
    use iced_x86::{Decoder, DecoderOptions};
    let window = &code[..code.len().min(15)];
    let insn = Decoder::with_ip(64, window, pc, DecoderOptions::NONE).decode();
    (!insn.is_invalid()).then_some(insn)
}

fn riscv(pc: u64, code: &[u8]) -> Option<Disassembly> {
    let (op, len) = riscv_decode(pc, code)?;
    // frm 0 (round to nearest): the static encoding is what a listing shows.
    let text = coprof_rv::disasm::disassemble(&op, 0);
    // The decoder resolves a direct jump's or branch's offset to its
    // address, which the text shows.
    use coprof_rv::op::Kind::*;
    let target =
        matches!(op.kind, Jal | Beq | Bne | Blt | Bge | Bltu | Bgeu).then_some(op.imm as u64);
    Some(Disassembly {
        pc,
        bytes: code[..len].to_vec(),
        text,
        target,
    })
}

/// The RISC-V instruction at the start of `code` (at `pc`), decoded, and
/// its length in bytes; no text is made.
pub(crate) fn riscv_decode(pc: u64, code: &[u8]) -> Option<(coprof_rv::op::Op, usize)> {
    let len = instruction_length(&Arch::Riscv64, code)?;
    let mut raw = [0u8; 4];
    raw[..len].copy_from_slice(&code[..len]);
    Some((coprof_rv::decode::decode(u32::from_le_bytes(raw), pc), len))
}

fn x86_64(pc: u64, code: &[u8]) -> Option<Disassembly> {
    use iced_x86::{Decoder, DecoderOptions, Formatter, GasFormatter, Instruction, OpKind};
    let window = &code[..code.len().min(15)];
    let mut decoder = Decoder::with_ip(64, window, pc, DecoderOptions::NONE);
    let mut insn = Instruction::default();
    decoder.decode_out(&mut insn);
    if insn.is_invalid() {
        // Too few bytes left is not "bad": the section ends mid-instruction.
        if decoder.last_error() == iced_x86::DecoderError::NoMoreBytes {
            return None;
        }
        return Some(Disassembly {
            pc,
            bytes: window[..1].to_vec(),
            text: "(bad)".into(),
            target: None,
        });
    }
    let mut text = String::new();
    let mut fmt = GasFormatter::new();
    // objdump's look: `call 0x401010`, `mov $0x1f,%eax`.
    let opts = fmt.options_mut();
    opts.set_space_after_operand_separator(false);
    opts.set_branch_leading_zeros(false);
    opts.set_uppercase_hex(false);
    opts.set_small_hex_numbers_in_decimal(false);
    // A RIP-relative operand as objdump prints it, `0x2f3e(%rip)` and the
    // address in a comment: iced's default, the address alone
    // (`mov 0x19068,%esi`), reads in AT&T syntax as an absolute address,
    // another encoding.
    opts.set_rip_relative_addresses(true);
    fmt.format(&insn, &mut text);
    let target = match insn.op0_kind() {
        OpKind::NearBranch16 | OpKind::NearBranch32 | OpKind::NearBranch64 => {
            Some(insn.near_branch_target())
        }
        _ => None,
    };
    let mut d = Disassembly {
        pc,
        bytes: window[..insn.len()].to_vec(),
        text,
        target,
    };
    if insn.is_ip_rel_memory_operand() {
        d.with_address(insn.ip_rel_memory_address());
    }
    Some(d)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn riscv_known_encodings() {
        // addi a0, a0, 1 = 0x00150513; c.addi a0, 1 = 0x0505.
        let d = disassemble(&Arch::Riscv64, 0x1000, &[0x13, 0x05, 0x15, 0x00]).unwrap();
        assert_eq!(d.text, "addi a0, a0, 1");
        assert_eq!(d.bytes.len(), 4);
        let c = disassemble(&Arch::Riscv64, 0x1000, &[0x05, 0x05, 0xff, 0xff]).unwrap();
        assert_eq!(c.bytes, vec![0x05, 0x05]);
        assert_eq!(c.text, "addi a0, a0, 1");
        assert_eq!(c.target, None);
        // jal ra, +16 (0x010000ef): its target is the address it shows.
        let jal = disassemble(&Arch::Riscv64, 0x1000, &[0xef, 0x00, 0x00, 0x01]).unwrap();
        assert_eq!(jal.text, "jal ra, 0x1010");
        assert_eq!(jal.target, Some(0x1010));
        assert!(disassemble(&Arch::Riscv64, 0x1000, &[0x13, 0x05, 0x15]).is_none());
    }

    #[test]
    fn return_address_loads() {
        let rv = Arch::Riscv64;
        // ld ra, 24(sp) = 0x01813083; c.ldsp ra, 8(sp) = 0x60a2.
        assert!(loads_code_address(&rv, 0, &0x0181_3083u32.to_le_bytes()));
        assert!(loads_code_address(&rv, 0, &0x60a2u16.to_le_bytes()));
        // ld a5, 24(sp) = 0x01813783: a value, not a return address.
        assert!(!loads_code_address(&rv, 0, &0x0181_3783u32.to_le_bytes()));
        let x86 = Arch::X86_64;
        assert!(loads_code_address(&x86, 0, &[0xc3]));
        // mov (%rax),%esi
        assert!(!loads_code_address(&x86, 0, &[0x8b, 0x30]));
    }

    #[test]
    fn x86_known_encodings() {
        // 01 f0 = add %esi,%eax; c3 = ret.
        let d = disassemble(&Arch::X86_64, 0x401000, &[0x01, 0xf0, 0xc3]).unwrap();
        assert_eq!(d.text, "add %esi,%eax");
        assert_eq!(d.bytes, vec![0x01, 0xf0]);
        let r = disassemble(&Arch::X86_64, 0x401000, &[0xc3]).unwrap();
        assert_eq!(r.text, "ret");
        // e8 rel32 = call, target relative to the next instruction.
        let call = disassemble(&Arch::X86_64, 0x401000, &[0xe8, 0x0b, 0, 0, 0]).unwrap();
        assert_eq!(call.text, "call 0x401010");
        assert_eq!(call.target, Some(0x401010));
        // 8b 05 disp32 = mov from RIP + disp32, RIP being the next
        // instruction's address: objdump's form, not an absolute address.
        let rip = disassemble(&Arch::X86_64, 0x401000, &[0x8b, 0x05, 0, 0x10, 0, 0]).unwrap();
        assert_eq!(rip.text, "mov 0x1000(%rip),%eax # 0x402006");
        assert_eq!(rip.target, Some(0x402006));
        assert_eq!(r.target, None);
        // b8 imm32 = mov $imm,%eax, hex in lower case as objdump prints it.
        let mov = disassemble(&Arch::X86_64, 0, &[0xb8, 0x1f, 0, 0, 0]).unwrap();
        assert_eq!(mov.text, "mov $0x1f,%eax");
        // 48 83 c7 04 = add $4 to %rdi: small numbers in hex too.
        let add = disassemble(&Arch::X86_64, 0, &[0x48, 0x83, 0xc7, 0x04]).unwrap();
        assert_eq!(add.text, "add $0x4,%rdi");
        assert!(disassemble(&Arch::X86_64, 0, &[0xe8, 0x0b]).is_none());
        assert!(disassemble(&Arch::Other("Arm".into()), 0, &[0; 4]).is_none());
    }
}
