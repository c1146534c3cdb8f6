//! A sample as an event: the instruction at the interrupted PC decoded,
//! its class, and for a load the address it reads and the value there.
//!
//! The thread stopped before the instruction at its PC ran, so the value
//! in memory now is the one the load is about to read (DCPI, Burrows et
//! al., ASPLOS 2000, §2: a value profile from the registers and memory at
//! the interrupt). Another thread may write it before the load runs, as
//! on the hardware.

use coprof_core::{Class, Event};
use iced_x86::{
    Decoder, DecoderOptions, FlowControl, Instruction, InstructionInfoFactory, Mnemonic, OpAccess,
    Register,
};

/// The longest x86-64 instruction.
pub const MAX_LEN: usize = 15;

/// The registers of a stopped thread that addresses are made of.
pub struct Regs<'a>(pub &'a libc::user_regs_struct);

impl Regs<'_> {
    /// The value of `reg` (a segment register: its base), if an address
    /// can use it.
    fn value(&self, reg: Register) -> Option<u64> {
        let r = self.0;
        let full = match reg.full_register() {
            Register::RAX => r.rax,
            Register::RBX => r.rbx,
            Register::RCX => r.rcx,
            Register::RDX => r.rdx,
            Register::RSI => r.rsi,
            Register::RDI => r.rdi,
            Register::RBP => r.rbp,
            Register::RSP => r.rsp,
            Register::R8 => r.r8,
            Register::R9 => r.r9,
            Register::R10 => r.r10,
            Register::R11 => r.r11,
            Register::R12 => r.r12,
            Register::R13 => r.r13,
            Register::R14 => r.r14,
            Register::R15 => r.r15,
            Register::RIP => r.rip,
            Register::FS => r.fs_base,
            Register::GS => r.gs_base,
            Register::ES | Register::CS | Register::SS | Register::DS => 0,
            _ => return None,
        };
        let bits = reg.size() * 8;
        Some(if bits >= 64 || reg.is_segment_register() {
            full
        } else {
            full & ((1u64 << bits) - 1)
        })
    }
}

/// What a sample found at a PC.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Decoded {
    /// The instruction's class.
    pub class: Class,
    /// For an instruction that reads memory: the address and the bytes
    /// read (at most 8 of them count for the value).
    pub read: Option<(u64, usize)>,
    /// For one that writes memory only: the address and size.
    pub write: Option<(u64, usize)>,
    /// Its length in bytes.
    pub len: usize,
    /// Whether it always passes to the instruction after it (not a
    /// branch, call, return or interrupt).
    pub falls_through: bool,
}

/// Decodes the instruction in `code` (read at `pc`) for a thread with
/// `regs`. `None` when the bytes are no instruction.
pub fn decode(code: &[u8], pc: u64, regs: &Regs<'_>) -> Option<Decoded> {
    let mut decoder = Decoder::with_ip(64, code, pc, DecoderOptions::NONE);
    let mut instr = Instruction::default();
    decoder.decode_out(&mut instr);
    if instr.is_invalid() {
        return None;
    }
    let mut factory = InstructionInfoFactory::new();
    let info = factory.info(&instr);
    let mut read = None;
    let mut write = None;
    for m in info.used_memory() {
        let size = m.memory_size().size();
        if size == 0 {
            continue;
        }
        let Some(addr) = m.virtual_address(0, |reg, _, _| regs.value(reg)) else {
            continue;
        };
        match m.access() {
            OpAccess::Read | OpAccess::CondRead | OpAccess::ReadWrite | OpAccess::ReadCondWrite
                if read.is_none() =>
            {
                read = Some((addr, size));
            }
            OpAccess::Write | OpAccess::CondWrite if write.is_none() => write = Some((addr, size)),
            _ => {}
        }
    }
    Some(Decoded {
        class: class_of(&instr, read.is_some(), write.is_some()),
        read,
        write: if read.is_some() { None } else { write },
        len: instr.len(),
        falls_through: instr.flow_control() == FlowControl::Next,
    })
}

/// The class of `instr`: control flow first, then a memory read, a write,
/// and the kind of arithmetic.
fn class_of(instr: &Instruction, reads: bool, writes: bool) -> Class {
    if matches!(
        instr.mnemonic(),
        Mnemonic::Syscall | Mnemonic::Cpuid | Mnemonic::Rdtsc
    ) {
        return Class::System;
    }
    match instr.flow_control() {
        FlowControl::ConditionalBranch => return Class::CondBranch,
        FlowControl::UnconditionalBranch | FlowControl::IndirectBranch => return Class::Jump,
        FlowControl::Call | FlowControl::IndirectCall => return Class::Call,
        FlowControl::Return => return Class::Return,
        FlowControl::Interrupt | FlowControl::Exception | FlowControl::XbeginXabortXend => {
            return Class::System
        }
        FlowControl::Next => {}
    }
    if reads {
        return Class::Load;
    }
    if writes {
        return Class::Store;
    }
    match instr.mnemonic() {
        Mnemonic::Mul | Mnemonic::Imul | Mnemonic::Div | Mnemonic::Idiv => Class::MulDiv,
        _ if (0..instr.op_count()).any(|i| {
            let r = instr.op_register(i);
            instr.op_kind(i) == iced_x86::OpKind::Register
                && (r.is_xmm() || r.is_ymm() || r.is_zmm() || r.is_st())
        }) =>
        {
            Class::Float
        }
        _ => Class::IntAlu,
    }
}

