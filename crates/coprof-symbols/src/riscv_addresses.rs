//! The addresses RISC-V instructions reach through a register, worked out
//! as `objdump -d` works them out, for the disassembly's comments.
//!
//! A RISC-V instruction holds at most a 12-bit offset, so code reaches a
//! global in two instructions: `auipc a5, 0x70` puts the upper part,
//! relative to its own PC, in a register, and `ld a5, -1234(a5)` adds the
//! lower part (the medany code model, RISC-V ELF psABI, "Code Models"; `lui`
//! does the same for an absolute address in medlow). Small data is reached
//! in one, relative to `gp`, which holds `__global_pointer$`. The load's
//! text alone does not say what it reads; with the instructions before it
//! decoded in order from its function's start, the address is known, and
//! the symbol there names the data: `ld a5, -1234(a5) # 0x7f0c0 <table>`.
//!
//! What a register holds is known from an `auipc` or `lui` until anything
//! else writes the register, and is forgotten after an unconditional jump,
//! whose next instruction is reached from somewhere else. A compiler's
//! pair shares one path (the lower part's relocation names its `auipc`),
//! so this finds the address of every such pair in straight-line order.

use crate::disasm::riscv_decode;
use coprof_rv::op::{Kind, Op};

/// An address an instruction reaches through a register.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Reached {
    /// The address.
    pub address: u64,
    /// Whether its upper part came from `lui`, which also builds plain
    /// constants (`lui a7, 0x70000` for an ELF tag): then it may be no
    /// address at all. An `auipc`'s is relative to the PC, and so an
    /// address.
    pub absolute: bool,
}

/// `gp`, x3: the global pointer.
const GP: u8 = 3;

/// The registers whose values a walk over a function's instructions knows.
pub struct RiscvAddresses {
    /// The value of each integer register, where an `auipc` or `lui` set it,
    /// and whether `lui` did (x0 never; index 32 is where a decoded
    /// instruction without a destination names one).
    known: [Option<(u64, bool)>; 33],
    /// `__global_pointer$`, what the C library's start-up puts in `gp`.
    gp: Option<u64>,
}

impl RiscvAddresses {
    /// A walk from a function's first instruction, with `gp` holding
    /// `global_pointer` (the symbol `__global_pointer$`, when the program
    /// has one).
    pub fn new(global_pointer: Option<u64>) -> RiscvAddresses {
        RiscvAddresses {
            known: [None; 33],
            gp: global_pointer,
        }
    }

    /// Decodes the next instruction, at `pc` (the start of `code`), and
    /// returns its length in bytes and the address it reaches through a
    /// register this walk knows, if any (for its disassembly, see
    /// [`Disassembly::with_address`](crate::Disassembly::with_address)).
    pub fn next(&mut self, pc: u64, code: &[u8]) -> Option<(usize, Option<Reached>)> {
        let (op, len) = riscv_decode(pc, code)?;
        let reached = self.reached(&op);
        self.after(&op, &code[..len]);
        Some((len, reached))
    }

    /// The address `op` computes from its base register and offset, when
    /// the register's value is known.
    fn reached(&self, op: &Op) -> Option<Reached> {
        use Kind::*;
        let with_offset = matches!(
            op.kind,
            Lb | Lh
                | Lw
                | Ld
                | Lbu
                | Lhu
                | Lwu
                | Sb
                | Sh
                | Sw
                | Sd
                | Flw
                | Fld
                | Fsw
                | Fsd
                | Addi
                | Jalr
        );
        if !with_offset || op.rs1 == 0 {
            return None;
        }
        let (base, absolute) = match self.known[op.rs1 as usize] {
            Some(known) => known,
            // `gp` holds the global pointer once the start-up code has set
            // it, which it does from `gp` itself (`addi gp, gp, …` after
            // an `auipc gp`): no guess for an instruction that writes it.
            None if op.rs1 == GP && op.rd != GP => (self.gp?, false),
            None => return None,
        };
        Some(Reached {
            address: base.wrapping_add(op.imm as u64),
            absolute,
        })
    }

