//! Guest registers held in host registers while translations run.
//!
//! Six of the guest's integer registers live in six host registers from
//! the moment a translation is entered from the simulator's loop until
//! control goes back to it, across every translation linked on the way:
//! an op that reads or writes one of them does so in a register rather
//! than in [`Cpu::x`](crate::cpu::Cpu::x), so a loop whose counter or
//! pointer is one of them does not wait on a store and a load of it each
//! time round. Translations share the assignment, since they jump to one
//! another with the values live, as qemu's code keeps its globals in host
//! registers within a translation block (but here across linked blocks
//! too, since no block leaves the values anywhere else).
//!
//! The values go home to `Cpu::x` in the epilogue, on every way back to
//! the loop (the end of a block, a load or store that leaves to the
//! interpreter, a block with no room for its events), and around a call
//! of the interpreter's floating-point code, which reads and writes
//! `Cpu::x` itself and may change the host registers, all six of which
//! the System V convention leaves to the callee; the entry from the loop
//! loads them. Nothing else reads or writes the guest's registers while
//! a translation runs.
//!
//! The six are `a0` to `a5`, the registers GCC's RV64 code uses most at
//! run time: each instruction's register operands weighted by the times
//! it ran, in the bench's bzip2 (compressing and decompressing), zlib,
//! Lua, SQLite and Zstandard runs, `a5` comes first in each (16% to 32%
//! of the operands), and `a0` to `a5` make 54% to 70% of them; `sp` is
//! under 1% to 9%, `s0` 2% to 9% (docs/PERFORMANCE.md).

use iced_x86::code_asm::*;
use iced_x86::IcedError;

/// A guest register held in a host register: its number, and the host
/// register's 64- and 32-bit names.
#[derive(Clone, Copy)]
pub(super) struct Held {
    pub guest: u8,
    pub q: AsmRegister64,
    pub d: AsmRegister32,
}

/// The guest registers held, and where: host registers that no
/// translation uses otherwise (rax, rcx and rdx are its scratch; rbx and
/// r12 to r15 hold its context).
pub(super) const HELD: [Held; 6] = [
    Held {
        guest: 15,
        q: rsi,
        d: esi,
    },
    Held {
        guest: 14,
        q: rdi,
        d: edi,
    },
    Held {
        guest: 13,
        q: r8,
        d: r8d,
    },
    Held {
        guest: 12,
        q: r9,
        d: r9d,
    },
    Held {
        guest: 11,
        q: r10,
        d: r10d,
    },
    Held {
        guest: 10,
        q: r11,
        d: r11d,
    },
];

/// Per guest register (and the sink for writes to `x0`, 32), the index
/// of its entry in [`HELD`], or `NONE`.
const WHERE: [u8; 33] = {
    let mut w = [NONE; 33];
    let mut i = 0;
    while i < HELD.len() {
        w[HELD[i].guest as usize] = i as u8;
        i += 1;
    }
    w
};
const NONE: u8 = u8::MAX;

/// The host register that holds guest register `r`, if one does.
#[inline]
pub(super) fn held(r: u8) -> Option<Held> {
    match WHERE.get(r as usize) {
        Some(&i) if i != NONE => Some(HELD[i as usize]),
        _ => None,
    }
}

/// The guest register `r`'s home in `Cpu::x`, which rbx holds.
pub(super) fn home(r: u8) -> AsmMemoryOperand {
    qword_ptr(rbx + (r as i32) * 8)
}

/// The low word of `r`'s home.
pub(super) fn home32(r: u8) -> AsmMemoryOperand {
    dword_ptr(rbx + (r as i32) * 8)
}

/// `a.m(dst, x[r])`: an op whose second operand is a guest register, in
/// its host register or its home.
macro_rules! with_x {
    ($a:expr, $m:ident, $dst:expr, $r:expr) => {
        match $crate::jit::regs::held($r) {
            Some(h) => $a.$m($dst, h.q),
            None => $a.$m($dst, $crate::jit::regs::home($r)),
        }
    };
}

/// [`with_x!`] on the guest register's low word.
macro_rules! with_x32 {
    ($a:expr, $m:ident, $dst:expr, $r:expr) => {
        match $crate::jit::regs::held($r) {
            Some(h) => $a.$m($dst, h.d),
            None => $a.$m($dst, $crate::jit::regs::home32($r)),
        }
    };
}

/// `a.m(x[r])`: a one-operand op (`mul`, `imul`) on a guest register.
macro_rules! on_x {
    ($a:expr, $m:ident, $r:expr) => {
        match $crate::jit::regs::held($r) {
            Some(h) => $a.$m(h.q),
            None => $a.$m($crate::jit::regs::home($r)),
        }
    };
}

/// `dst = x[r]`.
pub(super) fn get(a: &mut CodeAssembler, dst: AsmRegister64, r: u8) -> Result<(), IcedError> {
    with_x!(a, mov, dst, r)
}

/// `dst = x[r]`'s low word, zero-extended.
pub(super) fn get32(a: &mut CodeAssembler, dst: AsmRegister32, r: u8) -> Result<(), IcedError> {
    with_x32!(a, mov, dst, r)
}

/// `dst = x[r]`'s low word, sign-extended.
pub(super) fn get_sx32(a: &mut CodeAssembler, dst: AsmRegister64, r: u8) -> Result<(), IcedError> {
    with_x32!(a, movsxd, dst, r)
}

/// `x[r] = src`.
pub(super) fn put(a: &mut CodeAssembler, r: u8, src: AsmRegister64) -> Result<(), IcedError> {
    match held(r) {
        Some(h) => a.mov(h.q, src),
        None => a.mov(home(r), src),
    }
}

/// Sends every held register home to `Cpu::x`: before control leaves the
/// translations, and before a call.
pub(super) fn store_all(a: &mut CodeAssembler) -> Result<(), IcedError> {
    for h in HELD {
        a.mov(home(h.guest), h.q)?;
    }
    Ok(())
}

/// Loads every held register from `Cpu::x`: on the entry from the loop,
/// and after a call.
pub(super) fn load_all(a: &mut CodeAssembler) -> Result<(), IcedError> {
    for h in HELD {
        a.mov(h.q, home(h.guest))?;
    }
    Ok(())
}

pub(super) use {on_x, with_x, with_x32};

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_held_register_has_one_host_register_of_its_own() {
        for (i, h) in HELD.iter().enumerate() {
            assert!((1..32).contains(&h.guest), "x0 and the sink are never held");
            assert_eq!(held(h.guest).map(|g| g.guest), Some(h.guest));
            for other in &HELD[i + 1..] {
                assert_ne!(h.guest, other.guest);
                assert_ne!(h.q, other.q);
            }
            for scratch in [rax, rbx, rcx, rdx, rsp, r12, r13, r14, r15] {
                assert_ne!(h.q, scratch, "x{} in a register the code uses", h.guest);
            }
        }
        assert!(held(0).is_none() && held(32).is_none() && held(200).is_none());
    }
}