/// The event of a sample at `pc`: a load with its value read from
/// `memory` (the first `min(size, 8)` bytes, little-endian) when the
/// instruction reads memory, else an event of its class with the address
/// it writes, if any.
pub fn event(pc: u64, d: &Decoded, memory: impl FnOnce(u64, usize) -> Option<u64>) -> Event {
    if let Some((addr, size)) = d.read {
        let value = memory(addr, size.min(8)).unwrap_or(0);
        return Event::load(pc, addr, size.min(16) as u8, value);
    }
    let mut e = Event::new(pc, d.class);
    if let Some((addr, size)) = d.write {
        e.addr = addr;
        e.size = size.min(16) as u8;
    }
    e
}

#[cfg(test)]
mod tests {
    use super::*;

    fn regs() -> libc::user_regs_struct {
        // SAFETY: plain data, all zero.
        let mut r: libc::user_regs_struct = unsafe { std::mem::zeroed() };
        r.rax = 0x1000;
        r.rbx = 0xffff_ffff_0000_0008;
        r.rcx = 3;
        r.fs_base = 0x7000_0000;
        r
    }

    #[test]
    fn a_load_reads_where_its_registers_point() {
        let r = regs();
        // mov rdx, [rax + rcx*8 + 0x10]
        let d = decode(&[0x48, 0x8b, 0x54, 0xc8, 0x10], 0x401000, &Regs(&r)).unwrap();
        assert_eq!(d.class, Class::Load);
        assert_eq!(d.read, Some((0x1000 + 3 * 8 + 0x10, 8)));
        // movzx eax, byte ptr [rbx]: the 64-bit base, a one-byte read.
        let d = decode(&[0x0f, 0xb6, 0x03], 0x401000, &Regs(&r)).unwrap();
        assert_eq!(d.read, Some((0xffff_ffff_0000_0008, 1)));
        // mov rax, fs:[0x28]: the segment's base.
        let d = decode(&[0x64, 0x48, 0x8b, 0x04, 0x25, 0x28, 0, 0, 0], 0, &Regs(&r)).unwrap();
        assert_eq!(d.read, Some((0x7000_0028, 8)));
        // mov eax, [rip + 0x100]: from the next instruction.
        let d = decode(&[0x8b, 0x05, 0, 1, 0, 0], 0x401000, &Regs(&r)).unwrap();
        assert_eq!(d.read, Some((0x401006 + 0x100, 4)));
        // add [rax], ecx reads and writes: a load.
        let d = decode(&[0x01, 0x08], 0, &Regs(&r)).unwrap();
        assert_eq!((d.class, d.read), (Class::Load, Some((0x1000, 4))));
    }

    #[test]
    fn other_instructions_have_their_class() {
        let r = regs();
        let class = |code: &[u8]| decode(code, 0x1000, &Regs(&r)).unwrap().class;
        assert_eq!(class(&[0x89, 0x08]), Class::Store); // mov [rax], ecx
        assert_eq!(class(&[0x74, 0x02]), Class::CondBranch); // je
        assert_eq!(class(&[0xeb, 0x02]), Class::Jump); // jmp
        assert_eq!(class(&[0xe8, 0, 0, 0, 0]), Class::Call); // call
        assert_eq!(class(&[0xc3]), Class::Return); // ret
        assert_eq!(class(&[0x0f, 0x05]), Class::System); // syscall
        assert_eq!(class(&[0x48, 0x01, 0xc8]), Class::IntAlu); // add rax, rcx
        assert_eq!(class(&[0x48, 0x0f, 0xaf, 0xc1]), Class::MulDiv); // imul rax, rcx
        assert_eq!(class(&[0xf2, 0x0f, 0x58, 0xc1]), Class::Float); // addsd xmm0, xmm1
        let store = decode(&[0x89, 0x08], 0x1000, &Regs(&r)).unwrap();
        assert_eq!(store.write, Some((0x1000, 4)));
        assert_eq!(
            decode(&[0x0f, 0xff], 0, &Regs(&r)),
            None,
            "ud0 without its operand"
        );
    }

    #[test]
    fn a_loads_event_carries_the_value_in_memory() {
        let r = regs();
        let d = decode(&[0x48, 0x8b, 0x00], 0x401000, &Regs(&r)).unwrap(); // mov rax, [rax]
        let e = event(0x401000, &d, |addr, size| {
            assert_eq!((addr, size), (0x1000, 8));
            Some(42)
        });
        assert_eq!(
            (e.pc, e.class, e.addr, e.value, e.size),
            (0x401000, Class::Load, 0x1000, 42, 8)
        );
    }
}