    /// What `op`, encoded as `bytes`, leaves known.
    fn after(&mut self, op: &Op, bytes: &[u8]) {
        let rd = usize::from(op.rd).min(32);
        // `Li` is how the decoder folds `auipc` and `lui`, and also `c.li`,
        // a small constant rather than the upper part of an address.
        let opcode = (bytes.len() == 4).then(|| bytes[0] & 0x7f);
        if op.kind == Kind::Li && matches!(opcode, Some(0x17 | 0x37)) && rd != 0 {
            self.known[rd] = Some((op.imm as u64, opcode == Some(0x37)));
            return;
        }
        // Written by anything else: unknown. A floating-point destination
        // is named by the same field; forgetting an integer register then
        // loses a comment, never makes a wrong one.
        self.known[rd] = None;
        let unconditional =
            matches!(op.kind, Kind::Jal | Kind::Jalr) && op.rd == coprof_rv::op::ZERO_SINK;
        if unconditional {
            self.known = [None; 33];
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Walks `words` (32-bit instructions) from 0x10000: each one's text
    /// with its address, and the address.
    fn walk(words: &[u32], gp: Option<u64>) -> Vec<(String, Option<u64>)> {
        let code: Vec<u8> = words.iter().flat_map(|w| w.to_le_bytes()).collect();
        let mut w = RiscvAddresses::new(gp);
        (0..words.len())
            .map(|i| {
                let (pc, code) = (0x10000 + 4 * i as u64, &code[4 * i..]);
                let (len, reached) = w.next(pc, code).unwrap();
                assert_eq!(len, 4);
                let mut d =
                    crate::disasm::disassemble(&crate::arch::Arch::Riscv64, pc, code).unwrap();
                if let Some(r) = reached {
                    d.with_address(r.address);
                }
                (d.text, reached.map(|r| r.address))
            })
            .collect()
    }

    #[test]
    fn an_auipc_pair_names_its_address() {
        // auipc a5, 0x2 (0x00002797); addi a0, a0, 1; ld a5, -8(a5) (0xff87b783).
        let d = walk(&[0x0000_2797, 0x0015_0513, 0xff87_b783], None);
        // auipc at 0x10000 + 0x2000 - 8.
        assert_eq!(d[2], ("ld a5, -8(a5) # 0x11ff8".into(), Some(0x11ff8)));
        assert_eq!(d[1].1, None);
    }

    #[test]
    fn one_upper_part_serves_every_use_until_written() {
        // auipc a5, 0x2; sw zero, 16(a5) (0x0007a823); addi a5, a5, 16
        // (0x01078793) names 0x12010 and writes a5; ld a4, 0(a5)
        // (0x0007b703) then knows nothing.
        let d = walk(&[0x0000_2797, 0x0007_a823, 0x0107_8793, 0x0007_b703], None);
        assert_eq!(d[1].1, Some(0x12010));
        assert_eq!(d[2].1, Some(0x12010));
        assert_eq!(d[3].1, None, "{}", d[3].0);
    }

    #[test]
    fn a_jump_forgets_every_register() {
        // auipc a5, 0x2; j +8 (0x0080006f); ld a5, -8(a5).
        let d = walk(&[0x0000_2797, 0x0080_006f, 0xff87_b783], None);
        assert_eq!(d[2].1, None);
    }

    #[test]
    fn gp_holds_the_global_pointer_once_set() {
        // sw zero, 912(gp) (0x3801a823).
        let d = walk(&[0x3801_a823], Some(0xc5d80));
        assert_eq!(d[0].1, Some(0xc5d80 + 912));
        assert_eq!(walk(&[0x3801_a823], None)[0].1, None);
        // The start-up's addi gp, gp, 1550 (0x60e18193): alone, gp is not
        // known yet; after auipc gp, 0x67 (0x00067197), it is the pair's.
        assert_eq!(walk(&[0x60e1_8193], Some(0xc5d80))[0].1, None);
        let set = walk(&[0x0006_7197, 0x60e1_8193], Some(0xc5d80));
        assert_eq!(set[1].1, Some(0x10000 + 0x67000 + 1550));
    }

    #[test]
    fn lui_marks_its_value_absolute_and_a_small_constant_is_none() {
        // lui a7, 0x70000 (0x700008b7); addi t0, a7, -513 (0xdff88293).
        let code: Vec<u8> = [0x7000_08b7u32, 0xdff8_8293]
            .iter()
            .flat_map(|w| w.to_le_bytes())
            .collect();
        let mut w = RiscvAddresses::new(None);
        w.next(0x10000, &code).unwrap();
        let (_, r) = w.next(0x10004, &code[4..]).unwrap();
        assert_eq!(
            r,
            Some(Reached {
                address: 0x6fff_fdff,
                absolute: true
            })
        );
        // c.li a5, 5 (0x4795) then ld a4, 0(a5): no address.
        let code = [0x95, 0x47, 0x03, 0xb7, 0x07, 0x00];
        let mut w = RiscvAddresses::new(None);
        w.next(0x10000, &code).unwrap();
        let (len, reached) = w.next(0x10002, &code[2..]).unwrap();
        assert_eq!((len, reached), (4, None));
        let ld = crate::disasm::disassemble(&crate::arch::Arch::Riscv64, 0x10002, &code[2..]);
        assert_eq!(ld.unwrap().text, "ld a4, 0(a5)");
    }
}
